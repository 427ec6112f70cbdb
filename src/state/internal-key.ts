/**
 * Internal keys: the JS `Map` key under which a user key (a record key, or a MapState key) is
 * stored.
 *
 * The encoding is injective over everything {@link canonicalKey} accepts, so two keys share state
 * exactly when their canonical values are equal:
 * - numbers, booleans, bigints: themselves (`Map` compares them by value; `-0` and `0` are one key).
 * - strings: themselves, except that a string starting with U+0000 gets the prefix `"\0s"`.
 * - arrays, plain objects, null: `"\0c"` + their canonical string.
 * No plain string starts with U+0000 after this, so escaped strings and composites cannot collide
 * with plain strings or with each other.
 *
 * Cost: primitives are free (one `charCodeAt` for strings); composites allocate their canonical
 * string (the key-group hash computes it a second time, see {@link assignToKeyGroup}).
 */

import { KeyGroupOutOfRangeError } from '../errors.js';
import { assignToKeyGroup, canonicalKey, hashString, type KeyGroupRange } from './key-groups.js';

export function internalKeyOf(key: unknown, operator?: string): unknown {
  switch (typeof key) {
    case 'string':
      return key.length > 0 && key.charCodeAt(0) === 0 ? `\u0000s${key}` : key;
    case 'number':
      // canonicalKey rejects NaN with a KeyNotSerializableError.
      return Number.isNaN(key) ? canonicalKey(key, operator) : key;
    case 'boolean':
    case 'bigint':
      return key;
    default:
      return `\u0000c${canonicalKey(key, operator)}`;
  }
}

/** True when `internalKey` is not the user key itself (escaped string or composite). */
export function isEscapedKey(internalKey: unknown): internalKey is string {
  return typeof internalKey === 'string' && internalKey.length > 0 && internalKey.charCodeAt(0) === 0;
}

/** Short printable form of a key for error messages. */
export function describeKey(key: unknown): string {
  let s: string;
  try {
    s = typeof key === 'bigint' ? `${key}n` : typeof key === 'string' ? JSON.stringify(key) : String(key);
    if (typeof key === 'object' && key !== null) s = JSON.stringify(key) ?? s;
  } catch (err) {
    s = `<${typeof key}: ${(err as Error).message}>`;
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/**
 * Index (within `range`) of the key group `key` belongs to, for a keyed-state core's
 * `setCurrentKey`. Throws KeyNotSerializableError, or KeyGroupOutOfRangeError when this subtask
 * does not own the key's group.
 */
export function ownedGroupIndexOf(
  key: unknown,
  maxParallelism: number,
  range: KeyGroupRange,
  operatorName: string,
): number {
  const keyGroup = assignToKeyGroup(key, maxParallelism, operatorName);
  if (keyGroup < range.start || keyGroup > range.end) {
    throw new KeyGroupOutOfRangeError(keyGroup, range.start, range.end, describeKey(key));
  }
  return keyGroup - range.start;
}

/** The current-key fields of a keyed-state core. */
export interface CurrentKeyFields {
  currentKey: unknown;
  internalKey: unknown;
  /** Key group − range start; −1 while no key is set. */
  groupIndex: number;
}

/**
 * Makes `key` the current key of `target`: its internal key and its group index within `range`.
 * `groupIndex` is −1 first, so a throw (KeyNotSerializableError, KeyGroupOutOfRangeError) leaves
 * no key set. A string not starting with U+0000 — the common key — is resolved inline: it is its
 * own internal key and hashes as `hashKey` does (measured 47 → 33 ns per key switch); a group out
 * of range takes the general path, which throws.
 *
 * `knownKeyGroup` (≥ 0) is the key's group as the producer's hash partitioner computed it, carried
 * with the record in the channel (a `key-groups` frame): for a string or number key it replaces the
 * hash. Both ends compute `assignToKeyGroup` of the same key selector over equal values with the
 * same maxParallelism, so it is the group the hash would give. Composite keys ignore it and hash
 * (their canonical string is needed for the internal key anyway, and a decoded copy is where a
 * difference would show); a known group outside `range` also takes the hashing path.
 */
export function setCurrentKeyFields(
  target: CurrentKeyFields,
  key: unknown,
  maxParallelism: number,
  range: KeyGroupRange,
  operatorName: string,
  knownKeyGroup = -1,
): void {
  target.groupIndex = -1;
  if (typeof key === 'string' && (key.length === 0 || key.charCodeAt(0) !== 0)) {
    const keyGroup = knownKeyGroup >= 0 ? knownKeyGroup : hashString(key) % maxParallelism;
    if (keyGroup >= range.start && keyGroup <= range.end) {
      target.currentKey = key;
      target.internalKey = key;
      target.groupIndex = keyGroup - range.start;
      return;
    }
  }
  if (
    knownKeyGroup >= range.start &&
    knownKeyGroup <= range.end &&
    typeof key === 'number' &&
    !Number.isNaN(key)
  ) {
    target.currentKey = key;
    target.internalKey = key;
    target.groupIndex = knownKeyGroup - range.start;
    return;
  }
  const internalKey = internalKeyOf(key, operatorName);
  const groupIndex = ownedGroupIndexOf(key, maxParallelism, range, operatorName);
  target.currentKey = key;
  target.internalKey = internalKey;
  target.groupIndex = groupIndex;
}
