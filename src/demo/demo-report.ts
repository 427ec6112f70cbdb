/**
 * The demo's results as a side-by-side table (terminal and HTML) and as a self-contained HTML
 * report: latency percentile curves and histogram for both modes, throughput over time with
 * checkpoint-completion and failure markers, and the table.
 */

import type { Durability } from '../log/log-options.js';
import type { ChartMarker, HtmlReport, ReportBlock, Tick } from '../report/index.js';
import type { LatencySummary } from './demo-latency.js';
import type { ModeMeasurements } from './demo-measurements.js';
import type { DemoRunConfig } from './demo-run.js';

/** What the job is, in words the demo prints and the report repeats (no features it does not use). */
export function describeDemoJob(config: DemoRunConfig): string[] {
  const n = (v: number) => v.toLocaleString('en-US');
  return [
    `Input: the main thread appends a click stream of ${n(config.records)} clicks ({ seq, user, page, ts }, ${n(config.users)} users, skewed, deterministic; ts is event time up to 2 s out of order) to a topic of the embedded log (${config.parallelism} partitions, LMDB in a temporary directory${config.durability === 'os' ? "; durability 'os': appends are not fsynced" : ''}) at ${n(config.rate)} clicks/s, every 10 ms, starting once the job is running (its first checkpoint completed), like a service appending from its request handlers.`,
    'Source: sources.log reads the topic while it is being appended to (unbounded) and ends once it has read every partition up to its final end offset, known from the click count: a bounded log source would stop at the end offsets it saw when the job started.',
    'Keyed counts: keyBy(page) → page views so far (ValueState), then keyBy(user) → clicks of the user so far (ValueState): one output record per click.',
    'Windowed aggregation: event-time timestamps and watermarks from ts (bounded out-of-orderness 2 s), keyBy(user) → clicks per user per 1 s tumbling window (aggregate).',
    'Both results go to sinks.file (jsonl), one directory each: two-phase commit under exactly-once (part files committed when a checkpoint completes), parts committed at every barrier under at-least-once. The check reads the committed part files back.',
    `Parallelism ${config.parallelism} (every operator subtask in its own worker thread, ring channels between them${config.workerNice > 0 ? `; those threads run ${config.workerNice} nice levels below the appending main thread, as a service would rank its request path above a background job` : ''}), checkpoints every ${config.checkpointIntervalMs} ms to LMDB in a temporary directory.`,
    `Failure: the counts sink subtask 0 kills its worker thread (process.exit) at the first checkpoint barrier after ~${Math.round(config.crashAt * 100)}% of its clicks (once at least one checkpoint has completed), right after the file sink pre-committed and before the checkpoint can complete: under exactly-once that part file is only pending and is discarded, under at-least-once it is already committed. The job restarts from the latest completed checkpoint and the log source rewinds to its offsets, so the clicks since that checkpoint are processed again.`,
  ];
}

const fmt = (v: number, digits = 1): string =>
  Number.isFinite(v)
    ? v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';
const int = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a');
const pcts = (l: LatencySummary | null): string =>
  l ? `${fmt(l.p50)} / ${fmt(l.p99)} / ${fmt(l.p999)}` : 'n/a';

export function correctnessText(m: ModeMeasurements): string {
  const v = m.verdict;
  if (m.mode === 'exactly-once') {
    return v.ok
      ? `exact: ${int(v.distinct)} clicks, each once, counts exact; ${int(v.windowRecords)} windows exact`
      : `FAILED: ${v.missing} missing, ${v.duplicates} duplicates, ${v.corrupt} corrupt, ${v.countErrors} wrong counts; windows: ${v.windowsLost} lost, ${v.windowDuplicates} duplicates, ${v.windowCountErrors} wrong counts, ${v.windowsCorrupt} corrupt`;
  }
  return v.ok
    ? `nothing lost; ${int(v.duplicates)} duplicates; counts overshoot by ${int(v.overcount)}; windows: ${int(v.windowDuplicates)} duplicates, ${int(v.windowCountErrors)} wrong counts (overshoot ${int(v.windowOvercount)})`
    : `FAILED: ${v.missing} missing, ${v.corrupt} corrupt, ${v.windowsLost} windows lost, ${v.windowsCorrupt} corrupt (${int(v.duplicates)} duplicates)`;
}

/** The append latency row's label: what "done" means depends on the log's durability. */
export function appendLatencyLabel(durability: Durability): string {
  return durability === 'fsync'
    ? 'append latency p50 / p99 / p99.9 (ms, call → durable)'
    : "append latency p50 / p99 / p99.9 (ms, call → written to the OS; durability 'os': NO fsync, opt-in)";
}

/** The side-by-side table: one column per mode. */
export function demoTable(
  runs: readonly ModeMeasurements[],
  durability: Durability = 'fsync',
): { head: string[]; rows: string[][] } {
  const head = ['', ...runs.map((r) => r.mode)];
  const row = (label: string, f: (m: ModeMeasurements) => string) => [label, ...runs.map(f)];
  const rows = [
    row('throughput (clicks/s, first append → last at sink)', (m) => int(m.throughput)),
    row(appendLatencyLabel(durability), (m) => pcts(m.appendLatency)),
    row('main-thread event-loop delay p50 / p99 / max (ms, while appending)', (m) =>
      m.feedLoopDelay
        ? `${fmt(m.feedLoopDelay.p50)} / ${fmt(m.feedLoopDelay.p99)} / ${fmt(m.feedLoopDelay.max)}`
        : 'n/a',
    ),
    row('latency p50 / p99 / p99.9 (ms, append → sink)', (m) => pcts(m.latency)),
    row('latency to committed file p50 / p99 / p99.9 (ms)', (m) => pcts(m.visibleLatency)),
    row('checkpoints completed', (m) => int(m.checkpointsCompleted)),
    row('mean checkpoint duration (ms)', (m) => fmt(m.meanCheckpointMs)),
    row('mean alignment time (ms, max over tasks)', (m) => fmt(m.meanAlignmentMs, 2)),
    row('restarts', (m) => int(m.restarts)),
    row('crash → restored from checkpoint', (m) =>
      m.recovery
        ? `t=${fmt(m.crashTime ?? Number.NaN, 2)} s → #${m.recovery.restoredFrom ?? '?'}`
        : 'no crash',
    ),
    row('recovery time (ms, crash → processing again)', (m) =>
      m.recovery ? int(m.recovery.recoveryMs) : 'n/a',
    ),
    row(
      'output records (counts / windows)',
      (m) => `${int(m.verdict.records)} / ${int(m.verdict.windowRecords)}`,
    ),
    row('correctness', correctnessText),
  ];
  return { head, rows };
}

/** Latency bin edges, ms: 0, 0.25, 0.5, 1, 2, …, 4096 (the last bin is open-ended). */
const LATENCY_EDGES = [0, ...Array.from({ length: 15 }, (_, i) => 0.25 * 2 ** i)];
/** Percentile curve points: x = -log10(1 - p), so 90 %, 99 %, 99.9 % are evenly spaced. */
const CURVE_X = Array.from({ length: 81 }, (_, i) => i * 0.05);
const CURVE_TICKS: Tick[] = [
  { value: 0, label: '0%' },
  { value: 1, label: '90%' },
  { value: 2, label: '99%' },
  { value: 3, label: '99.9%' },
  { value: 4, label: '99.99%' },
];

export interface DemoReportMeta {
  readonly config: DemoRunConfig;
  readonly machine: string;
  readonly date: string;
  readonly wallMs: number;
}

export function buildDemoReport(runs: readonly ModeMeasurements[], meta: DemoReportMeta): HtmlReport {
  const table = demoTable(runs, meta.config.durability);
  const blocks: ReportBlock[] = [
    {
      kind: 'paragraph',
      text: `${meta.date} · ${meta.machine} · demo wall time ${fmt(meta.wallMs / 1000)} s`,
    },
    { kind: 'list', items: describeDemoJob(meta.config) },
    { kind: 'heading', text: 'Results' },
    { kind: 'table', table: { head: table.head, rows: table.rows } },
    {
      kind: 'paragraph',
      text:
        'Latency "append → sink" is measured per click from the main thread\'s append call (the click carries that wall-clock time) to the counts sink stage (wall clock of its worker); it includes the log append (an fsync), up to one 10 ms append interval and the source\'s 10 ms idle polls. ' +
        '"To committed file" is until the part file holding the click got its final name, taken as the completion time of the first checkpoint after the one the click was sealed after (the job\'s end for the last clicks): under exactly-once that is when the file sink commits, so it includes up to one checkpoint interval and the checkpoint\'s duration; under at-least-once the part is renamed at the barrier, slightly earlier, so the figure is an upper bound. ' +
        'The percentiles include the backlog that builds after the restart, while the clicks appended during recovery are caught up: the throughput charts below show the burst. ' +
        "Under at-least-once, the duplicates are the clicks (and window results) committed at the barrier of the checkpoint the crash interrupted, processed again after the restore from the previous one; counts overshoot where, without alignment, a checkpoint's state already held clicks its source positions did not cover, so they are counted again. " +
        'The main thread appends at the offered rate: throughput is bounded by it and shows what was sustained across the crash, not the maximum (that is what `weir bench` is for).',
    },
    { kind: 'heading', text: 'Latency distribution (append → sink)' },
    {
      kind: 'line-chart',
      chart: {
        title: 'Latency by percentile',
        xLabel: 'percentile',
        yLabel: 'latency (ms)',
        xTicks: CURVE_TICKS,
        series: runs.map((m) => ({
          name: m.mode,
          points: CURVE_X.map((x) => [x, m.latencyDistribution.at(100 * (1 - 10 ** -x))] as const),
        })),
      },
    },
    {
      kind: 'histogram',
      chart: {
        title: 'Latency histogram (share of clicks per bin)',
        xLabel: 'latency (ms), bins [from, next)',
        yLabel: 'share of clicks (%)',
        bins: LATENCY_EDGES.map((e, i) => (i === LATENCY_EDGES.length - 1 ? `≥${e}` : String(e))),
        series: runs.map((m) => {
          const counts = m.latencyDistribution.binCounts(LATENCY_EDGES);
          const total = Math.max(1, m.latencyDistribution.count);
          return { name: m.mode, values: counts.map((c) => (100 * c) / total) };
        }),
      },
    },
    { kind: 'heading', text: 'Throughput over time (records received by the sink stage)' },
  ];
  const longest = Math.max(...runs.map((m) => m.durationMs / 1000));
  for (const m of runs) {
    const markers: ChartMarker[] = [
      ...m.checkpointTimes.map((c) => ({
        x: c.x,
        kind: 'checkpoint completed',
        label: `checkpoint ${c.id} completed at ${fmt(c.x, 2)} s (${fmt(c.durationMs)} ms)`,
        color: '#9a9a9a',
        dashed: true,
      })),
    ];
    if (m.appendStartTime !== null) {
      markers.push({
        x: m.appendStartTime,
        kind: 'appending starts',
        label: `the main thread starts appending at ${fmt(m.appendStartTime, 2)} s`,
        color: '#1565c0',
        dashed: true,
      });
    }
    if (m.crashTime !== null) {
      markers.push({
        x: m.crashTime,
        kind: 'worker crash',
        label: `crash at ${fmt(m.crashTime, 2)} s`,
        color: '#c62828',
      });
    }
    if (m.redeployTime !== null) {
      markers.push({
        x: m.redeployTime,
        kind: 'restarted',
        label: `restarted at ${fmt(m.redeployTime, 2)} s from checkpoint ${m.recovery?.restoredFrom ?? '?'}`,
        color: '#2e7d32',
      });
    }
    blocks.push({
      kind: 'line-chart',
      chart: {
        title: `${m.mode}: records/s at the sink stage`,
        xLabel: 'seconds since job start',
        yLabel: 'records/s',
        series: [{ name: m.mode, points: m.throughputTimeline }],
        markers,
        xDomain: [0, longest],
      },
    });
  }
  // The live dashboard's checkpoint chart (duration and alignment per checkpoint), kept here
  // after the run: the page itself lives only as long as the job's process.
  blocks.push({ kind: 'heading', text: "Checkpoints (the live dashboard's chart)" });
  blocks.push({
    kind: 'paragraph',
    text:
      "While each run lasted, its live dashboard (the URL printed at the run's start) showed the execution plan, per-task rates and backpressure, this checkpoint chart and the injected crash with its stack. " +
      'Per completed checkpoint: its end-to-end duration and the longest barrier alignment among its tasks.',
  });
  for (const m of runs) {
    if (m.checkpointTimes.length === 0) continue;
    blocks.push({
      kind: 'histogram',
      chart: {
        title: `${m.mode}: checkpoint duration and alignment (ms)`,
        xLabel: 'checkpoint id',
        yLabel: 'ms',
        bins: m.checkpointTimes.map((c) => String(c.id)),
        series: [
          { name: 'duration', values: m.checkpointTimes.map((c) => c.durationMs) },
          { name: 'longest alignment', values: m.checkpointTimes.map((c) => c.alignmentMs) },
        ],
      },
    });
  }
  blocks.push({ kind: 'heading', text: 'Recovery' });
  blocks.push({
    kind: 'table',
    table: {
      head: ['', ...runs.map((r) => r.mode)],
      rows: [
        [
          'crash → failure seen by the job client (ms)',
          ...runs.map((m) => (m.recovery ? fmt(m.recovery.detectMs) : 'n/a')),
        ],
        [
          'crash → new attempt deployed (ms)',
          ...runs.map((m) => (m.recovery ? fmt(m.recovery.redeployMs) : 'n/a')),
        ],
        [
          'crash → first record at the sink (ms)',
          ...runs.map((m) => (m.recovery ? fmt(m.recovery.recoveryMs) : 'n/a')),
        ],
        ['max alignment time (ms)', ...runs.map((m) => fmt(m.maxAlignmentMs, 2))],
        ['job wall time (s)', ...runs.map((m) => fmt(m.durationMs / 1000, 2))],
      ],
    },
  });
  const problems = runs.flatMap((m) => m.verdict.problems.map((p) => `${m.mode}: ${p}`));
  if (problems.length > 0) {
    blocks.push({ kind: 'heading', text: 'Correctness findings' }, { kind: 'list', items: problems });
  }
  return { title: 'weir demo: exactly-once vs at-least-once under a worker crash', blocks };
}
