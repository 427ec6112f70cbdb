/**
 * What msgpack must be told so that values arrive as they were sent: records on the rings'
 * msgpack path (record-codec.ts) and state in snapshots (heap and lmdb backends, operator state).
 *
 * - `Set`: msgpackr writes a Set as a plain array unless `moreTypes` is on (then it tags it).
 * - functions: msgpackr silently writes `undefined`; `writeFunction` throws
 *   {@link ValueNotSerializableError} instead, naming the subject.
 * - `-0`: msgpackr writes every integral number as an integer, so `-0` arrives as `0`, and it
 *   has no hook for numbers. {@link encodeNegativeZeros} replaces each `-0` with a sentinel that
 *   a msgpack extension writes as one tag and reads back as `-0`. It walks the value (O(size),
 *   ~1 ns per field) and copies only when it finds a `-0`, so values without one cost the walk.
 * - `Map`: kept on the records path (plain objects are msgpack records there, so a msgpack map
 *   can only be a Map). State is packed without records, where plain objects and Maps are both
 *   msgpack maps: there {@link encodeValue} with `tagMaps` wraps each Map in a sentinel that an
 *   extension (type 0x2e) reads back as a Map. `Date` needs nothing (a timestamp extension).
 *
 * The extension is registered in msgpackr's process-wide registry when this module loads: a
 * constant of the process (like a codec table), not mutable state. Type 0x2d ('-') is not used
 * by msgpackr itself.
 */

import { addExtension } from 'msgpackr';
import { ValueNotSerializableError } from '../errors.js';

/** Stands for `-0` in a value handed to msgpackr. */
class NegativeZero {}
const NEGATIVE_ZERO = new NegativeZero();
export const NEGATIVE_ZERO_EXTENSION_TYPE = 0x2d;

/** Stands for a Map in a value packed without records (state): its entries, read back as a Map. */
class TaggedMap {
  constructor(readonly entries: [unknown, unknown][]) {}
}
export const TAGGED_MAP_EXTENSION_TYPE = 0x2e;

addExtension({
  Class: NegativeZero,
  type: NEGATIVE_ZERO_EXTENSION_TYPE,
  write: () => 0,
  read: () => -0,
});
addExtension({
  Class: TaggedMap,
  type: TAGGED_MAP_EXTENSION_TYPE,
  write: (m: TaggedMap) => m.entries,
  read: (entries: [unknown, unknown][]) => new Map(entries),
});

/** Packr options that keep Sets and reject functions (the error names `subject`). */
export function msgpackValueOptions(subject: string): {
  readonly moreTypes: true;
  readonly writeFunction: () => never;
} {
  return {
    moreTypes: true,
    writeFunction: () => {
      throw new ValueNotSerializableError(subject, 'it holds a function');
    },
  };
}

/**
 * `value` itself when it holds no `-0` (nor, with `tagMaps`, a Map), else a copy (arrays, plain
 * objects, Maps, Sets) in which every `-0` is the extension's sentinel (and every Map a
 * {@link TaggedMap}). Other objects (Dates, typed arrays, class instances) are left as they are.
 */
export function encodeValue<T>(value: T, tagMaps = false): T {
  return needsEncoding(value, tagMaps) ? (replaceSpecial(value, tagMaps) as T) : value;
}

/** {@link encodeValue} for the records path (Maps need no tag there). */
export function encodeNegativeZeros<T>(value: T): T {
  return encodeValue(value, false);
}

/**
 * The walk every value pays: no allocation, primitives tested inline (a call per nested object
 * only), so a small record costs a few ns.
 */
function needsEncoding(value: unknown, tagMaps: boolean): boolean {
  if (typeof value !== 'object' || value === null) return value === 0 && 1 / (value as number) < 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v === 'object' ? v !== null && needsEncoding(v, tagMaps) : v === 0 && 1 / v < 0) return true;
    }
    return false;
  }
  if (value instanceof Map) {
    if (tagMaps) return true;
    for (const [k, v] of value) if (needsEncoding(k, tagMaps) || needsEncoding(v, tagMaps)) return true;
    return false;
  }
  if (value instanceof Set) {
    for (const v of value) if (needsEncoding(v, tagMaps)) return true;
    return false;
  }
  const obj = value as Record<string, unknown>;
  for (const k in obj) {
    const v = obj[k];
    if (typeof v === 'object' ? v !== null && needsEncoding(v, tagMaps) : v === 0 && 1 / v < 0) return true;
  }
  return false;
}

/** The copying half of {@link encodeValue}: runs only for values that need it. */
function replaceSpecial(value: unknown, tagMaps: boolean): unknown {
  if (typeof value === 'number') return value === 0 && 1 / value < 0 ? NEGATIVE_ZERO : value;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => replaceSpecial(v, tagMaps));
  if (value instanceof Map) {
    const entries: [unknown, unknown][] = [];
    for (const [k, v] of value) entries.push([replaceSpecial(k, tagMaps), replaceSpecial(v, tagMaps)]);
    return tagMaps ? new TaggedMap(entries) : new Map(entries);
  }
  if (value instanceof Set) {
    const items: unknown[] = [];
    for (const v of value) items.push(replaceSpecial(v, tagMaps));
    return new Set(items);
  }
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) {
    const out: Record<string, unknown> = {};
    const obj = value as Record<string, unknown>;
    for (const k in obj) out[k] = replaceSpecial(obj[k], tagMaps);
    return out;
  }
  return value;
}
