/**
 * A section's upserts as msgpack bytes already encoded: each entry's three elements (key, wire
 * value, expiresAt) back to back, copied from wherever they are stored (the lmdb backend's stored
 * values, `lmdb-keyed-state-snapshot.ts`). `writeSectionsPayload` writes them after one array
 * header, so the chunk decodes exactly as if the entries had been decoded and packed again
 * (chunk format 1 is unchanged), without that decode and re-encode.
 *
 * Contract: the bytes must be what the chunk's Packr would write for those values, and
 * self-contained: state is packed without records (`useRecords: false`), and the -0 and Map
 * extensions (`msgpack-values.ts`) are plain ext bytes, so stored bytes qualify.
 */

import { ByteWriter } from './msgpack-writer.js';

export class RawUpserts {
  /** Entries added. */
  entries = 0;
  readonly #w: ByteWriter;

  constructor(capacity = 4096) {
    this.#w = new ByteWriter(capacity);
  }

  /** Appends one entry: `bytes[from, to)` holds exactly its key, wire value and expiresAt, in msgpack. Copies them. */
  add(bytes: Uint8Array, from: number, to: number): void {
    const w = this.#w;
    const n = to - from;
    w.ensure(n);
    const buf = w.buf;
    if (n <= 64) {
      // Most entries are a few dozen bytes: a loop beats allocating a subarray to `set`.
      let p = w.p;
      for (let q = from; q < to; q++) buf[p++] = bytes[q];
    } else buf.set(bytes.subarray(from, to), w.p);
    w.p += n;
    this.entries++;
  }

  /** The entries' bytes (a view, valid until the next `add`). */
  get bytes(): Uint8Array {
    return this.#w.buf.subarray(0, this.#w.p);
  }
}
