/**
 * The job `weir demo` runs: a click stream, keyed counts, a transactional sink.
 *
 *   clicks  →  keyBy(page): page views so far  →  keyBy(user): clicks of the user so far  →  sink
 *
 * Every click yields one output record `{ seq, user, page, pageViews, userClicks, emittedAt }`
 * (plus the probe's stamps), so the output can be checked click by click.
 *
 * The seam: the source and the sink are chosen in {@link clickStream} and {@link resultSink}
 * only. Today the clicks are generated from `sources.sequence` (deterministically, see
 * `demo-clicks.ts`) and the sink is `sinks.collect` (transactional under exactly-once). To run
 * the intended job, switch `clickStream` to read clicks appended to the embedded log, switch
 * `resultSink` to the transactional file sink, and add the windowed aggregation on `ts` after
 * the keyed counts; `demo-verify.ts` and the runner stay as they are.
 *
 * Arguments (strings, from the runner): `n` clicks, `rate` clicks/s in total, `users`,
 * `telemetry` (BroadcastChannel name, optional), `crashFile` and `crashAfter` (sink subtask 0
 * crashes on attempt 0 once it received that many clicks and a checkpoint completed; no crash
 * without `crashFile`).
 */

import type { DataStream } from '../api/data-stream.js';
import { defineJob } from '../api/define-job.js';
import type { Collector, KeyedContext } from '../api/functions.js';
import type { Sink } from '../api/source.js';
import type { StreamEnvironment } from '../api/stream-environment.js';
import { collect } from '../connectors/collect-sink.js';
import { sequence } from '../connectors/sequence-source.js';
import { InvalidOptionError } from '../errors.js';
import { clickAt } from './demo-clicks.js';
import { type CrashPlan, probeSink } from './demo-probe-sink.js';
import type { CountedClick, PageCountedClick, ProbeStamp, TimedClick } from './demo-records.js';
import { TelemetryPoster, wallClockMs } from './demo-telemetry.js';

/** Name of the collect sink: `JobResult.sinks[DEMO_SINK]` holds the output. */
export const DEMO_SINK = 'counted-clicks';

export interface DemoJobArgs {
  readonly n: number;
  readonly rate: number;
  readonly users: number;
  readonly telemetry: string | undefined;
  readonly crashFile: string | undefined;
  readonly crashAfter: number;
}

/** Parses the job's string arguments; a bad value is an InvalidOptionError naming it. */
export function parseDemoJobArgs(args: Readonly<Record<string, string>>): DemoJobArgs {
  const num = (name: string, fallback: number, min: number): number => {
    const raw = args[name];
    if (raw === undefined) return fallback;
    const v = Number(raw);
    if (!Number.isFinite(v) || v < min) {
      throw new InvalidOptionError(`args.${name}`, `must be a number ≥ ${min}, got ${JSON.stringify(raw)}`);
    }
    return v;
  };
  return {
    n: Math.floor(num('n', 100_000, 1)),
    rate: num('rate', 25_000, 1),
    users: Math.floor(num('users', 5_000, 1)),
    telemetry: args.telemetry || undefined,
    crashFile: args.crashFile || undefined,
    crashAfter: Math.floor(num('crashAfter', 1, 1)),
  };
}

// ---- the seam: where the clicks come from and where the counts go ----------------------------

/** Today: clicks generated from a rate-limited sequence (replayable: positions are checkpointed). */
function clickStream(
  env: StreamEnvironment,
  a: DemoJobArgs,
  telemetry: TelemetryPoster | null,
): DataStream<TimedClick> {
  return env
    .fromSource(sequence({ from: 0, to: a.n, ratePerSec: a.rate }), 'click stream')
    .map((seq: number, ctx): TimedClick => {
      const emittedAt = wallClockMs();
      if (telemetry?.due(emittedAt)) {
        telemetry.post({ kind: 'read', subtask: ctx.subtaskIndex, attempt: ctx.attempt, seq, t: emittedAt });
      }
      return { ...clickAt(seq, a.users), emittedAt };
    })
    .name('to click event');
}

/** Today: the collect sink (two-phase commit under exactly-once). */
function resultSink(): Sink<CountedClick & ProbeStamp> {
  return collect<CountedClick & ProbeStamp>(DEMO_SINK);
}

// ---- the keyed counts -------------------------------------------------------------------------

function countPageViews(c: TimedClick, ctx: KeyedContext<string>, out: Collector<PageCountedClick>): void {
  const views = ctx.state.value<number>('views');
  const n = (views.value() ?? 0) + 1;
  views.update(n);
  out.collect({ ...c, pageViews: n });
}

function countUserClicks(c: PageCountedClick, ctx: KeyedContext<string>, out: Collector<CountedClick>): void {
  const clicks = ctx.state.value<number>('clicks');
  const n = (clicks.value() ?? 0) + 1;
  clicks.update(n);
  out.collect({
    seq: c.seq,
    user: c.user,
    page: c.page,
    pageViews: c.pageViews,
    userClicks: n,
    emittedAt: c.emittedAt,
  });
}

export default defineJob((env, args) => {
  const a = parseDemoJobArgs(args);
  // One poster per thread (each worker builds its own graph); the channel opens on first use.
  const telemetry = a.telemetry ? new TelemetryPoster(a.telemetry) : null;
  const sinkTelemetry = a.telemetry ? new TelemetryPoster(a.telemetry) : null;
  const crash: CrashPlan | null = a.crashFile
    ? {
        subtask: 0,
        afterRecords: a.crashAfter,
        file: a.crashFile,
      }
    : null;
  clickStream(env, a, telemetry)
    .keyBy((c) => c.page)
    .process(countPageViews)
    .name('page views')
    .keyBy((c) => c.user)
    .process(countUserClicks)
    .name('user clicks')
    .sinkTo(probeSink<CountedClick>(resultSink(), { telemetry: sinkTelemetry, crash }))
    .name('probe + collect');
});
