/**
 * Key groups: the unit of keyed-state ownership and of rescaling (Flink's KeyGroupRangeAssignment).
 *
 * A key maps to key group `hash(canonical(key)) mod maxParallelism`; subtask `i` of `p` owns the
 * contiguous range [ceil(i·m/p), ceil((i+1)·m/p) − 1]. The hash is a pure function of the key's
 * canonical value, so every thread and every run agree on it: snapshots organised by key group can
 * be restored at another parallelism.
 *
 * Cost: strings and numbers hash without allocating; arrays and plain objects are encoded to a
 * canonical string first (sorted object keys), which allocates.
 */

import { KeyNotSerializableError } from '../errors.js';

export const DEFAULT_MAX_PARALLELISM = 128;
/** Flink's upper bound for maxParallelism. */
export const UPPER_BOUND_MAX_PARALLELISM = 1 << 15;

export interface KeyGroupRange {
  /** First key group (inclusive). */
  readonly start: number;
  /** Last key group (inclusive); `end < start` means the range is empty. */
  readonly end: number;
}

const SEED_STRING = 0x9747b28c;
const SEED_NUMBER = 0x2f1c3a5b;
const SEED_BOOLEAN = 0x5bd1e995;
const SEED_BIGINT = 0x1b873593;
const SEED_COMPOSITE = 0x3c6ef372;

function mix(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function finalize(h: number, length: number): number {
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** murmur3-style 32-bit hash over UTF-16 code units of a string. */
export function hashString(s: string, seed = SEED_STRING): number {
  let h = seed;
  const n = s.length;
  let i = 0;
  for (; i + 1 < n; i += 2) h = mix(h, s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16));
  if (i < n) h = mix(h, s.charCodeAt(i));
  return finalize(h, n);
}

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

function hashNumber(n: number): number {
  // -0 and 0 are the same key; integers hash by value so 1 and 1.0 agree (they are the same number).
  f64[0] = n === 0 ? 0 : n;
  let h = mix(SEED_NUMBER, u32[0]);
  h = mix(h, u32[1]);
  return finalize(h, 8);
}

/**
 * Canonical string for composite keys: type-tagged, object keys sorted. Throws a
 * {@link KeyNotSerializableError} (operator name filled in by the caller) for values without one.
 */
export function canonicalKey(key: unknown, operator = 'keyBy', seen: unknown[] = []): string {
  switch (typeof key) {
    case 'string':
      return `s${JSON.stringify(key)}`;
    case 'number':
      if (Number.isNaN(key)) throw new KeyNotSerializableError(operator, 'NaN');
      return `n${key === 0 ? 0 : key}`;
    case 'boolean':
      return key ? 'T' : 'F';
    case 'bigint':
      return `b${key}`;
    case 'object': {
      if (key === null) return 'N';
      if (seen.includes(key)) throw new KeyNotSerializableError(operator, 'a cyclic object');
      seen.push(key);
      let out: string;
      if (Array.isArray(key)) {
        out = `[${key.map((k) => canonicalKey(k, operator, seen)).join(',')}]`;
      } else {
        const proto = Object.getPrototypeOf(key);
        if (proto !== Object.prototype && proto !== null) {
          const name = (key as object).constructor?.name ?? 'unknown class';
          throw new KeyNotSerializableError(operator, `an instance of ${name}`);
        }
        const entries = Object.keys(key as object)
          .sort()
          .map(
            (k) =>
              `${JSON.stringify(k)}:${canonicalKey((key as Record<string, unknown>)[k], operator, seen)}`,
          );
        out = `{${entries.join(',')}}`;
      }
      seen.pop();
      return out;
    }
    default:
      throw new KeyNotSerializableError(operator, `a ${typeof key}`);
  }
}

/** Stable 32-bit hash of a key's canonical value. Throws {@link KeyNotSerializableError}. */
export function hashKey(key: unknown, operator = 'keyBy'): number {
  switch (typeof key) {
    case 'string':
      return hashString(key);
    case 'number':
      if (Number.isNaN(key)) throw new KeyNotSerializableError(operator, 'NaN');
      return hashNumber(key);
    case 'boolean':
      return key ? SEED_BOOLEAN : finalize(SEED_BOOLEAN, 1);
    case 'bigint':
      return hashString(key.toString(), SEED_BIGINT);
    default:
      return hashString(canonicalKey(key, operator), SEED_COMPOSITE);
  }
}

export function assignToKeyGroup(key: unknown, maxParallelism: number, operator?: string): number {
  return hashKey(key, operator) % maxParallelism;
}

/** Index of the subtask (of `parallelism`) that owns `keyGroup`. Inverse of {@link keyGroupRangeFor}. */
export function operatorIndexForKeyGroup(
  maxParallelism: number,
  parallelism: number,
  keyGroup: number,
): number {
  return Math.floor((keyGroup * parallelism) / maxParallelism);
}

/** The contiguous key-group range that subtask `subtaskIndex` of `parallelism` owns. */
export function keyGroupRangeFor(
  maxParallelism: number,
  parallelism: number,
  subtaskIndex: number,
): KeyGroupRange {
  const start = Math.ceil((subtaskIndex * maxParallelism) / parallelism);
  const end = Math.ceil(((subtaskIndex + 1) * maxParallelism) / parallelism) - 1;
  return { start, end };
}

export function keyGroupRangeContains(range: KeyGroupRange, keyGroup: number): boolean {
  return keyGroup >= range.start && keyGroup <= range.end;
}
