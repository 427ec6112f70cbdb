import { describe, expect, test } from 'vitest';
import { RingBuffer } from '../../../src/channels/ring-buffer.js';
import { RecordTooLargeError } from '../../../src/errors.js';
import { channels, drain, flatten, normalize } from './helpers.js';

describe('records larger than a ring frame', () => {
  test('are fragmented across frames and reassembled, in order with their neighbours', () => {
    const { rings, writers, gate } = channels(1, 1024, { batchRecords: 1 });
    const big = { text: 'y'.repeat(10_000), bin: new Uint8Array(5000).fill(7) }; // ~10x the ring
    const w = writers[0];
    w.write('before');
    w.write(big);
    w.writeControl({ kind: 'watermark', timestamp: 1 });
    w.write('after');
    const got: unknown[] = [];
    do got.push(...flatten(drain(gate).map((f) => f.frame)));
    while (!w.flush() || gate.hasReady());
    expect(normalize(got)).toEqual(
      normalize([
        { record: 'before' },
        { record: big },
        { control: { kind: 'watermark', timestamp: 1 } },
        { record: 'after' },
      ]),
    );
    expect(w.stats.fragmented).toBe(1);
    expect(RingBuffer.canariesIntact(rings[0])).toBe(true);
  });

  test('a batch of small records larger than a frame is fragmented too', () => {
    const { writers, gate } = channels(1, 256, { batchRecords: 100 });
    const records = Array.from({ length: 100 }, (_, i) => `record-${i}`);
    const w = writers[0];
    for (const r of records) w.write(r);
    const got: unknown[] = [];
    do got.push(...flatten(drain(gate).map((f) => f.frame)));
    while (!w.flush() || gate.hasReady());
    expect(got).toEqual(records.map((record) => ({ record })));
  });

  test('above maxRecordBytes: RecordTooLargeError naming the size and the option; ring untouched', () => {
    const { rings, writers, gate } = channels(1, 1024, { batchRecords: 4, maxRecordBytes: 4096 });
    const w = writers[0];
    w.write('ok-1');
    w.flush();
    const ringBefore = new RingBuffer(rings[0]).availableBytes();
    w.write('small');
    w.write('z'.repeat(5000));
    w.write('small');
    let error: unknown;
    try {
      w.write('small'); // the batch fills and is sealed here
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RecordTooLargeError);
    const tooLarge = error as RecordTooLargeError;
    expect(tooLarge.sizeBytes).toBeGreaterThan(4096);
    expect(tooLarge.limitBytes).toBe(4096);
    expect(tooLarge.message).toMatch(/maxRecordBytes/);
    expect(new RingBuffer(rings[0]).availableBytes()).toBe(ringBefore);
    // The writer stays usable; the failed batch is dropped.
    w.write('ok-2');
    w.flush();
    expect(flatten(drain(gate).map((f) => f.frame))).toEqual([{ record: 'ok-1' }, { record: 'ok-2' }]);
  });
});
