/**
 * Worker threads appending asynchronously may be terminated at any moment (the runtime tears down
 * every worker of a failed execution). Afterwards the log must still be writable by everyone and
 * consistent: lmdb-js cannot release the write lock of a thread terminated while the lock is
 * taken on its behalf, so the log must never take it while the thread is mid-write.
 */
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { openLog } from '../../../src/log/index.js';
import { tempLogDir } from './helpers.js';

const ROUNDS = 10;

/** Rejects when `promise` has not settled after `ms` (a hang would otherwise stall the test run). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('appending worker threads terminated mid-append', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('leave the log writable and consistent', async () => {
    const t = tempLogDir('terminate');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    const topic = log.topic<{ worker: number; seq: number }>('events', { partitions: 3 });
    let seed = 0x7e57;
    const next = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let round = 0; round < ROUNDS; round++) {
      const workers = [0, 1].map(
        (w) =>
          new Worker(new URL('./fixtures/log-append-loop.mjs', import.meta.url), {
            workerData: { dir: t.dir, worker: round * 2 + w },
          }),
      );
      // Terminate both once each completed a seeded number of appends, i.e. at an arbitrary point
      // of their next ones. (Not during startup: opening a log creates its sub-databases in short
      // synchronous transactions, a window lmdb-js gives every handle, checkpoint storage too.)
      const stopAfter = 1 + Math.floor(next() * 4);
      await within(
        Promise.all(
          workers.map(
            (worker) =>
              new Promise<void>((resolve, reject) => {
                worker.on('error', reject);
                worker.on('message', (n: number) => n >= stopAfter && resolve());
              }),
          ),
        ),
        20_000,
        `round ${round}: appends`,
      );
      await within(Promise.all(workers.map((w) => w.terminate())), 10_000, `round ${round}: terminate`);
      // Everyone can still write: asynchronously and synchronously.
      await within(
        topic.append([{ worker: -1, seq: round }], { partition: round % 3 }),
        10_000,
        `round ${round}: append`,
      );
      topic.appendSync([{ worker: -2, seq: round }], { partition: round % 3 });
    }
    // Consistent: dense offsets, and each worker's records in order and without gaps per key.
    let total = 0;
    for (let p = 0; p < 3; p++) {
      const records = topic.read(p, 0, 1_000_000);
      expect(records.map((r) => r.offset)).toEqual(Array.from({ length: topic.endOffset(p) }, (_, i) => i));
      total += records.length;
    }
    expect(total).toBeGreaterThan(2 * ROUNDS);
  });
});
