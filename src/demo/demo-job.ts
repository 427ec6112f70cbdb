/**
 * The job `weir demo` runs: clicks appended to the embedded log, keyed counts and a windowed
 * aggregation, two transactional file sinks.
 *
 *   log topic "clicks"  →  keyBy(page): page views so far  →  keyBy(user): clicks of the user so far
 *        (sources.log)                                       →  probe + sinks.file (counts/)
 *                      →  event-time timestamps from ts  →  keyBy(user).window(tumbling 1 s)
 *                                                           .aggregate(count)  →  sinks.file (windows/)
 *
 * The running counts give one output record per click `{ seq, user, page, pageViews, userClicks,
 * appendedAt }` (plus the probe's stamps), so they can be checked click by click; the windows
 * give one `{ user, start, clicks }` per user and window, checked against counts computed on the
 * main thread. The main thread appends the clicks while the job runs (`demo-feed.ts`); the source
 * ends once every partition holds all its clicks (`demo-log-source.ts`).
 *
 * Arguments (strings, from the runner): `n` clicks, `users`, `partitions` of the topic, `log` (the log directory), `topic`,
 * `counts` and `windows` (output directories), `telemetry` (BroadcastChannel name, optional),
 * `crashFile` and `crashAfter` (the counts sink subtask 0 crashes on attempt 0 once it received
 * that many clicks and a checkpoint completed; no crash without `crashFile`). The job threads'
 * priority is the runner's job option `workerNice`, not an argument.
 */

import type { CommittingSink } from '../api/committing-sink.js';
import type { DataStream } from '../api/data-stream.js';
import { defineJob } from '../api/define-job.js';
import type { Collector, KeyedContext } from '../api/functions.js';
import type { StreamEnvironment } from '../api/stream-environment.js';
import { windows } from '../api/windows.js';
import { file } from '../connectors/file-sink.js';
import { log } from '../connectors/log-source.js';
import { InvalidOptionError } from '../errors.js';
import type { Durability } from '../log/log-options.js';
import { CLICK_MAX_LATENESS_MS, DEMO_WINDOW_MS, demoWindowStart, partitionEnd } from './demo-clicks.js';
import { logUntilEnds } from './demo-log-source.js';
import { type CrashPlan, probeSink } from './demo-probe-sink.js';
import type { CountedClick, LoggedClick, PageCountedClick, ProbeStamp, WindowCount } from './demo-records.js';
import { TelemetryPoster } from './demo-telemetry.js';

export interface DemoJobArgs {
  readonly n: number;
  readonly users: number;
  /** Partitions of the topic (click `seq` is in partition `seq mod partitions`). */
  readonly partitions: number;
  readonly log: string;
  readonly topic: string;
  readonly counts: string;
  readonly windows: string;
  readonly telemetry: string | undefined;
  readonly crashFile: string | undefined;
  readonly crashAfter: number;
  /** The log's durability in the appending process (the reader's handle must match it). */
  readonly durability: Durability;
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
  const path = (name: string): string => {
    const v = args[name];
    if (typeof v !== 'string' || v === '') {
      throw new InvalidOptionError(`args.${name}`, `must be a non-empty path, got ${JSON.stringify(v)}`);
    }
    return v;
  };
  return {
    n: Math.floor(num('n', 100_000, 1)),
    users: Math.floor(num('users', 5_000, 1)),
    partitions: Math.floor(num('partitions', 1, 1)),
    log: path('log'),
    topic: args.topic || 'clicks',
    counts: path('counts'),
    windows: path('windows'),
    telemetry: args.telemetry || undefined,
    crashFile: args.crashFile || undefined,
    crashAfter: Math.floor(num('crashAfter', 1, 1)),
    durability: durabilityArg(args.durability),
  };
}

function durabilityArg(raw: string | undefined): Durability {
  if (raw === undefined || raw === '' || raw === 'fsync') return 'fsync';
  if (raw === 'os') return 'os';
  throw new InvalidOptionError('args.durability', `must be 'fsync' or 'os', got ${JSON.stringify(raw)}`);
}

// ---- the source: clicks the main thread appends to the embedded log ---------------------------

/**
 * The clicks read from the log topic, unbounded while the main thread appends and ending at the
 * partitions' known final ends. Reports, per partition, the highest click read (the progress bar).
 */
function clickStream(
  env: StreamEnvironment,
  a: DemoJobArgs,
  partitions: number,
  telemetry: (partition: number) => TelemetryPoster | null,
): DataStream<LoggedClick> {
  const source = logUntilEnds(
    log<LoggedClick>({ dir: a.log, topic: a.topic, startFrom: 'earliest', durability: a.durability }),
    (p) => partitionEnd(a.n, p, partitions),
  );
  return env
    .fromSource(source, 'clicks from the log')
    .uid('clicks')
    .map((c: LoggedClick, ctx): LoggedClick => {
      const partition = c.seq % partitions;
      const poster = telemetry(partition);
      const now = performance.timeOrigin + performance.now();
      if (poster?.due(now)) {
        poster.post({ kind: 'read', partition, attempt: ctx.attempt, seq: c.seq, t: now });
      }
      return c;
    })
    .name('progress');
}

// ---- the keyed counts -------------------------------------------------------------------------

function countPageViews(c: LoggedClick, ctx: KeyedContext<string>, out: Collector<PageCountedClick>): void {
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
    appendedAt: c.appendedAt,
  });
}

/** Counts clicks of one key in one window; the accumulator is the output record. */
const countPerWindow = {
  createAccumulator: (): WindowCount => ({ user: '', start: 0, clicks: 0 }),
  add: (c: LoggedClick, acc: WindowCount): WindowCount => ({
    user: c.user,
    start: demoWindowStart(c.ts),
    clicks: acc.clicks + 1,
  }),
  getResult: (acc: WindowCount): WindowCount => acc,
};

export default defineJob((env, args) => {
  const a = parseDemoJobArgs(args);
  // The runner creates the topic with one partition per source subtask: each subtask then reads
  // one partition, in seq order, so ts is never more than CLICK_MAX_LATENESS_MS behind the
  // highest ts its watermark generator has seen and no click is late for its window.
  const partitions = a.partitions;
  // One poster per partition and thread (each worker builds its own graph); channels open on first use.
  const posters = new Map<number, TelemetryPoster>();
  const telemetry = (p: number): TelemetryPoster | null => {
    if (!a.telemetry) return null;
    let poster = posters.get(p);
    if (!poster) posters.set(p, (poster = new TelemetryPoster(a.telemetry)));
    return poster;
  };
  const sinkTelemetry = a.telemetry ? new TelemetryPoster(a.telemetry) : null;
  const crash: CrashPlan | null = a.crashFile
    ? { subtask: 0, afterRecords: a.crashAfter, file: a.crashFile }
    : null;
  const clicks = clickStream(env, a, partitions, telemetry);

  clicks
    .keyBy((c) => c.page)
    .process(countPageViews)
    .name('page views')
    .uid('page-views')
    .keyBy((c) => c.user)
    .process(countUserClicks)
    .name('user clicks')
    .uid('user-clicks')
    .sinkTo(probeSink<CountedClick>(countsSink(a), { telemetry: sinkTelemetry, crash }))
    .name('probe + file sink (counts)')
    .uid('counts-sink');

  clicks
    .assignTimestampsAndWatermarks({ timestamp: (c) => c.ts, maxOutOfOrderness: CLICK_MAX_LATENESS_MS })
    .name('event time')
    .uid('event-time')
    .keyBy((c) => c.user)
    .window(windows.tumbling({ size: DEMO_WINDOW_MS }))
    .aggregate(countPerWindow)
    .name('clicks per user per second')
    .uid('clicks-per-window')
    .sinkTo(file<WindowCount>({ dir: a.windows, format: 'jsonl' }))
    .name('file sink (windows)')
    .uid('windows-sink');
});

function countsSink(a: DemoJobArgs): CommittingSink<CountedClick & ProbeStamp, unknown> {
  return file<CountedClick & ProbeStamp>({ dir: a.counts, format: 'jsonl' });
}
