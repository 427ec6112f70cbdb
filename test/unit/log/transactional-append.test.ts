/**
 * Transactional appends: the marker is written with the records in one LMDB transaction, so a
 * repeated commit (same handle, another handle, a reopened log, another process, or a concurrent
 * commit) appends nothing; markers are pruned per writer beyond `transactionMarkers`.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LogRecordEncodingError } from '../../../src/errors.js';
import { openLog } from '../../../src/log/index.js';
import { tempLogDir } from './helpers.js';

describe('transactional append', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('appends a transaction once, across handles, restarts and processes', async () => {
    const t = tempLogDir('tx');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    const topic = log.topic<string>('out', { partitions: 2 });
    const first = topic.appendTransactionSync(['a', 'b', 'c'], { transactionId: 'job-1/0:5', key: (r) => r });
    expect(first.state).toBe('appended');
    const again = topic.appendTransactionSync(['a', 'b', 'c'], { transactionId: 'job-1/0:5', key: (r) => r });
    expect(again).toEqual({ state: 'duplicate', transactionId: 'job-1/0:5' });
    expect(await topic.appendTransaction(['a'], { transactionId: 'job-1/0:5' })).toEqual({
      state: 'duplicate',
      transactionId: 'job-1/0:5',
    });
    // the same id of another writer is another transaction
    expect(
      (await topic.appendTransaction(['d'], { transactionId: 'job-1/0:5', writer: 'other', partition: 0 }))
        .state,
    ).toBe('appended');
    await log.close();

    // a restart: reopen the directory
    const reopened = openLog(t.dir);
    cleanups.push(() => reopened.close());
    const topic2 = reopened.topic<string>('out');
    expect(topic2.appendTransactionSync(['a', 'b', 'c'], { transactionId: 'job-1/0:5' }).state).toBe(
      'duplicate',
    );

    // another process
    const run = (transactionId: string, writer = 'default') =>
      execFileSync(
        process.execPath,
        [
          fileURLToPath(new URL('./fixtures/log-transaction.mjs', import.meta.url)),
          JSON.stringify({ dir: t.dir, topic: 'out', transactionId, writer, records: ['p'] }),
        ],
        { encoding: 'utf8' },
      );
    expect(run('job-1/0:5')).toBe('duplicate');
    expect(run('job-1/0:6')).toBe('appended');
    expect(run('job-1/0:6')).toBe('duplicate');

    const all = [0, 1].flatMap((p) => topic2.read(p, 0, 100).map((r) => r.value));
    expect(all.sort()).toEqual(['a', 'b', 'c', 'd', 'p']);
  });

  it('two concurrent commits of one transaction from two handles append it once', async () => {
    const t = tempLogDir('tx-race');
    cleanups.push(t.remove);
    const a = openLog(t.dir);
    const b = openLog(t.dir);
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    const ta = a.topic<number>('out', { partitions: 1 });
    const tb = b.topic<number>('out');
    const outcomes = await Promise.all([
      ta.appendTransaction([1, 2], { transactionId: 'x' }),
      tb.appendTransaction([1, 2], { transactionId: 'x' }),
      Promise.resolve(ta.appendTransactionSync([1, 2], { transactionId: 'x' })),
    ]);
    expect(outcomes.map((o) => o.state).sort()).toEqual(['appended', 'duplicate', 'duplicate']);
    expect(ta.read(0, 0, 10).map((r) => r.value)).toEqual([1, 2]);
  });

  it('a rejected batch writes no marker: the transaction can be committed later', () => {
    const t = tempLogDir('tx-bad');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    const topic = log.topic<unknown>('out', { partitions: 1 });
    expect(() => topic.appendTransactionSync([1, Symbol('no')], { transactionId: 'x' })).toThrow(
      LogRecordEncodingError,
    );
    expect(topic.appendTransactionSync([1, 2], { transactionId: 'x' }).state).toBe('appended');
    expect(topic.read(0, 0, 10).map((r) => r.value)).toEqual([1, 2]);
  });

  it('an empty transaction writes only its marker', () => {
    const t = tempLogDir('tx-empty');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    const topic = log.topic<number>('out', { partitions: 1 });
    expect(topic.appendTransactionSync([], { transactionId: 'e' }).state).toBe('appended');
    expect(topic.appendTransactionSync([1], { transactionId: 'e' }).state).toBe('duplicate');
    expect(topic.endOffset(0)).toBe(0);
  });

  it('keeps the newest transactionMarkers markers per writer; other writers keep theirs', () => {
    const t = tempLogDir('tx-prune');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    const topic = log.topic<number>('out', { partitions: 1, transactionMarkers: 3 });
    expect(topic.appendTransactionSync([0], { transactionId: 'b0', writer: 'B' }).state).toBe('appended');
    for (let i = 1; i <= 5; i++) topic.appendTransactionSync([i], { transactionId: `a${i}`, writer: 'A' });
    // a3..a5 kept, a1 and a2 pruned (a repeat of them would append again: the documented bound)
    expect(topic.appendTransactionSync([5], { transactionId: 'a5', writer: 'A' }).state).toBe('duplicate');
    expect(topic.appendTransactionSync([3], { transactionId: 'a3', writer: 'A' }).state).toBe('duplicate');
    expect(topic.appendTransactionSync([2], { transactionId: 'a2', writer: 'A' }).state).toBe('appended');
    // writer A's traffic did not push out writer B's marker
    expect(topic.appendTransactionSync([0], { transactionId: 'b0', writer: 'B' }).state).toBe('duplicate');
    expect(topic.read(0, 0, 100).map((r) => r.value)).toEqual([0, 1, 2, 3, 4, 5, 2]);
  });
});
