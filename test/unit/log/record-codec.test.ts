/**
 * The record codec (`src/log/log-record-codec.ts`) encodes each record as a view of msgpackr's
 * output buffer with the header reserved in front (no copy). What that must not change: the bytes
 * (what old logs hold and other weir versions read), and that a value stays what it was however
 * many records are encoded after it (msgpackr must never write over a value it handed out).
 */

import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { LogRecordEncodingError } from '../../../src/errors.js';
import { RECORD_HEADER_BYTES } from '../../../src/log/log-layout.js';
import { LogRecordCodec } from '../../../src/log/log-record-codec.js';
import { singleRecordEntry } from '../../../src/log/record-batch.js';
import { prng } from '../../fixtures/channels/stress-sequence.js';

/** The layout every weir version wrote: 8 zero bytes, then the record packed on its own. */
const reference = new Packr({ useRecords: false, moreTypes: true });
const expected = (record: unknown): Buffer =>
  Buffer.concat([Buffer.alloc(RECORD_HEADER_BYTES), reference.pack(record)]);

/** Records of several shapes and sizes, one larger than msgpackr's 8 KiB buffer now and then. */
function records(n: number, seed: number): unknown[] {
  const random = prng(seed);
  return Array.from({ length: n }, (_, i) => {
    const r = random();
    if (r < 0.01) return { big: 'x'.repeat(9000 + i), i };
    if (r < 0.3) return [i, `s${i}`, null, true, -i / 3];
    if (r < 0.5) return `text ${i} é ✓`;
    if (r < 0.6) return i * 1_000_003;
    return {
      user: `u${i % 97}`,
      page: `/p/${i}`,
      action: 'click',
      seq: i,
      ts: 1_760_000_000_000 + i,
      at: new Date(i),
    };
  });
}

describe('LogRecordCodec.encodeAll', () => {
  it('writes the same bytes as the reference layout', () => {
    const codec = new LogRecordCodec();
    const input = records(500, 1);
    const values = codec.encodeAll('t', input);
    expect(values.length).toBe(input.length);
    for (let i = 0; i < input.length; i++) expect(Buffer.compare(values[i], expected(input[i]))).toBe(0);
  });

  it('keeps every value intact while later records fill msgpackr buffer after buffer', () => {
    const codec = new LogRecordCodec();
    const kept: { record: unknown; value: Uint8Array }[] = [];
    // Single-record calls and batches, ~1 MB in all: well over a hundred of msgpackr's buffers.
    for (let call = 0; call < 400; call++) {
      const input = records(call % 3 === 0 ? 1 : 40, 100 + call);
      const values = codec.encodeAll('t', input);
      for (let i = 0; i < input.length; i++) kept.push({ record: input[i], value: values[i] });
    }
    for (const { record, value } of kept) expect(Buffer.compare(value, expected(record))).toBe(0);
    expect(kept.length).toBeGreaterThan(10_000);
  });

  it('stamping one value header in place leaves its neighbours alone', () => {
    const codec = new LogRecordCodec();
    const input = records(50, 7);
    const values = codec.encodeAll('t', input);
    singleRecordEntry(values[20], 1234.5);
    for (let i = 0; i < input.length; i++) {
      if (i === 20) continue;
      expect(Buffer.compare(values[i], expected(input[i]))).toBe(0);
    }
    expect(Buffer.from(values[20]).readDoubleBE(0)).toBe(1234.5);
    expect(codec.decodePayload(values[20].subarray(RECORD_HEADER_BYTES))).toEqual(input[20]);
  });

  it('rejects a record that cannot be encoded by its index, and encodes correctly afterwards', () => {
    const codec = new LogRecordCodec();
    const before = codec.encodeAll('t', [{ a: 1 }, 'b']);
    const error = (() => {
      try {
        codec.encodeAll('t', [{ ok: 1 }, { bad: () => 1 }]);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(LogRecordEncodingError);
    expect((error as LogRecordEncodingError).recordIndex).toBe(1);
    const input = records(30, 9);
    const after = codec.encodeAll('t', input);
    for (let i = 0; i < input.length; i++) expect(Buffer.compare(after[i], expected(input[i]))).toBe(0);
    expect(Buffer.compare(before[0], expected({ a: 1 }))).toBe(0);
    expect(Buffer.compare(before[1], expected('b'))).toBe(0);
  });
});
