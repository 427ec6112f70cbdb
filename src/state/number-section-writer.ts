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
import { ByteWriter } from './msgpack-writer.js';
import { RawUpserts } from './raw-upserts.js';
import type { StateKind } from './state-entry.js';

/**
 * The upserts of a number-slot section, each `[key, value, expiresAt]`: the listed slots of
 * `view`, or (no list) every slot of `view` that holds a key.
 */
export class SlotUpserts {
  /** Entries written. */
  readonly entries: number;

  constructor(
    readonly view: NumberSlotView,
    /** Slots to write, in order; undefined: every slot holding a key. */
    readonly slots: readonly number[] | undefined,
  ) {
    this.entries = slots === undefined ? view.size : slots.length;
  }

  /** The slots written, in order. */
  *#written(): Iterable<number> {
    if (this.slots !== undefined) {
      yield* this.slots;
      return;
    }
    const keys = this.view.keys;
    for (let s = 0; s < this.view.count; s++) if (keys[s] !== undefined) yield s;
  }

  /** The flat `[key, value, expiresAt, …]` form (for a section that also has entry upserts). */
  toArray(): unknown[] {
    const { keys, values, expires } = this.view;
    const out: unknown[] = [];
    for (const s of this.#written())
      out.push(keys[s], values[s], expires === undefined ? 0 : wireExpiry(expires[s]));
    return out;
  }
}

/**
 * A section to encode: like a decoded `ChunkSection`, but the upserts may be number slots or
 * pre-encoded msgpack bytes (`raw-upserts.ts`, the lmdb backend's stored entries).
 */
export type SectionToEncode = [
  name: string,
  kind: StateKind,
  upserts: unknown[] | SlotUpserts | RawUpserts,
  tombstones: unknown[],
];

/** Entries in a section's upserts. */
export function upsertCount(s: SectionToEncode): number {
  const u = s[2];
  return u instanceof SlotUpserts || u instanceof RawUpserts ? u.entries : u.length / 3;
}

function wireExpiry(expiresAt: number): number {
  return expiresAt === Number.POSITIVE_INFINITY ? 0 : expiresAt;
}

const writer = new ByteWriter();

/** True when `writeSectionsPayload` writes some section's upserts itself (number slots or raw bytes). */
export function hasDirectUpserts(sections: readonly SectionToEncode[]): boolean {
  for (const s of sections) if (s[2] instanceof SlotUpserts || s[2] instanceof RawUpserts) return true;
  return false;
}

/**
 * The msgpack payload of `sections` (an array of sections), with number-slot sections written
 * directly and raw sections' entry bytes copied. Returns a view of a buffer reused by the next call: copy it before calling again.
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
    if (upserts instanceof RawUpserts) {
      w.arrayHeader(4);
      w.string(section[0]);
      w.string(section[1]);
      w.arrayHeader(upserts.entries * 3);
      w.bytes(upserts.bytes);
      w.bytes(packr.pack(encodeValue(section[3], true)));
      continue;
    }
    if (!(upserts instanceof SlotUpserts)) {
      w.bytes(packSection(section));
      continue;
    }
    w.arrayHeader(4);
    w.string(section[0]);
    w.string(section[1]);
    const { keys, values, expires, keyBytes, keyStart, keyEnd, count } = upserts.view;
    const slots = upserts.slots;
    w.arrayHeader(upserts.entries * 3);
    const n = slots === undefined ? count : slots.length;
    for (let i = 0; i < n; i++) {
      let s = i;
      if (slots !== undefined) s = slots[i];
      else if (keys[s] === undefined) continue; // a free slot
      const start = keyStart[s];
      if (start >= 0) {
        // The key's bytes, encoded at insert: a short copy.
        const end = keyEnd[s];
        w.ensure(end - start);
        const b = w.buf;
        let p = w.p;
        for (let q = start; q < end; q++) b[p++] = keyBytes[q];
        w.p = p;
      } else w.bytes(packr.pack(encodeValue(keys[s], true)));
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
