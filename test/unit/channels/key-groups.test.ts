/**
 * Key groups carried with records: a hash partitioner's group per record travels in a `key-groups`
 * frame before its batch and reaches the consumer as `RecordsFrame.keyGroups`, record for record,
 * on both encodings (shape batches and msgpack), across barriers and fragmented frames.
 */
import { describe, expect, test } from 'vitest';
import type { Frame, RecordsFrame } from '../../../src/channels/frame.js';
import { channels, drain } from './helpers.js';

function recordFrames(frames: readonly { frame: Frame }[]): RecordsFrame[] {
  return frames.map((f) => f.frame).filter((f): f is RecordsFrame => f.kind === 'records');
}

describe('key groups travel with their records', () => {
  test.each([
    ['shape batches', (i: number) => ({ key: `k${i}`, value: i })],
    ['msgpack batches', (i: number) => ({ key: `k${i}`, tags: new Set([i]), at: new Date(i), zero: -0 })],
  ])('%s: every batch carries its records’ groups, in order', (_name, record) => {
    const { writers, gate } = channels(1, 64 * 1024, { batchRecords: 4 });
    const sent = Array.from({ length: 10 }, (_, i) => ({ record: record(i), group: (i * 37) % 128 }));
    for (const { record: r, group } of sent.slice(0, 6)) writers[0].write(r, group);
    writers[0].writeControl({ kind: 'watermark', timestamp: 5 });
    for (const { record: r, group } of sent.slice(6)) writers[0].write(r, group);
    expect(writers[0].flush()).toBe(true);
    const frames = drain(gate);
    expect(frames.map((f) => f.frame.kind)).toEqual(['records', 'records', 'watermark', 'records']);
    const batches = recordFrames(frames);
    expect(batches.map((b) => b.records.length)).toEqual([4, 2, 4]);
    expect(batches.flatMap((b) => b.records)).toEqual(sent.map((s) => s.record));
    expect(batches.flatMap((b) => Array.from(b.keyGroups ?? []))).toEqual(sent.map((s) => s.group));
    // Values keep their types on the way (the group frame does not disturb the batch).
    const first = batches[0].records[0] as { zero?: number; tags?: unknown };
    if (first.zero !== undefined) {
      expect(Object.is(first.zero, -0)).toBe(true);
      expect(first.tags).toBeInstanceOf(Set);
    }
  });

  test('a batch in which some record came without a group carries none; the next full one does', () => {
    const { writers, gate } = channels(1, 64 * 1024, { batchRecords: 3 });
    writers[0].write('a', 1);
    writers[0].write('b'); // e.g. broadcast
    writers[0].write('c', 3);
    writers[0].write('d', 4);
    writers[0].write('e', 32_767);
    expect(writers[0].flush()).toBe(true);
    const batches = recordFrames(drain(gate));
    expect(batches.map((b) => b.records)).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e'],
    ]);
    expect(batches[0].keyGroups).toBeUndefined();
    expect(Array.from(batches[1].keyGroups!)).toEqual([4, 32_767]);
  });

  test('records written without groups arrive without keyGroups', () => {
    const { writers, gate } = channels(1);
    for (let i = 0; i < 5; i++) writers[0].write(i);
    expect(writers[0].flush()).toBe(true);
    const [batch] = recordFrames(drain(gate));
    expect(batch.records).toEqual([0, 1, 2, 3, 4]);
    expect(batch.keyGroups).toBeUndefined();
  });

  test('a group frame larger than the ring’s frame limit is fragmented and reassembled', () => {
    // 4 KiB ring: 3 000 groups are 6 000 bytes, more than one frame can hold.
    const { writers, gate } = channels(1, 4096, { batchRecords: 3000 });
    const got: RecordsFrame[] = [];
    for (let i = 0; i < 3000; i++) {
      writers[0].write(i, i % 1000);
      // Drain while writing: the ring is smaller than the batch.
      got.push(...recordFrames(drain(gate)));
    }
    while (!writers[0].flush()) got.push(...recordFrames(drain(gate)));
    got.push(...recordFrames(drain(gate)));
    expect(got).toHaveLength(1);
    expect(got[0].records).toHaveLength(3000);
    expect(Array.from(got[0].keyGroups!)).toEqual(Array.from({ length: 3000 }, (_, i) => i % 1000));
    expect(writers[0].stats.fragmented).toBeGreaterThanOrEqual(2);
  });
});
