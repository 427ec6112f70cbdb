/**
 * Reading positions in msgpack bytes without decoding them: where a value ends
 * ({@link skipMsgpack}) and a number's value ({@link readMsgpackNumber}). The lmdb snapshot uses
 * them to find a stored entry's expiry and splice the entry's bytes into a chunk unchanged
 * (`raw-upserts.ts`). Cost: O(1) per scalar, O(elements) per array, map or nested value; no
 * allocation.
 */

import { NEGATIVE_ZERO_EXTENSION_TYPE, TAGGED_MAP_EXTENSION_TYPE } from '../channels/msgpack-values.js';
import { StateAccessError } from '../errors.js';

/**
 * msgpackr's tag extensions: a fixext 1 of one of these types (its data byte a filler) is followed
 * by one msgpack value, the extension's content (msgpackr `unpack.js`, case 0xd4: an extension
 * with `read`, or a built-in that calls `read()`). Every other fixext 1 is self-contained. Types:
 * weir's −0 and Map (`msgpack-values.ts`), msgpackr's Error (0x65), Set (0x73) and RegExp (0x78).
 * An extension of this kind added later must be listed here (the property test over
 * `fc.anything` in `raw-upserts.test.ts` finds a missing built-in).
 */
const TAG_EXTENSION_TYPES: ReadonlySet<number> = new Set([
  NEGATIVE_ZERO_EXTENSION_TYPE,
  TAGGED_MAP_EXTENSION_TYPE,
  0x65,
  0x73,
  0x78,
]);

/**
 * The offset just past the msgpack value that starts at `p`. Throws StateAccessError on the
 * reserved byte 0xc1 or a value running past the end of `b`.
 */
export function skipMsgpack(b: Uint8Array, p: number): number {
  // Containers add their elements to `pending` instead of recursing.
  let pending = 1;
  while (pending > 0) {
    if (!(p < b.length)) throw truncated(b, p); // also NaN: a length read past the end
    const t = b[p];
    pending--;
    if (t < 0x80 || t >= 0xe0)
      p += 1; // positive / negative fixint
    else if (t < 0x90) {
      pending += 2 * (t & 0x0f); // fixmap
      p += 1;
    } else if (t < 0xa0) {
      pending += t & 0x0f; // fixarray
      p += 1;
    } else if (t < 0xc0)
      p += 1 + (t & 0x1f); // fixstr
    else {
      switch (t) {
        case 0xc0: // nil
        case 0xc2: // false
        case 0xc3: // true
          p += 1;
          break;
        case 0xc4: // bin 8
        case 0xd9: // str 8
          p += 2 + b[p + 1];
          break;
        case 0xc5: // bin 16
        case 0xda: // str 16
          p += 3 + u16(b, p + 1);
          break;
        case 0xc6: // bin 32
        case 0xdb: // str 32
          p += 5 + u32(b, p + 1);
          break;
        case 0xc7: // ext 8: size, type, data
          p += 3 + b[p + 1];
          break;
        case 0xc8: // ext 16
          p += 4 + u16(b, p + 1);
          break;
        case 0xc9: // ext 32
          p += 6 + u32(b, p + 1);
          break;
        case 0xca: // float 32
        case 0xce: // uint 32
        case 0xd2: // int 32
          p += 5;
          break;
        case 0xcb: // float 64
        case 0xcf: // uint 64
        case 0xd3: // int 64
          p += 9;
          break;
        case 0xcc: // uint 8
        case 0xd0: // int 8
          p += 2;
          break;
        case 0xcd: // uint 16
        case 0xd1: // int 16
          p += 3;
          break;
        case 0xd4: // fixext 1: type + data; a tag extension's value follows it
          if (TAG_EXTENSION_TYPES.has(b[p + 1])) pending++;
          p += 3;
          break;
        // fixext 2, 4, 8, 16: type + data
        case 0xd5:
          p += 4;
          break;
        case 0xd6:
          p += 6;
          break;
        case 0xd7:
          p += 10;
          break;
        case 0xd8:
          p += 18;
          break;
        case 0xdc: // array 16
          pending += u16(b, p + 1);
          p += 3;
          break;
        case 0xdd: // array 32
          pending += u32(b, p + 1);
          p += 5;
          break;
        case 0xde: // map 16
          pending += 2 * u16(b, p + 1);
          p += 3;
          break;
        case 0xdf: // map 32
          pending += 2 * u32(b, p + 1);
          p += 5;
          break;
        default: // 0xc1: never used
          throw new StateAccessError(`msgpack: reserved byte 0x${t.toString(16)} at offset ${p}`);
      }
    }
  }
  if (!(p <= b.length)) throw truncated(b, p);
  return p;
}

/**
 * The number whose msgpack encoding starts at `p` (any integer or float form; 64-bit integers as
 * the nearest double). Throws StateAccessError when the value there is not a number.
 */
export function readMsgpackNumber(b: Uint8Array, p: number): number {
  const t = b[p];
  if (t < 0x80) return t;
  if (t >= 0xe0) return t - 0x100;
  const v = new DataView(b.buffer, b.byteOffset + p + 1, Math.min(8, b.length - p - 1));
  switch (t) {
    case 0xcc:
      return v.getUint8(0);
    case 0xcd:
      return v.getUint16(0);
    case 0xce:
      return v.getUint32(0);
    case 0xcf:
      return Number(v.getBigUint64(0));
    case 0xd0:
      return v.getInt8(0);
    case 0xd1:
      return v.getInt16(0);
    case 0xd2:
      return v.getInt32(0);
    case 0xd3:
      return Number(v.getBigInt64(0));
    case 0xca:
      return v.getFloat32(0);
    case 0xcb:
      return v.getFloat64(0);
    default:
      throw new StateAccessError(
        `msgpack: expected a number at offset ${p}, found type byte 0x${t.toString(16)}`,
      );
  }
}

function u16(b: Uint8Array, p: number): number {
  return (b[p] << 8) | b[p + 1];
}

function u32(b: Uint8Array, p: number): number {
  return ((b[p] << 24) >>> 0) + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]);
}

function truncated(b: Uint8Array, p: number): StateAccessError {
  return new StateAccessError(`msgpack: value runs past the end (offset ${p} of ${b.length} bytes)`);
}
