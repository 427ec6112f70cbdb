/**
 * The demo's click feed: the main thread appends the click stream to a topic of the embedded log
 * at the offered rate while the job runs, like a service appending events from its request
 * handlers. Every `tickMs` it appends the clicks that are due by then (`rate` per second since the
 * start), each to partition `seq mod partitions` (so a partition holds its clicks in `seq` order),
 * stamped with the wall-clock time of the append call. It uses the asynchronous `append` (the
 * appends of one tick, one per partition, share one group-committed LMDB transaction and fsync;
 * nothing blocks the event loop); when an append takes longer than a tick, the next batch is
 * simply larger. Each click's append latency (the call → its promise resolved, i.e. durable under
 * the log's default fsync durability) is recorded once per click, so its percentiles are per click.
 */

import type { Topic } from '../log/topic.js';
import { LatencyRecorder } from '../report/latency-recorder.js';
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
  /** Append call → durable, ms, one value per click appended so far. */
  readonly appendLatency: LatencyRecorder;
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
  const appendLatency = new LatencyRecorder();
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
          batches.map((batch, partition) =>
            batch.length > 0
              ? topic.append(batch, { partition }).then(() => {
                  const ms = wallClockMs() - now;
                  for (let i = 0; i < batch.length; i++) appendLatency.record(ms);
                })
              : null,
          ),
        );
        next = due;
      }
      if (next < o.n && !stopped) await sleep();
    }
    return next;
  };
  return {
    appended: () => next,
    appendLatency,
    done: run(),
    stop() {
      stopped = true;
      wake?.();
    },
  };
}
