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
 * - `Map` and `Date` need nothing: msgpackr keeps them (Maps as msgpack maps where plain objects
 *   are records, Dates as timestamps).
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

addExtension({
  Class: NegativeZero,
  type: NEGATIVE_ZERO_EXTENSION_TYPE,
  write: () => 0,
  read: () => -0,
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
 * `value` itself when it holds no `-0`, else a copy (arrays, plain objects, Maps, Sets) in which
 * every `-0` is the extension's sentinel. Other objects (Dates, typed arrays, class instances)
 * are left as they are.
 */
export function encodeNegativeZeros<T>(value: T): T {
  return containsNegativeZero(value) ? replaceNegativeZeros(value) : value;
}

/**
 * The walk every msgpack-path value pays: no allocation, primitives tested inline (a call per
 * nested object only), so a small record costs a few ns.
 */
function containsNegativeZero(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return value === 0 && 1 / (value as number) < 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v === 'object' ? v !== null && containsNegativeZero(v) : v === 0 && 1 / v < 0) return true;
    }
    return false;
  }
  if (value instanceof Map) {
    for (const [k, v] of value) if (containsNegativeZero(k) || containsNegativeZero(v)) return true;
    return false;
  }
  if (value instanceof Set) {
    for (const v of value) if (containsNegativeZero(v)) return true;
    return false;
  }
  const obj = value as Record<string, unknown>;
  for (const k in obj) {
    const v = obj[k];
    if (typeof v === 'object' ? v !== null && containsNegativeZero(v) : v === 0 && 1 / v < 0) return true;
  }
  return false;
}

/** The copying half of {@link encodeNegativeZeros}: runs only for values that hold a -0. */
function replaceNegativeZeros<T>(value: T): T {
  if (typeof value === 'number') return (value === 0 && 1 / value < 0 ? NEGATIVE_ZERO : value) as T;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      const e = replaceNegativeZeros(v);
      if (e !== v) {
        out ??= value.slice();
        out[i] = e;
      }
    }
    return (out ?? value) as T;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) {
    let out: Record<string, unknown> | null = null;
    const obj = value as Record<string, unknown>;
    for (const k in obj) {
      const v = obj[k];
      const e = replaceNegativeZeros(v);
      if (e !== v) {
        out ??= { ...obj };
        out[k] = e;
      }
    }
    return (out ?? value) as T;
  }
  if (value instanceof Map) {
    let changed = false;
    const entries: [unknown, unknown][] = [];
    for (const [k, v] of value) {
      const ek = replaceNegativeZeros(k);
      const ev = replaceNegativeZeros(v);
      if (ek !== k || ev !== v) changed = true;
      entries.push([ek, ev]);
    }
    return (changed ? new Map(entries) : value) as T;
  }
  if (value instanceof Set) {
    let changed = false;
    const items: unknown[] = [];
    for (const v of value) {
      const e = replaceNegativeZeros(v);
      if (e !== v) changed = true;
      items.push(e);
    }
    return (changed ? new Set(items) : value) as T;
  }
  return value;
}
