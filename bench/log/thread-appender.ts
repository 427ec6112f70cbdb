/**
 * One worker thread of the log bench's multi-thread cases: opens its own handle on the log,
 * reports ready, waits for the start message, then runs `concurrency` closed-loop
 * single-record appenders for `seconds` and posts its append count and latencies.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type Durability, openLog } from '../../src/log/index.js';

interface Job {
  readonly dir: string;
  readonly durability: Durability;
  readonly concurrency: number;
  readonly firstAppender: number;
  readonly seconds: number;
}

const job = workerData as Job;
const log = openLog(job.dir, { durability: job.durability });
const topic = log.topic('clicks');
parentPort!.postMessage({ kind: 'ready' });
// A message, not Atomics.waitAsync: a pending waitAsync does not keep the thread alive.
await new Promise((resolve) => parentPort!.once('message', resolve));
const latencies: number[] = [];
const end = performance.now() + job.seconds * 1000;
await Promise.all(
  Array.from({ length: job.concurrency }, async (_, i) => {
    const a = job.firstAppender + i;
    for (let seq = 0; performance.now() < end; seq++) {
      const t = performance.now();
      await topic.append(
        [
          {
            user: `u${a}`,
            page: `/product/${seq % 1000}`,
            action: 'click',
            seq,
            ts: 1_760_000_000_000 + seq,
          },
        ],
        { key: a },
      );
      latencies.push(performance.now() - t);
    }
  }),
);
await log.close();
parentPort!.postMessage({ kind: 'done', latencies: Float64Array.from(latencies) });
