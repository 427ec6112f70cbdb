/**
 * The demo's click feed: the main thread appends the click stream to a topic of the embedded log
 * at the offered rate while the job runs, like a service appending events from its request
 * handlers. Every `tickMs` it appends the clicks that are due by then (`rate` per second since the
 * start), each to partition `seq mod partitions` (so a partition holds its clicks in `seq` order),
 * stamped with the wall-clock time of the append call. It uses the asynchronous `append` (the
 * appends of one tick, one per partition, share one group-committed LMDB transaction and fsync;
 * nothing blocks the event loop); when an append takes longer than a tick, the next batch is
 * simply larger. Each click's append latency (its append's own call → its promise resolved, i.e.
 * durable under the log's default fsync durability; building the tick's clicks and encoding the
 * partitions appended before it are the demo's, not the append's) is recorded once per click, so
 * its percentiles are per click.
 *
 * Beside it the feed samples the main thread's event-loop delay while it appends
 * (`monitorEventLoopDelay`, 1 ms resolution): the append path needs the main thread twice per
 * group (to plan the group, and to run the commit's resolution), so a starved or blocked event
 * loop shows up in the append latency; the two figures side by side tell a slow disk from a
 * busy CPU.
 */

import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Topic } from '../log/topic.js';
import { LatencyRecorder, type LatencySummary } from '../report/latency-recorder.js';
import { clickPartition, loggedClickAt } from './demo-clicks.js';
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
  /** The main thread's event-loop delay while the feed ran, ms; null before any sample. */
  eventLoopDelay(): LatencySummary | null;
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
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
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
    loopDelay.enable();
    try {
      await appendUntilDone(start);
    } finally {
      loopDelay.disable();
    }
    return next;
  };
  const appendUntilDone = async (start: number): Promise<void> => {
    while (next < o.n && !stopped) {
      const now = wallClockMs();
      const due = Math.min(o.n, Math.floor(((now - start) * o.rate) / 1000) + 1);
      if (due > next) {
        const batches: LoggedClick[][] = Array.from({ length: o.partitions }, () => []);
        for (let seq = next; seq < due; seq++) {
          batches[clickPartition(seq, o.partitions)].push(loggedClickAt(seq, o.users, now));
        }
        await Promise.all(
          batches.map((batch, partition) => {
            if (batch.length === 0) return null;
            // From this append's own call: not the tick's click building, nor the encoding of the
            // partitions appended before it in this tick (both synchronous, both the demo's).
            const calledAt = wallClockMs();
            return topic.append(batch, { partition }).then(() => {
              const ms = wallClockMs() - calledAt;
              for (let i = 0; i < batch.length; i++) appendLatency.record(ms);
            });
          }),
        );
        next = due;
      }
      if (next < o.n && !stopped) await sleep();
    }
  };
  return {
    appended: () => next,
    appendLatency,
    eventLoopDelay: () => loopDelaySummary(loopDelay),
    done: run(),
    stop() {
      stopped = true;
      wake?.();
    },
  };
}

/** An event-loop delay histogram (ns) as a latency summary in ms; null before any sample. */
function loopDelaySummary(h: ReturnType<typeof monitorEventLoopDelay>): LatencySummary | null {
  if (h.count === 0) return null;
  const ms = (ns: number) => ns / 1e6;
  return {
    count: h.count,
    p50: ms(h.percentile(50)),
    p99: ms(h.percentile(99)),
    p999: ms(h.percentile(99.9)),
    max: ms(h.max),
    mean: ms(h.mean),
  };
}
