/**
 * Encoding of log records: an encoded record is an 8-byte header (zero; the format-1 layout kept
 * the append time there) followed by the record as self-describing msgpack (msgpackr,
 * `useRecords: false`, `moreTypes: true`), so a reader in any thread or process decodes it
 * without shared structures. This is the unit an append routes, relays between threads and
 * checkpoints (`sinks.log`); the write packs each partition's records into one record batch
 * (`record-batch.ts`).
 *
 * What round-trips: everything structured clone handles except that a `Map` comes back as a plain
 * object and class instances as plain objects. What is rejected: symbols, functions (msgpackr
 * would silently drop them), cyclic values. Rejection is a {@link LogRecordEncodingError} raised
 * before any write.
 *
 * Cost: one msgpackr pack per record, and no copy: msgpackr reserves the header's 8 bytes in front
 * of the payload (`RESERVE_START_SPACE`) and the value is its view of msgpackr's output buffer,
 * which msgpackr never writes over (it continues after each value and starts a fresh 8 KiB buffer
 * when one is full; a kept value holds its 8 KiB buffer alive, as a `Buffer.allocUnsafe` slice of
 * Node's pool did before). Copying each payload into its own buffer was a quarter of the
 * encoding's time on the appending thread (issue 13).
 */

import { Packr, RESERVE_START_SPACE } from 'msgpackr';
import { LogRecordEncodingError } from '../errors.js';
import { RECORD_HEADER_BYTES } from './log-layout.js';

export class LogRecordCodec {
  readonly #packr = new Packr({
    useRecords: false,
    moreTypes: true,
    writeFunction: () => {
      throw new TypeError('a function cannot be encoded');
    },
  });

  /**
   * Encodes every record into its own value with a zeroed header (the append time goes into the
   * record batch, inside the write transaction).
   * @throws LogRecordEncodingError naming the first record that cannot be encoded.
   */
  encodeAll(topic: string, records: readonly unknown[]): Buffer[] {
    const out: Buffer[] = new Array(records.length);
    for (let i = 0; i < records.length; i++) {
      let value: Buffer;
      try {
        value = this.#packr.pack(records[i], RESERVE_START_SPACE | RECORD_HEADER_BYTES);
      } catch (cause) {
        const reason =
          cause instanceof RangeError && /call stack/i.test(cause.message)
            ? 'it is cyclic or nested too deeply'
            : cause instanceof Error
              ? cause.message
              : String(cause);
        throw new LogRecordEncodingError(topic, i, reason, { cause });
      }
      // The reserved bytes hold whatever the buffer held before.
      value.writeDoubleBE(0, 0);
      out[i] = value;
    }
    return out;
  }

  /** Decodes a record's msgpack payload (no header). */
  decodePayload(payload: Uint8Array): unknown {
    return this.#packr.unpack(payload);
  }
}
