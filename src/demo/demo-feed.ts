/**
 * The demo's click feed: the main thread appends the click stream to a topic of the embedded log
 * at the offered rate while the job runs, like a service appending events from its request
 * handlers. Every `tickMs` it appends the clicks that are due by then (`rate` per second since the
 * start), each to partition `seq mod partitions` (so a partition holds its clicks in `seq` order),
 * stamped with the wall-clock time of the append call. It uses the asynchronous `append` (the
 * appends of one tick, one per partition, share one group-committed LMDB transaction and fsync;
 * nothing blocks the event loop); when an append takes longer than a tick, the next batch is
 * simply larger.
 */

import type { Topic } from '../log/topic.js';
import { clickAt, clickPartition } from './demo-clicks.js';
import type { LoggedClick } from './demo-records.js';
import { wallClockMs } from './demo-telemetry.js';

export interface ClickFeedOptions {
  readonly n: number;
  readonly users: number;
  /** Clicks per second. */
  readonly rate: number;
  readonly partitions: number;
  /** Time between appends, ms (default 10). */
  readonly tickMs?: number;
}

export interface ClickFeed {
  /** Clicks appended so far. */
  appended(): number;
  /** Resolves with the number of clicks appended: `n`, or fewer after {@link stop}. */
  readonly done: Promise<number>;
  /** Stops appending after the append in flight (when the job failed for good). */
  stop(): void;
}

export function feedClicks(topic: Topic<LoggedClick>, o: ClickFeedOptions): ClickFeed {
  const tickMs = o.tickMs ?? 10;
  let next = 0;
  let stopped = false;
  let wake: (() => void) | null = null;
  const sleep = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = null;
        resolve();
      }, tickMs);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const run = async (): Promise<number> => {
    const start = wallClockMs();
    while (next < o.n && !stopped) {
      const now = wallClockMs();
      const due = Math.min(o.n, Math.floor(((now - start) * o.rate) / 1000) + 1);
      if (due > next) {
        const batches: LoggedClick[][] = Array.from({ length: o.partitions }, () => []);
        for (let seq = next; seq < due; seq++) {
          batches[clickPartition(seq, o.partitions)].push({ ...clickAt(seq, o.users), appendedAt: now });
        }
        await Promise.all(
          batches.map((batch, partition) => (batch.length > 0 ? topic.append(batch, { partition }) : null)),
        );
        next = due;
      }
      if (next < o.n && !stopped) await sleep();
    }
    return next;
  };
  return {
    appended: () => next,
    done: run(),
    stop() {
      stopped = true;
      wake?.();
    },
  };
}
