/**
 * LMDB keys of the lmdb keyed state backend. Layout (big-endian, so LMDB's byte order sorts by
 * key group, then state, then key):
 * ```
 * 0  u16  key group
 * 2  u16  state id (per backend instance: the env is private and temporary)
 * 4  u8   internal-key type: 1 number (f64 follows), 2 string (UTF-8 follows),
 *         3 boolean (u8 follows), 4 bigint (decimal UTF-8 follows)
 * ```
 * Injective over internal keys (`internal-key.ts`), so two user keys share an LMDB key exactly
 * when they share state. A key group's entries are one contiguous range (one chunk per range
 * scan); a (key group, state) pair is a sub-range.
 */

import { StateAccessError } from '../../errors.js';

export const KEY_PREFIX_BYTES = 4;

/** Key group prefix: the start of a key group's range; `groupPrefix(kg + 1)` is its end. */
export function groupPrefix(keyGroup: number): Buffer {
  const b = Buffer.allocUnsafe(2);
  b.writeUInt16BE(keyGroup, 0);
  return b;
}

/** (key group, state) prefix; `statePrefix(kg, id + 1)` ends the range (ids stay below 0xffff). */
export function statePrefix(keyGroup: number, stateId: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt16BE(keyGroup, 0);
  b.writeUInt16BE(stateId, 2);
  return b;
}

/**
 * The LMDB key of `internalKey` in (key group, state). Throws StateAccessError when it exceeds
 * `maxKeySize` (LMDB's limit, ~2 KB: a very long string key).
 */
export function encodeStateKey(
  keyGroup: number,
  stateId: number,
  internalKey: unknown,
  maxKeySize: number,
  stateName: string,
): Buffer {
  // One allocation per key: the body is written in place after the 5-byte prefix.
  const at = KEY_PREFIX_BYTES + 1;
  let key: Buffer;
  let tag: number;
  switch (typeof internalKey) {
    case 'number':
      tag = 1;
      key = Buffer.allocUnsafe(at + 8);
      // -0 and 0 are one key (as in a JS Map).
      key.writeDoubleBE(internalKey === 0 ? 0 : internalKey, at);
      break;
    case 'string':
    case 'bigint': {
      tag = typeof internalKey === 'string' ? 2 : 4;
      const text = typeof internalKey === 'string' ? internalKey : internalKey.toString();
      const size = at + Buffer.byteLength(text, 'utf8');
      if (size > maxKeySize) {
        throw new StateAccessError(
          `state '${stateName}': a key of ${size} bytes exceeds the lmdb state backend's key limit of ${maxKeySize} bytes; use shorter keys or the heap backend`,
        );
      }
      key = Buffer.allocUnsafe(size);
      key.write(text, at, 'utf8');
      break;
    }
    case 'boolean':
      tag = 3;
      key = Buffer.allocUnsafe(at + 1);
      key[at] = internalKey ? 1 : 0;
      break;
    default:
      throw new StateAccessError(`state '${stateName}': internal key of type ${typeof internalKey}`);
  }
  key.writeUInt16BE(keyGroup, 0);
  key.writeUInt16BE(stateId, 2);
  key[KEY_PREFIX_BYTES] = tag;
  return key;
}

/** The state id of an LMDB key. */
export function stateIdOf(key: Uint8Array): number {
  return (key[2] << 8) | key[3];
}
