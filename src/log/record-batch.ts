/**
 * A stored entry of the `records` sub-database (`log-layout.ts`), seen as the run of records it
 * holds. Two value formats share the database, told apart by their first byte:
 *
 * - Record batch (format 2, what every append writes): the records one append put into one
 *   partition, under the key of the first one's offset (`[topicId, partition, baseOffset]`), like a
 *   Kafka record batch. All sizes little-endian:
 *
 *   | bytes              | field                                                       |
 *   |--------------------|-------------------------------------------------------------|
 *   | 0                  | {@link BATCH_TAG} (0xff)                                    |
 *   | 1                  | batch layout version, {@link BATCH_VERSION}                 |
 *   | 2..6               | record count `n` (u32), at least 1                          |
 *   | 6..14              | append time (float64, ms since the epoch), for every record |
 *   | 14..14+4n          | each record's msgpack payload length (u32)                  |
 *   | 14+4n..            | the payloads, back to back, in offset order                 |
 *
 * - Single record (what an append of one record to a partition writes, and every entry format 1
 *   wrote): an 8-byte header (the append time, float64 big-endian) and the msgpack payload, under
 *   the record's own offset. Its first byte is the top byte of a big-endian double: 0xff there
 *   would be a negative NaN, never an append time, so the tag cannot be mistaken for one.
 *
 * A record's logical size, which retention's `maxBytes` and a partition's `bytes` count, is
 * {@link RECORD_HEADER_BYTES} + its payload length in both formats, so byte limits mean what they
 * meant before batches (a batch stores 4 bytes per record plus 14 per batch instead).
 *
 * Cost: building a batch is one allocation and one copy of each payload; reading record `i` of a
 * batch walks the `i` lengths before it (batches are one append's records: a few hundred at most
 * in practice).
 */

import { LogStorageError } from '../errors.js';
import { RECORD_HEADER_BYTES } from './log-layout.js';

export const BATCH_TAG = 0xff;
export const BATCH_VERSION = 1;
/** Bytes before the length table. */
export const BATCH_HEADER_BYTES = 14;

/**
 * Builds one batch from stored record values (each {@link RECORD_HEADER_BYTES} of header, ignored,
 * then the msgpack payload): the records `values[indices[k]]`, or all of `values` when `indices`
 * is `null`.
 */
export function encodeRecordBatch(
  values: readonly Uint8Array[],
  indices: readonly number[] | null,
  appendedAt: number,
): Buffer {
  const n = indices === null ? values.length : indices.length;
  let payloadBytes = 0;
  for (let k = 0; k < n; k++) payloadBytes += values[indices === null ? k : indices[k]].length;
  payloadBytes -= n * RECORD_HEADER_BYTES;
  const lengthsAt = BATCH_HEADER_BYTES;
  let at = lengthsAt + 4 * n;
  const out = Buffer.allocUnsafe(at + payloadBytes);
  out[0] = BATCH_TAG;
  out[1] = BATCH_VERSION;
  out.writeUInt32LE(n, 2);
  out.writeDoubleLE(appendedAt, 6);
  for (let k = 0; k < n; k++) {
    const value = values[indices === null ? k : indices[k]];
    const length = value.length - RECORD_HEADER_BYTES;
    out.writeUInt32LE(length, lengthsAt + 4 * k);
    // Not `set(value.subarray(…))`: a view per record was a tenth of the batch's cost.
    Buffer.prototype.copy.call(value, out, at, RECORD_HEADER_BYTES);
    at += length;
  }
  return out;
}

/**
 * A lone record's entry: the encoded record itself with the append time stamped into its header,
 * in place (lmdb-js copies the value when the write is issued; a record re-planned after a
 * conflict is stamped again).
 */
export function singleRecordEntry(value: Uint8Array, appendedAt: number): Buffer {
  const b = Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  b.writeDoubleBE(appendedAt, 0);
  return b;
}

/**
 * The records of one stored entry, in either format. Payloads are views into the entry's value
 * (valid as long as that value is).
 */
export class StoredEntry {
  /** Offset of the first record (the entry's key). */
  readonly base: number;
  /** Records in the entry; offsets `[base, base + count)`. */
  readonly count: number;
  /** When the entry's records were appended (ms). */
  readonly appendedAt: number;
  readonly #value: Buffer;
  readonly #batch: boolean;
  /** Cursor of {@link payloadAt}: index and byte position of the next payload in sequence. */
  #nextIndex = 0;
  #nextAt = 0;

  /** @throws LogStorageError for a value in neither format (a newer weir's batch layout, damage). */
  constructor(base: number, value: Uint8Array, where: string) {
    this.base = base;
    this.#value = Buffer.isBuffer(value)
      ? value
      : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    const v = this.#value;
    if (v.length >= BATCH_HEADER_BYTES && v[0] === BATCH_TAG) {
      if (v[1] !== BATCH_VERSION) {
        throw new LogStorageError(
          `${where}: the record batch at offset ${base} has layout version ${v[1]}; this weir reads version ${BATCH_VERSION}`,
        );
      }
      this.#batch = true;
      this.count = v.readUInt32LE(2);
      this.appendedAt = v.readDoubleLE(6);
      this.#nextAt = BATCH_HEADER_BYTES + 4 * this.count;
      if (this.count === 0 || this.#nextAt > v.length) {
        throw new LogStorageError(`${where}: the record batch at offset ${base} is truncated`);
      }
    } else if (v.length >= RECORD_HEADER_BYTES) {
      this.#batch = false;
      this.count = 1;
      this.appendedAt = v.readDoubleBE(0);
    } else {
      throw new LogStorageError(`${where}: the record at offset ${base} is truncated`);
    }
  }

  /** One past the last offset held. */
  get end(): number {
    return this.base + this.count;
  }

  /** Logical size of record `i` (header + payload), what retention and `bytes` count. */
  storedBytes(i: number): number {
    if (!this.#batch) return this.#value.length;
    return RECORD_HEADER_BYTES + this.#value.readUInt32LE(BATCH_HEADER_BYTES + 4 * i);
  }

  /** The msgpack payload of record `i` (0-based within the entry). O(1) when read in order. */
  payloadAt(i: number): Buffer {
    const v = this.#value;
    if (!this.#batch) return v.subarray(RECORD_HEADER_BYTES);
    if (i < this.#nextIndex) {
      this.#nextIndex = 0;
      this.#nextAt = BATCH_HEADER_BYTES + 4 * this.count;
    }
    while (this.#nextIndex < i) {
      this.#nextAt += v.readUInt32LE(BATCH_HEADER_BYTES + 4 * this.#nextIndex);
      this.#nextIndex++;
    }
    const length = v.readUInt32LE(BATCH_HEADER_BYTES + 4 * i);
    const at = this.#nextAt;
    this.#nextIndex = i + 1;
    this.#nextAt = at + length;
    return v.subarray(at, at + length);
  }
}
