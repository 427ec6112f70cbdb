/**
 * Group commit on one handle: concurrent asynchronous appends share LMDB transactions, get dense
 * offsets in call order, and keep each call's own outcome — an encoding error, a duplicate
 * transaction, retention and marker pruning all behave per call as they would alone.
 */
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionError, LogRecordEncodingError } from '../../../src/errors.js';
import { openLog } from '../../../src/log/index.js';
import { logEnvironmentOptions, RECORD_HEADER_BYTES } from '../../../src/log/log-layout.js';
import { tempLogDir } from './helpers.js';

/** LMDB's last committed transaction id: counts the write transactions a step took. */
function lastTxnId(dir: string): number {
  const root = open(logEnvironmentOptions(dir, 'fsync'));
  try {
    return (root.getStats() as { lastTxnId: number }).lastTxnId;
  } finally {
    void root.close();
  }
}

describe('group commit', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const setup = (label: string, options?: Parameters<typeof openLog>[1]) => {
    const t = tempLogDir(label);
    cleanups.push(t.remove);
    const log = openLog(t.dir, options);
    cleanups.push(() => log.close());
    return { dir: t.dir, log };
  };

  it('writes the appends of one event-loop turn in one transaction, offsets in call order', async () => {
    const { dir, log } = setup('one-turn');
    const topic = log.topic<number>('events', { partitions: 2 });
    const before = lastTxnId(dir);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => topic.append([i], { partition: 0 })),
    );
    expect(lastTxnId(dir) - before).toBe(1);
    expect(results.map((r) => r.positions[0])).toEqual(
      Array.from({ length: 200 }, (_, i) => ({ partition: 0, offset: i })),
    );
    expect(topic.read(0, 0, 1000).map((r) => r.value)).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it('bounds a transaction to maxBatchRecords, never splitting an append', async () => {
    const { dir, log } = setup('max-batch', { maxBatchRecords: 10 });
    const topic = log.topic<number>('events', { partitions: 1 });
    const before = lastTxnId(dir);
    const calls = [
      ...Array.from({ length: 30 }, (_, i) => topic.append([i])),
      topic.append(Array.from({ length: 25 }, (_, i) => 30 + i)), // larger than the bound: alone
    ];
    const results = await Promise.all(calls);
    expect(lastTxnId(dir) - before).toBe(4);
    expect(results[30].ranges).toEqual([{ partition: 0, firstOffset: 30, endOffset: 55 }]);
    expect(topic.read(0, 0, 100).map((r) => r.value)).toEqual(Array.from({ length: 55 }, (_, i) => i));
  });

  it('many awaiting appenders: dense offsets, each call its own, per-appender order', async () => {
    const { log } = setup('appenders');
    const topic = log.topic<{ a: number; seq: number }>('events', { partitions: 3 });
    const seen = new Map<string, { a: number; seq: number }>();
    await Promise.all(
      Array.from({ length: 64 }, async (_, a) => {
        for (let seq = 0; seq < 20; seq++) {
          const { positions } = await topic.append([{ a, seq }], { key: a });
          seen.set(`${positions[0].partition}/${positions[0].offset}`, { a, seq });
        }
      }),
    );
    expect(seen.size).toBe(64 * 20);
    const last = new Map<number, number>();
    for (let p = 0; p < 3; p++) {
      const records = topic.read(p, 0, 10_000);
      expect(records.map((r) => r.offset)).toEqual(Array.from({ length: records.length }, (_, i) => i));
      for (const r of records) {
        expect(seen.get(`${p}/${r.offset}`)).toEqual(r.value);
        expect(r.value.seq).toBe((last.get(r.value.a) ?? -1) + 1);
        last.set(r.value.a, r.value.seq);
      }
    }
  });

  it('a record that cannot be encoded rejects its own call only', async () => {
    const { log } = setup('encoding');
    const topic = log.topic<unknown>('events', { partitions: 1 });
    const calls = [topic.append(['a']), topic.append(['b', { bad: () => 1 }]), topic.append(['c'])];
    const [a, bad, c] = await Promise.allSettled(calls);
    expect(bad.status).toBe('rejected');
    expect((bad as PromiseRejectedResult).reason).toBeInstanceOf(LogRecordEncodingError);
    expect(a.status === 'fulfilled' && a.value.positions).toEqual([{ partition: 0, offset: 0 }]);
    expect(c.status === 'fulfilled' && c.value.positions).toEqual([{ partition: 0, offset: 1 }]);
    expect(topic.read(0, 0, 10).map((r) => r.value)).toEqual(['a', 'c']);
  });

  it('transactions in one group: a repeated id is a duplicate, markers are pruned in order', async () => {
    const { dir, log } = setup('transactions');
    const topic = log.topic<string>('events', { partitions: 1, transactionMarkers: 2 });
    const before = lastTxnId(dir);
    const results = await Promise.all([
      topic.appendTransaction(['t1'], { transactionId: 't1' }),
      topic.appendTransaction(['t1 again'], { transactionId: 't1' }),
      topic.appendTransaction(['t2'], { transactionId: 't2' }),
      topic.appendTransaction(['t3'], { transactionId: 't3' }),
      topic.appendTransaction(['t3 again'], { transactionId: 't3' }),
    ]);
    expect(lastTxnId(dir) - before).toBe(1);
    expect(results.map((r) => r.state)).toEqual([
      'appended',
      'duplicate',
      'appended',
      'appended',
      'duplicate',
    ]);
    expect(topic.read(0, 0, 10).map((r) => r.value)).toEqual(['t1', 't2', 't3']);
    // Two markers kept: t1's was pruned inside the group, so t1 appends again; t3 is still known.
    const again = await Promise.all([
      topic.appendTransaction(['t3 later'], { transactionId: 't3' }),
      topic.appendTransaction(['t1 later'], { transactionId: 't1' }),
    ]);
    expect(again.map((r) => r.state)).toEqual(['duplicate', 'appended']);
  });

  it('retention applies inside a group: the partition keeps its newest records, offsets dense', async () => {
    const { log } = setup('retention');
    const record = 'x'.repeat(20);
    const stored = RECORD_HEADER_BYTES + 21;
    const topic = log.topic<string>('events', { partitions: 1, retention: { maxBytes: stored * 5 } });
    await Promise.all(Array.from({ length: 40 }, () => topic.append([record])));
    expect(topic.endOffset(0)).toBe(40);
    expect(topic.startOffset(0)).toBe(35);
    expect(topic.read(0, 0, 100).map((r) => r.offset)).toEqual([35, 36, 37, 38, 39]);
    await expect(topic.enforceRetention()).resolves.toBe(0);
  });

  it("durability 'os' appends and reads back; one process cannot mix durabilities on a directory", async () => {
    const { dir, log } = setup('os', { durability: 'os' });
    const topic = log.topic<number>('events', { partitions: 1 });
    await Promise.all([topic.append([1]), topic.append([2])]);
    expect(topic.read(0, 0, 10).map((r) => r.value)).toEqual([1, 2]);
    expect(() => openLog(dir, { durability: 'fsync' })).toThrow(InvalidOptionError);
    expect(() => openLog(dir)).toThrow(InvalidOptionError);
    await openLog(dir, { durability: 'os' }).close();
  });

  it('checks its options', () => {
    const t = tempLogDir('options');
    cleanups.push(t.remove);
    expect(() => openLog(t.dir, { durability: 'never' as 'os' })).toThrow(InvalidOptionError);
    expect(() => openLog(t.dir, { lingerMs: -1 })).toThrow(InvalidOptionError);
    expect(() => openLog(t.dir, { maxBatchRecords: 0 })).toThrow(InvalidOptionError);
    expect(() => openLog(t.dir, { pollMs: 1.5 })).toThrow(InvalidOptionError);
    expect(() => openLog(t.dir, { linger: 1 } as never)).toThrow(InvalidOptionError);
  });
});
