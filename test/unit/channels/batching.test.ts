import { describe, expect, test } from 'vitest';
import { ChannelWriter } from '../../../src/channels/channel-writer.js';
import { Doorbell } from '../../../src/channels/doorbell.js';
import { RingBuffer } from '../../../src/channels/ring-buffer.js';
import { InvalidOptionError } from '../../../src/errors.js';
import { channels, drain } from './helpers.js';

describe('ChannelWriter batching', () => {
  test('a batch is published when it reaches batchRecords, not before', () => {
    const { writers, gate } = channels(1, 4096, { batchRecords: 4 });
    for (let i = 0; i < 3; i++) writers[0].write(i);
    expect(drain(gate)).toEqual([]);
    expect(writers[0].bufferedRecords).toBe(3);
    writers[0].write(3);
    expect(drain(gate).map((f) => f.frame)).toEqual([{ kind: 'records', records: [0, 1, 2, 3] }]);
  });

  test('a batch is published when its estimated size reaches batchBytes', () => {
    const { writers, gate } = channels(1, 65536, { batchRecords: 10_000, batchBytes: 1000 });
    const record = 'x'.repeat(97); // ~100 encoded bytes
    writers[0].write(record); // the first batch has no size history yet
    writers[0].flush();
    drain(gate);
    for (let i = 0; i < 9; i++) writers[0].write(record);
    expect(drain(gate)).toEqual([]);
    writers[0].write(record);
    const got = drain(gate);
    expect(got).toHaveLength(1);
    expect(got[0].frame.kind === 'records' && got[0].frame.records.length).toBe(10);
  });

  test('flush publishes a partial batch (the producer-goes-idle rule)', () => {
    const { writers, gate } = channels(1);
    writers[0].write({ a: 1 });
    expect(writers[0].flush()).toBe(true);
    expect(drain(gate).map((f) => f.frame)).toEqual([{ kind: 'records', records: [{ a: 1 }] }]);
    expect(writers[0].flush()).toBe(true); // nothing to do
    expect(drain(gate)).toEqual([]);
  });

  test('a full ring queues frames locally; flush/backlogged/pendingBytes report it', () => {
    const { writers, gate } = channels(1, 256, { batchRecords: 1 });
    const w = writers[0];
    let written = 0;
    while (!w.backlogged) w.write({ n: written++, pad: 'p'.repeat(40) });
    expect(w.pendingBytes).toBeGreaterThan(0);
    w.write({ n: written++, pad: 'p'.repeat(40) }); // never blocks, never throws
    expect(w.flush()).toBe(false);
    const seen: number[] = [];
    for (;;) {
      const got = drain(gate);
      for (const f of got)
        if (f.frame.kind === 'records') for (const r of f.frame.records) seen.push((r as { n: number }).n);
      if (w.flush() && got.length === 0) break;
    }
    expect(seen).toEqual(Array.from({ length: written }, (_, i) => i));
    expect(w.backlogged).toBe(false);
    expect(w.pendingBytes).toBe(0);
  });

  test('the doorbell rings once per publishing call, not per frame', () => {
    const { writers, gate } = channels(1, 4096, { batchRecords: 2 });
    const before = writers[0].doorbell.stats.rings;
    writers[0].write(1);
    expect(writers[0].doorbell.stats.rings).toBe(before);
    writers[0].write(2);
    expect(writers[0].doorbell.stats.rings).toBe(before + 1);
    drain(gate);
  });

  test('options are checked up front', () => {
    const ring = RingBuffer.allocate(256);
    const bell = Doorbell.allocate();
    expect(() => new ChannelWriter(ring, bell, { batchRecords: 0 })).toThrow(InvalidOptionError);
    expect(() => new ChannelWriter(ring, bell, { batchBytes: 1.5 })).toThrow(InvalidOptionError);
    expect(() => new ChannelWriter(ring, bell, { maxRecordBytes: -1 })).toThrow(InvalidOptionError);
  });
});
