/**
 * Writes a full key group chunk of the common entry shapes straight into bytes, in the format
 * that `key-group-chunk.ts` defines and decodes (version 1: header, msgpack `ChunkSection[]`,
 * CRC-32), as the snapshot walks its table: no flat `upserts` array, no `encodeValue` walk, no
 * msgpackr call per chunk. The bytes are the ones `encodeKeyGroupChunk` produces for the same
 * sections (msgpackr 2.x with `useRecords: false`: smallest integer form, float64 for other
 * numbers, `-0` as the 0x2d tag extension of `msgpack-values.ts`, strings as msgpackr writes
 * them), so a chunk restores alike whichever path wrote it.
 *
 * Common shapes: a key that is a string or a number; a value that is a number (any, incl. `-0`
 * and NaN), a string, a boolean or null. {@link KeyGroupChunkWriter.entry} returns false for
 * anything else and the caller encodes that key group the general way instead.
 *
 * Cost: per entry, a type test and a direct write of each field (strings: a char loop under 64
 * chars as msgpackr does, `Buffer.write` beyond); per chunk, one copy into an exactly-sized
 * buffer that also narrows the array headers reserved before their counts were known, and one
 * CRC pass. The scratch buffer grows as needed and is reused for every chunk of its owner.
 */

import { crc32 } from './crc32.js';

const MAGIC_0 = 0x57;
const MAGIC_1 = 0x4b;
const FORMAT_VERSION = 1;
const HEADER_BYTES = 24;
const TRAILER_BYTES = 4;
/** An array header reserved before its count is known: array32 (0xdd + u32), narrowed on copy. */
const RESERVED_ARRAY_HEADER = 5;
/** msgpack bytes of one number at most (float64), and of a key, value and expiry besides strings. */
const ENTRY_FIXED_BYTES = 3 * 9;

export class KeyGroupChunkWriter {
  #buf: Buffer = Buffer.allocUnsafeSlow(1 << 16);
  #view = new DataView(this.#buf.buffer, this.#buf.byteOffset, this.#buf.byteLength);
  /** Next byte to write in `#buf`. */
  #pos = 0;
  /**
   * Array headers reserved at `#holes[2i]` with count `#holes[2i + 1]`, in increasing position.
   * Invariant: `#holes[0]` is the sections array's (position {@link HEADER_BYTES}).
   */
  #holes: number[] = [];
  #sections = 0;
  #sectionStart = -1;
  #sectionEntries = 0;

  /** Starts a chunk (discards any unfinished one). */
  begin(): void {
    this.#pos = HEADER_BYTES + RESERVED_ARRAY_HEADER;
    this.#holes.length = 0;
    this.#holes.push(HEADER_BYTES, 0);
    this.#sections = 0;
    this.#sectionStart = -1;
  }

  /** Starts the section of state `name` (a section with no entries is left out at its end). */
  beginSection(name: string, kind: string): void {
    this.#ensure(16 + 3 * (name.length + kind.length));
    this.#sectionStart = this.#pos;
    this.#sectionEntries = 0;
    this.#buf[this.#pos++] = 0x94; // [name, kind, upserts, tombstones]
    this.#string(name);
    this.#string(kind);
    this.#holes.push(this.#pos, 0);
    this.#pos += RESERVED_ARRAY_HEADER;
  }

  /**
   * Appends one upsert (`expiresAt` in wire form: 0 for none). False, with nothing guaranteed
   * about this chunk's bytes, when the key or the value is not a common shape: the caller then
   * encodes the key group another way.
   */
  entry(key: unknown, value: unknown, expiresAt: number): boolean {
    const kt = typeof key;
    const vt = typeof value;
    if (kt !== 'string' && kt !== 'number') return false;
    if (vt !== 'number' && vt !== 'string' && vt !== 'boolean' && value !== null) return false;
    this.#ensure(
      ENTRY_FIXED_BYTES +
        (kt === 'string' ? 3 * (key as string).length : 0) +
        (vt === 'string' ? 3 * (value as string).length : 0),
    );
    if (kt === 'string') this.#string(key as string);
    else this.#number(key as number);
    if (vt === 'number') this.#number(value as number);
    else if (vt === 'string') this.#string(value as string);
    else this.#buf[this.#pos++] = value === null ? 0xc0 : value ? 0xc3 : 0xc2;
    this.#number(expiresAt);
    this.#sectionEntries++;
    return true;
  }

  /** Ends the current section: its upserts' count, no tombstones (a full chunk has none). */
  endSection(): void {
    if (this.#sectionEntries === 0) {
      this.#pos = this.#sectionStart;
      this.#holes.length -= 2;
    } else {
      this.#holes[this.#holes.length - 1] = 3 * this.#sectionEntries;
      this.#ensure(1);
      this.#buf[this.#pos++] = 0x90;
      this.#sections++;
    }
    this.#sectionStart = -1;
  }

  /** Entries of the current section so far. */
  get sectionEntries(): number {
    return this.#sectionEntries;
  }

  /**
   * The finished full chunk of `keyGroup` in a fresh, exactly-sized buffer, or undefined when no
   * section has entries (a full encoding writes no chunk for an empty key group).
   */
  finish(keyGroup: number, checkpointId: number): Uint8Array | undefined {
    if (this.#sections === 0) return undefined;
    const holes = this.#holes;
    holes[1] = this.#sections;
    let size = this.#pos + TRAILER_BYTES;
    for (let i = 0; i < holes.length; i += 2) size -= RESERVED_ARRAY_HEADER - arrayHeaderBytes(holes[i + 1]);
    const out = new Uint8Array(size);
    const view = new DataView(out.buffer);
    out[0] = MAGIC_0;
    out[1] = MAGIC_1;
    out[2] = FORMAT_VERSION;
    out[3] = 0; // full
    view.setUint32(4, keyGroup, true);
    view.setFloat64(8, checkpointId, true);
    view.setFloat64(16, Number.NaN, true);
    const src = this.#buf;
    let from = HEADER_BYTES;
    let to = HEADER_BYTES;
    for (let i = 0; i < holes.length; i += 2) {
      const at = holes[i];
      out.set(src.subarray(from, at), to);
      to += at - from;
      to = writeArrayHeader(out, view, to, holes[i + 1]);
      from = at + RESERVED_ARRAY_HEADER;
    }
    out.set(src.subarray(from, this.#pos), to);
    const end = size - TRAILER_BYTES;
    view.setUint32(end, crc32(out.subarray(0, end)), true);
    return out;
  }

  #ensure(extra: number): void {
    const need = this.#pos + extra;
    if (need <= this.#buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(need, 2 * this.#buf.length));
    grown.set(this.#buf.subarray(0, this.#pos));
    this.#buf = grown;
    this.#view = new DataView(grown.buffer, grown.byteOffset, grown.byteLength);
  }

  /** msgpackr's number forms (useRecords false); `-0` as the 0x2d tag extension with payload 0. */
  #number(v: number): void {
    const b = this.#buf;
    let p = this.#pos;
    if (v >>> 0 === v) {
      if (v < 0x80) {
        if (v === 0 && 1 / v < 0) {
          b[p++] = 0xd4; // the tag msgpackr writes for an extension with `write`, then its value 0
          b[p++] = 0x2d;
          b[p++] = 0;
        }
        b[p++] = v;
      } else if (v < 0x100) {
        b[p++] = 0xcc;
        b[p++] = v;
      } else if (v < 0x10000) {
        b[p++] = 0xcd;
        b[p++] = v >> 8;
        b[p++] = v & 0xff;
      } else {
        b[p++] = 0xce;
        this.#view.setUint32(p, v);
        p += 4;
      }
    } else if (v >> 0 === v) {
      if (v >= -0x20) {
        b[p++] = 0x100 + v;
      } else if (v >= -0x80) {
        b[p++] = 0xd0;
        b[p++] = v + 0x100;
      } else if (v >= -0x8000) {
        b[p++] = 0xd1;
        this.#view.setInt16(p, v);
        p += 2;
      } else {
        b[p++] = 0xd2;
        this.#view.setInt32(p, v);
        p += 4;
      }
    } else {
      b[p++] = 0xcb;
      this.#view.setFloat64(p, v);
      p += 8;
    }
    this.#pos = p;
  }

  /**
   * A string as msgpackr writes it: the header sized from the UTF-16 length first, moved if the
   * UTF-8 length needs another; under 64 chars its own UTF-8 loop (a lone surrogate becomes 3
   * bytes), else `Buffer.write` (a lone surrogate becomes U+FFFD).
   */
  #string(s: string): void {
    const b = this.#buf;
    const n = s.length;
    const start = this.#pos;
    const headerSize = n < 0x20 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
    let p = start + headerSize;
    let length: number;
    if (n < 0x40) {
      for (let i = 0; i < n; i++) {
        let c1 = s.charCodeAt(i);
        let c2: number;
        if (c1 < 0x80) {
          b[p++] = c1;
        } else if (c1 < 0x800) {
          b[p++] = (c1 >> 6) | 0xc0;
          b[p++] = (c1 & 0x3f) | 0x80;
        } else if ((c1 & 0xfc00) === 0xd800 && ((c2 = s.charCodeAt(i + 1)) & 0xfc00) === 0xdc00) {
          c1 = 0x10000 + ((c1 & 0x03ff) << 10) + (c2 & 0x03ff);
          i++;
          b[p++] = (c1 >> 18) | 0xf0;
          b[p++] = ((c1 >> 12) & 0x3f) | 0x80;
          b[p++] = ((c1 >> 6) & 0x3f) | 0x80;
          b[p++] = (c1 & 0x3f) | 0x80;
        } else {
          b[p++] = (c1 >> 12) | 0xe0;
          b[p++] = ((c1 >> 6) & 0x3f) | 0x80;
          b[p++] = (c1 & 0x3f) | 0x80;
        }
      }
      length = p - start - headerSize;
    } else {
      length = b.write(s, start + headerSize, 'utf8');
    }
    const actual = length < 0x20 ? 1 : length < 0x100 ? 2 : length < 0x10000 ? 3 : 5;
    if (actual !== headerSize) b.copyWithin(start + actual, start + headerSize, start + headerSize + length);
    p = start;
    if (actual === 1) {
      b[p++] = 0xa0 | length;
    } else if (actual === 2) {
      b[p++] = 0xd9;
      b[p++] = length;
    } else if (actual === 3) {
      b[p++] = 0xda;
      b[p++] = length >> 8;
      b[p++] = length & 0xff;
    } else {
      b[p++] = 0xdb;
      this.#view.setUint32(p, length);
      p += 4;
    }
    this.#pos = p + length;
  }
}

function arrayHeaderBytes(count: number): number {
  return count < 0x10 ? 1 : count < 0x10000 ? 3 : 5;
}

/** msgpack array header for `count` at `at` (the smallest form, as msgpackr writes); returns the next position. */
function writeArrayHeader(out: Uint8Array, view: DataView, at: number, count: number): number {
  if (count < 0x10) {
    out[at] = 0x90 | count;
    return at + 1;
  }
  if (count < 0x10000) {
    out[at] = 0xdc;
    out[at + 1] = count >> 8;
    out[at + 2] = count & 0xff;
    return at + 3;
  }
  out[at] = 0xdd;
  view.setUint32(at + 1, count);
  return at + 5;
}
