/**
 * Writes a key-group chunk's msgpack payload when some of its sections come from number slots
 * (`heap/number-slots.ts`): those sections are written byte by byte from the slot arrays —
 * string and number keys directly, numbers as msgpack ints or float64 — and the others are packed
 * by msgpackr as usual. The bytes decode to exactly what `packr.pack` of the same sections as
 * plain arrays decodes to (chunk format 1 is unchanged; `-0` is written as float64 −0, which
 * msgpack reads back as −0).
 *
 * Why not msgpackr: handing it the section means first building a flat `[key, value, expiry, …]`
 * array, which boxes every non-integer value read from a `Float64Array` (one heap number per
 * entry), then `encodeValue`'s walk for `-0`/Maps and msgpackr's generic walk. Over contiguous
 * arrays the direct writer costs ~70 ns per entry at 1 M keys where the object layout's
 * encoding costs ~360 (bench/README.md, "Number state").
 */

import type { Packr } from 'msgpackr';
import { encodeValue } from '../channels/msgpack-values.js';
import type { NumberSlotView } from './heap/number-slots.js';
import type { StateKind } from './state-entry.js';

/** The upserts of a number-slot section: the listed slots of `view`, each `[key, value, expiresAt]`. */
export class SlotUpserts {
  constructor(
    readonly view: NumberSlotView,
    /** Slots to write, in order. */
    readonly slots: readonly number[],
  ) {}

  /** Entries written. */
  get entries(): number {
    return this.slots.length;
  }

  /** The flat `[key, value, expiresAt, …]` form (for a section that also has entry upserts). */
  toArray(): unknown[] {
    const { keys, values, expires } = this.view;
    const out: unknown[] = [];
    for (const s of this.slots)
      out.push(keys[s], values[s], expires === undefined ? 0 : wireExpiry(expires[s]));
    return out;
  }
}

/** A section to encode: like a decoded `ChunkSection`, but the upserts may be number slots. */
export type SectionToEncode = [
  name: string,
  kind: StateKind,
  upserts: unknown[] | SlotUpserts,
  tombstones: unknown[],
];

/** Entries in a section's upserts. */
export function upsertCount(s: SectionToEncode): number {
  const u = s[2];
  return u instanceof SlotUpserts ? u.entries : u.length / 3;
}

function wireExpiry(expiresAt: number): number {
  return expiresAt === Number.POSITIVE_INFINITY ? 0 : expiresAt;
}

/** A growable byte buffer, reused across chunks of this thread (used synchronously only). */
class ByteWriter {
  buf = new Uint8Array(1 << 16);
  view = new DataView(this.buf.buffer);
  p = 0;

  ensure(n: number): void {
    if (this.p + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.p + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.p));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.p);
    this.p += b.length;
  }

  arrayHeader(n: number): void {
    this.ensure(5);
    const b = this.buf;
    if (n < 16) b[this.p++] = 0x90 | n;
    else if (n < 0x10000) {
      b[this.p] = 0xdc;
      this.view.setUint16(this.p + 1, n);
      this.p += 3;
    } else {
      b[this.p] = 0xdd;
      this.view.setUint32(this.p + 1, n);
      this.p += 5;
    }
  }

  string(s: string): void {
    const len = s.length;
    if (len < 32) {
      // Common case: a short ASCII key, one byte per char.
      this.ensure(len + 1);
      const b = this.buf;
      const start = this.p;
      let p = start + 1;
      let i = 0;
      for (; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
        b[p++] = c;
      }
      if (i === len) {
        b[start] = 0xa0 | len;
        this.p = p;
        return;
      }
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.ensure(n + 5);
    const b = this.buf;
    let p = this.p;
    if (n < 32) b[p++] = 0xa0 | n;
    else if (n < 0x100) {
      b[p++] = 0xd9;
      b[p++] = n;
    } else if (n < 0x10000) {
      b[p] = 0xda;
      this.view.setUint16(p + 1, n);
      p += 3;
    } else {
      b[p] = 0xdb;
      this.view.setUint32(p + 1, n);
      p += 5;
    }
    const written = Buffer.from(b.buffer, b.byteOffset, b.byteLength).write(s, p, 'utf8');
    this.p = p + written;
  }

  number(v: number): void {
    this.ensure(9);
    const b = this.buf;
    const p = this.p;
    if (Number.isInteger(v) && (v !== 0 || 1 / v > 0)) {
      if (v >= 0) {
        if (v < 0x80) {
          b[p] = v;
          this.p = p + 1;
          return;
        }
        if (v < 0x100) {
          b[p] = 0xcc;
          b[p + 1] = v;
          this.p = p + 2;
          return;
        }
        if (v < 0x10000) {
          b[p] = 0xcd;
          this.view.setUint16(p + 1, v);
          this.p = p + 3;
          return;
        }
        if (v < 0x100000000) {
          b[p] = 0xce;
          this.view.setUint32(p + 1, v);
          this.p = p + 5;
          return;
        }
      } else {
        if (v >= -32) {
          b[p] = v & 0xff;
          this.p = p + 1;
          return;
        }
        if (v >= -0x80) {
          b[p] = 0xd0;
          this.view.setInt8(p + 1, v);
          this.p = p + 2;
          return;
        }
        if (v >= -0x8000) {
          b[p] = 0xd1;
          this.view.setInt16(p + 1, v);
          this.p = p + 3;
          return;
        }
        if (v >= -0x80000000) {
          b[p] = 0xd2;
          this.view.setInt32(p + 1, v);
          this.p = p + 5;
          return;
        }
      }
    }
    // Fractions, −0, NaN, ±Infinity and integers beyond 32 bits: float64, exact.
    b[p] = 0xcb;
    this.view.setFloat64(p + 1, v);
    this.p = p + 9;
  }
}

const writer = new ByteWriter();

/**
 * The msgpack payload of `sections` (an array of sections), with number-slot sections written
 * directly. Returns a view of a buffer reused by the next call: copy it before calling again.
 * `packValue` packs a plain value (a section, a key, a tombstone list) as the chunk codec does.
 */
export function writeSectionsPayload(
  packr: Packr,
  sections: readonly SectionToEncode[],
  packSection: (section: SectionToEncode) => Uint8Array,
): Uint8Array {
  const w = writer;
  w.p = 0;
  w.arrayHeader(sections.length);
  for (const section of sections) {
    const upserts = section[2];
    if (!(upserts instanceof SlotUpserts)) {
      w.bytes(packSection(section));
      continue;
    }
    w.arrayHeader(4);
    w.string(section[0]);
    w.string(section[1]);
    const { keys, values, expires } = upserts.view;
    const slots = upserts.slots;
    w.arrayHeader(slots.length * 3);
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i];
      const key = keys[s];
      if (typeof key === 'string') w.string(key);
      else if (typeof key === 'number') w.number(key);
      else w.bytes(packr.pack(encodeValue(key, true)));
      w.number(values[s]);
      if (expires === undefined) {
        w.ensure(1);
        w.buf[w.p++] = 0;
      } else w.number(wireExpiry(expires[s]));
    }
    w.bytes(packr.pack(encodeValue(section[3], true)));
  }
  return w.buf.subarray(0, w.p);
}
