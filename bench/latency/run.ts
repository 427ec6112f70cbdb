/**
 * End-to-end latency, exactly-once vs at-least-once: the keyed two-input job
 * `bench/jobs/two-input-latency-job.mjs` (two rate-limited sources → connect → keyBy → keyed
 * co-process → sink) at a fixed input rate well below capacity, checkpoints every 200 ms, in two
 * scenarios:
 *   - no skew: both inputs steady;
 *   - slow input: source B's task stalls 30 ms every 130 ms (see the job), so a barrier often
 *     reaches the co-process later on B than on A, and exactly-once alignment holds input A back.
 * Latency = sink receive − source emit per record (wall clocks comparable across threads), in
 * HDR histograms per input, merged over subtasks and rounds; the first second of each run is not
 * recorded. Reported: p50/p99/p99.9/max of all records and of input A alone, the ratios to
 * at-least-once per scenario, and the mean alignment time from `JobResult.checkpoints`.
 * Modes: exactly-once (aligned), exactly-once unaligned, at-least-once; a mode this build's
 * `resolveJobOptions` rejects (unaligned, before it lands) is skipped with the reason printed.
 *
 *   node --expose-gc --import tsx bench/latency/run.ts [--quick] [--json PATH] [--rounds R] [--warmup W]
 *
 * Full: 20 s per run, 3 rounds (cases rotated), 5 000 records/s per source, parallelism 1 (three
 * tasks: two sources and the co-process; the alignment is across the two inputs). --quick: 4 s
 * per run, 1 round. `--n` is the records per source per run (overrides the duration).
 */

import path from 'node:path';
import type { CheckpointingOptions, CompletedCheckpointStats } from 'weir';
import { resolveJobOptions } from '../../dist/coordinator/job-options.js';
import {
  BENCH_ARGS_USAGE,
  formatMachineInfo,
  formatRatio,
  LatencyRecorder,
  type LatencySummary,
  machineInfo,
  parseBenchArgs,
  printTable,
  resultsPath,
  runInterleaved,
  type TableRow,
  writeJson,
} from '../harness/index.js';
import { commandLine, type ReportChart, type SuiteReport } from '../harness/suite-report.js';
import { runWeirJob } from '../harness/weir-job-run.js';

const JOB = new URL('../jobs/two-input-latency-job.mjs', import.meta.url);
const RATE = 5000;
const INTERVAL_MS = 200;
const PARALLELISM = 1;
/**
 * The slow input: B stalls 30 ms every 130 ms. The period is not a divisor or multiple of the
 * checkpoint interval, so triggers land at every phase of the stall cycle rather than locking on one.
 */
const STALL = { stallMs: 30, stallEvery: 130 };

const args = parseBenchArgs();
if (args.help) {
  process.stdout.write(`usage: node --import tsx bench/latency/run.ts ${BENCH_ARGS_USAGE}\n`);
  process.exit(0);
}
const seconds = args.n !== undefined ? args.n / RATE : args.quick ? 4 : 20;
const rounds = args.rounds ?? (args.quick ? 1 : 3);
const warmup = args.warmup ?? 0;
const jsonPath = args.json ?? resultsPath(args.quick ? 'latency-quick.json' : 'latency.json');

/** A checkpointing configuration under test; `name` is how the tables show it. */
interface Mode {
  readonly name: 'EO' | 'EO unaligned' | 'ALO';
  readonly checkpointing: CheckpointingOptions;
}
interface Scenario {
  readonly name: string;
  readonly stallMs: number;
  readonly stallEvery: number;
}
const SCENARIOS: readonly Scenario[] = [
  { name: 'no skew', stallMs: 0, stallEvery: STALL.stallEvery },
  { name: 'slow input B', ...STALL },
];
const ALL_MODES: readonly Mode[] = [
  { name: 'EO', checkpointing: { interval: INTERVAL_MS, mode: 'exactly-once' } },
  { name: 'EO unaligned', checkpointing: { interval: INTERVAL_MS, mode: 'exactly-once', unaligned: true } },
  { name: 'ALO', checkpointing: { interval: INTERVAL_MS, mode: 'at-least-once' } },
];

/** Why this build cannot run a mode (resolveJobOptions rejects it, e.g. unaligned not there yet), or null. */
function unavailable(mode: Mode): string | null {
  try {
    resolveJobOptions({ checkpointing: mode.checkpointing });
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}
const skipped = ALL_MODES.flatMap((m) => {
  const reason = unavailable(m);
  return reason === null ? [] : [{ name: m.name, reason }];
});
const MODES = ALL_MODES.filter((m) => !skipped.some((s) => s.name === m.name));

interface LatencyReport {
  readonly subtask: number;
  readonly received: number;
  readonly a: string;
  readonly b: string;
}
interface LatencySample {
  readonly records: number;
  readonly ms: number;
  readonly a: LatencyRecorder;
  readonly b: LatencyRecorder;
  readonly checkpoints: readonly CompletedCheckpointStats[];
}

async function runCase(scenario: Scenario, mode: Mode): Promise<LatencySample> {
  const { result, reports, startedAt, doneAt } = await runWeirJob<LatencyReport>(
    JOB,
    {
      parallelism: PARALLELISM,
      args: {
        rate: String(RATE),
        seconds: String(seconds),
        stallMs: String(scenario.stallMs),
        stallEvery: String(scenario.stallEvery),
        warmupMs: '1000',
      },
      checkpointing: mode.checkpointing,
    },
    { reportSink: 'latency' },
  );
  const a = new LatencyRecorder();
  const b = new LatencyRecorder();
  let received = 0;
  for (const r of reports) {
    a.add(LatencyRecorder.decode(r.a));
    b.add(LatencyRecorder.decode(r.b));
    received += r.received;
  }
  const expected = 2 * Math.round(RATE * seconds);
  if (received !== expected)
    throw new Error(`latency job: sink received ${received} records, expected ${expected}`);
  return { records: received, ms: doneAt - startedAt, a, b, checkpoints: result.checkpoints };
}

const cases = SCENARIOS.flatMap((scenario) =>
  MODES.map((mode) => ({ name: `${scenario.name} ${mode.name}`, scenario, mode })),
);

const machine = machineInfo();
const command = commandLine('bench/latency/run.ts');
process.stdout.write(
  `latency: two-input keyed job, ${RATE} records/s per source, ${seconds} s per run, parallelism ${PARALLELISM}, ` +
    `checkpoints every ${INTERVAL_MS} ms; slow input: B stalls ${STALL.stallMs} ms every ${STALL.stallEvery} ms\n` +
    `machine: ${formatMachineInfo(machine)}\n` +
    `rounds: ${rounds} (+${warmup} warmup), cases rotated; histograms merged over rounds\n` +
    `command: ${command}\n` +
    skipped.map((m) => `skipped ${m.name}: ${m.reason}\n`).join('') +
    '\n',
);

const result = await runInterleaved<LatencySample>(
  cases.map((c) => ({ name: c.name, run: () => runCase(c.scenario, c.mode) })),
  {
    rounds,
    warmup,
    baseline: cases.find((c) => c.mode.name === 'ALO')!.name,
    onSample({ name, round, warmup: isWarmup, sample }) {
      const all = new LatencyRecorder();
      all.add(sample.a);
      all.add(sample.b);
      const s = all.summary();
      process.stderr.write(
        `  round ${round + 1}/${warmup + rounds}${isWarmup ? ' (warmup)' : ''}  ${name}: ` +
          `p50 ${s.p50} ms, p99 ${s.p99} ms, ${sample.checkpoints.length} checkpoints\n`,
      );
    },
  },
);

interface Merged {
  readonly name: string;
  readonly scenario: string;
  readonly mode: Mode['name'];
  readonly all: LatencySummary;
  readonly inputA: LatencySummary;
  readonly inputB: LatencySummary;
  readonly checkpoints: number;
  readonly meanAlignmentMs: number;
  readonly maxAlignmentMs: number;
}
const merged: Merged[] = result.cases.map((c, i) => {
  const a = new LatencyRecorder();
  const b = new LatencyRecorder();
  for (const s of c.samples) {
    a.add(s.a);
    b.add(s.b);
  }
  const all = new LatencyRecorder();
  all.add(a);
  all.add(b);
  const stats = c.samples.flatMap((s) => s.checkpoints);
  const alignment = stats.map((s) => s.maxAlignmentDurationMs);
  return {
    name: c.name,
    scenario: cases[i].scenario.name,
    mode: cases[i].mode.name,
    all: all.summary(),
    inputA: a.summary(),
    inputB: b.summary(),
    checkpoints: stats.length / c.samples.length,
    meanAlignmentMs: alignment.reduce((x, y) => x + y, 0) / Math.max(1, alignment.length),
    maxAlignmentMs: Math.max(0, ...alignment),
  };
});

const f = (ms: number): string => (Number.isFinite(ms) ? ms.toFixed(2) : '-');
const rows: TableRow[] = merged.map((m) => ({
  scenario: m.scenario,
  mode: m.mode,
  records: m.all.count,
  'p50 ms': f(m.all.p50),
  'p99 ms': f(m.all.p99),
  'p99.9 ms': f(m.all.p999),
  'max ms': f(m.all.max),
  'A p99 ms': f(m.inputA.p99),
  'A p99.9 ms': f(m.inputA.p999),
  'checkpoints/run': m.checkpoints.toFixed(0),
  'alignment mean/max ms': `${f(m.meanAlignmentMs)} / ${f(m.maxAlignmentMs)}`,
}));
/** Each non-ALO case against ALO of the same scenario (numbers; the table formats them). */
const ratios = SCENARIOS.flatMap((s) => {
  const alo = merged.find((m) => m.scenario === s.name && m.mode === 'ALO')!;
  return merged
    .filter((m) => m.scenario === s.name && m !== alo)
    .map((m) => ({
      scenario: s.name,
      ratio: `${m.mode}/ALO`,
      p50: m.all.p50 / alo.all.p50,
      p99: m.all.p99 / alo.all.p99,
      p999: m.all.p999 / alo.all.p999,
      inputAp99: m.inputA.p99 / alo.inputA.p99,
    }));
});
const ratioRows: TableRow[] = ratios.map((r) => ({
  scenario: r.scenario,
  ratio: r.ratio,
  p50: formatRatio(r.p50),
  p99: formatRatio(r.p99),
  'p99.9': formatRatio(r.p999),
  'input A p99': formatRatio(r.inputAp99),
}));
printTable(rows);
process.stdout.write('\n');
printTable(ratioRows);
process.stdout.write(
  '\nlatency = sink receive − source emit per record (first second of each run not recorded); ' +
    'goal: EO p99 ≤ 1.2× ALO p99 without skew.\n',
);

const charts: ReportChart[] = [
  {
    title: 'p99 latency relative to at-least-once (goal for EO ≤ 1.2× without skew)',
    unit: '×',
    bars: ratios.map((r) => ({ label: `${r.scenario}: ${r.ratio}`, value: r.p99 })),
    reference: { value: 1.2, label: 'goal 1.2×' },
  },
  {
    title: 'p99 latency (ms)',
    unit: ' ms',
    bars: merged.map((m) => ({ label: m.name, value: m.all.p99 })),
  },
];
const report: SuiteReport = {
  suite: 'latency',
  title: 'end-to-end latency of a keyed two-input job: exactly-once vs at-least-once',
  command,
  machine: formatMachineInfo(machine),
  notes: [
    `${RATE} records/s per source, ${seconds} s per run, ${rounds} rounds, parallelism ${PARALLELISM}, checkpoints every ${INTERVAL_MS} ms.`,
    `slow input B: its source task stalls ${STALL.stallMs} ms every ${STALL.stallEvery} ms (records stamped after the stall).`,
    ...skipped.map((m) => `skipped ${m.name}: ${m.reason}`),
  ],
  tables: [
    { title: 'latency (all records; input A alone)', rows },
    { title: 'relative to at-least-once', rows: ratioRows },
  ],
  charts,
};
writeJson(jsonPath, {
  benchmark: 'latency',
  job: 'bench/jobs/two-input-latency-job.mjs',
  unit: 'milliseconds, sink receive − source emit',
  command,
  machine,
  params: {
    ratePerSource: RATE,
    seconds,
    rounds,
    warmup,
    parallelism: PARALLELISM,
    checkpointIntervalMs: INTERVAL_MS,
    slowInput: STALL,
    quick: args.quick,
  },
  skipped,
  order: result.order,
  cases: merged,
  ratiosToAtLeastOnce: ratios,
  report,
});
process.stdout.write(`wrote ${path.relative(process.cwd(), jsonPath)}\n`);
