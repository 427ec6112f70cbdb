/**
 * Pipeline benchmark runner: every implementation of the pipeline in `pipeline-spec.ts` (the
 * baselines and weir at parallelism 1 and 2 with checkpointing off / exactly-once 1 s /
 * at-least-once 1 s), run interleaved (see bench/harness/run-interleaved.ts for why), checksums verified against the
 * single-thread loop, records/s and ratios to the node:stream baseline printed as a table and
 * written to bench/results/pipeline.json (pipeline-quick.json with --quick).
 *
 *   node --expose-gc --import tsx bench/pipeline/run.ts [--workload cheap|cpu-heavy] [--quick] [--json PATH] [--n N] [--rounds R] [--warmup W] [--all]
 *
 * `--workload cpu-heavy` swaps the map for ~2 µs of real work per record (pipeline-spec.ts) and
 * runs the cases that answer "do threads pay?": the single-thread loop (the baseline of its
 * ratios), node:stream, worker_threads 1→1 and 2→2, weir p=1 and p=2 with checkpointing off and
 * exactly-once every 1 s; it prints weir p=2 / p=1 per round and writes pipeline-cpu-heavy.json.
 *
 * `--expose-gc` is optional: with it the harness collects garbage between runs. `--all` adds the
 * idiomatic RxJS groupBy version, left out by default because at ~0.6 M records/s one run of it
 * takes longer than all other cases together, which stretches every round and so lets the
 * machine's speed drift within a round (the thing interleaving is meant to cancel).
 *
 * Sizes: the default n (2 M) keeps a round to a few seconds, so a round's cases see the same
 * machine; 7 rounds give a usable median. --quick: 300 k records, 2 rounds, no warmup round, numbers
 * not for quoting.
 */

import path from 'node:path';
import {
  BENCH_ARGS_USAGE,
  formatMachineInfo,
  formatRate,
  formatRatio,
  machineInfo,
  median,
  parseBenchArgs,
  printTable,
  resultsPath,
  runInterleaved,
  writeJson,
} from '../harness/index.js';
import { commandLine, type SuiteReport } from '../harness/suite-report.js';
import { nodeStreamCase } from './node-stream.js';
import type { PipelineCase, PipelineResult } from './pipeline-case.js';
import { WORKLOADS, type Workload } from './pipeline-spec.js';
import { rxjsGroupByCase, rxjsMapCase } from './rxjs.js';
import { singleThreadLoopCase } from './single-thread-loop.js';
import { weirCase } from './weir.js';
import { workerThreadsCase } from './worker-threads.js';

/** `--workload NAME` is this runner's own flag; the rest are the shared bench flags. */
function takeWorkload(argv: string[]): Workload {
  const i = argv.indexOf('--workload');
  if (i < 0) return 'cheap';
  const value = argv[i + 1];
  argv.splice(i, 2);
  if (!(WORKLOADS as readonly string[]).includes(value ?? '')) {
    throw new RangeError(`--workload must be one of ${WORKLOADS.join(', ')}, got '${value ?? ''}'`);
  }
  return value as Workload;
}
const argv = process.argv.slice(2);
const workload = takeWorkload(argv);
const heavy = workload === 'cpu-heavy';
// cpu-heavy: 800 k records give weir p=1 ~1.5–3.5 s of steady window (at 0.23–0.5 M/s); at 400 k
// start-up and JIT of fresh workers weighed on the ratios. At 1.2 M a default run took 4 min 20 s
// (bench/README.md, the CPU-heavy goal's row); 800 k keeps it near 3 min.
const DEFAULT_N = heavy ? 800_000 : 2_000_000;
const QUICK_N = heavy ? 60_000 : 300_000;

const args = parseBenchArgs(argv);
if (args.help) {
  process.stdout.write(
    `usage: node --import tsx bench/pipeline/run.ts [--workload ${WORKLOADS.join('|')}] ${BENCH_ARGS_USAGE}\n`,
  );
  process.exit(0);
}
const n = args.n ?? (args.quick ? QUICK_N : DEFAULT_N);
const rounds = args.rounds ?? (args.quick ? 2 : heavy ? 5 : 7);
const warmup = args.warmup ?? (args.quick ? 0 : 1);
const jsonPath =
  args.json ?? resultsPath(`pipeline${heavy ? '-cpu-heavy' : ''}${args.quick ? '-quick' : ''}.json`);

const reference = singleThreadLoopCase('single-thread loop', workload);
const streams = nodeStreamCase({ workload });
/** The ratios' baseline: node:stream for the cheap pipeline, the plain loop for the CPU-heavy one. */
const baseline = heavy ? reference : streams;
const cases: PipelineCase[] = heavy
  ? [
      reference,
      streams,
      workerThreadsCase({ parallelism: 1, workload }),
      workerThreadsCase({ parallelism: 2, workload }),
    ]
  : [
      reference,
      streams,
      rxjsMapCase(),
      ...(args.all ? [rxjsGroupByCase()] : []),
      workerThreadsCase({ parallelism: 1 }),
      workerThreadsCase({ sources: 1, consumers: 2 }),
      workerThreadsCase({ parallelism: 2 }),
    ];

// weir: parallelism 1 and 2 × checkpointing off / exactly-once every 1 s / at-least-once every 1 s
// (cpu-heavy: off and exactly-once). Timed from the first sink record to the end of input
// (set-up reported as `setup ms`), see weir.ts.
for (const parallelism of [1, 2]) {
  cases.push(weirCase({ parallelism, workload }));
  cases.push(weirCase({ parallelism, workload, checkpointing: { interval: 1000, mode: 'exactly-once' } }));
  if (!heavy) cases.push(weirCase({ parallelism, checkpointing: { interval: 1000, mode: 'at-least-once' } }));
}
/** Second reference of the goals: weir EO 1 s at p=1 ≥ 3× this. */
const POST_MESSAGE = 'worker_threads postMessage 1→1';

const machine = machineInfo();
const command = commandLine('bench/pipeline/run.ts');
process.stdout.write(
  `pipeline benchmark (${workload}): sequence(0..${n}) → map → filter → keyBy → running sum → sink\n` +
    `machine: ${formatMachineInfo(machine)}\n` +
    `rounds: ${rounds} (+${warmup} warmup), interleaved; baseline: ${baseline.name}\n` +
    `command: ${command}\n\n`,
);

// The single-thread loop defines the right answer; a case that disagrees aborts the run, since
// the speed of a wrong implementation means nothing.
const expected = (await reference.run(n)).checksum;
const result = await runInterleaved<PipelineResult>(
  cases.map((c) => ({ name: c.name, run: () => c.run(n) })),
  {
    rounds,
    warmup,
    baseline: baseline.name,
    onSample({ name, round, warmup: isWarmup, sample }) {
      if (sample.checksum !== expected) {
        throw new Error(`checksum mismatch in '${name}': got ${sample.checksum}, expected ${expected}`);
      }
      const rate = formatRate((sample.records * 1000) / sample.ms);
      process.stderr.write(
        `  round ${round + 1}/${warmup + rounds}${isWarmup ? ' (warmup)' : ''}  ${name}: ${rate}/s\n`,
      );
    },
  },
);

const rateOf = (s: PipelineResult): number => (s.records * 1000) / s.ms;

const postMessageRates = result.cases.find((c) => c.name === POST_MESSAGE)!.samples.map(rateOf);
const optionalMedian = (values: readonly (number | undefined)[]): number | undefined => {
  const present = values.filter((v): v is number => v !== undefined);
  return present.length === 0 ? undefined : median(present);
};
const rows = result.cases.map((c) => {
  const vsPostMessage = median(c.samples.map((s, round) => rateOf(s) / postMessageRates[round]));
  const setup = optionalMedian(c.samples.map((s) => s.setupMs));
  const job = optionalMedian(c.samples.map((s) => s.jobMs));
  const checkpoints = optionalMedian(c.samples.map((s) => s.checkpoints));
  return {
    case: c.name,
    'records/s (median)': formatRate(c.recordsPerSec.median),
    min: formatRate(c.recordsPerSec.min),
    max: formatRate(c.recordsPerSec.max),
    [`vs ${baseline.name}`]: formatRatio(c.ratioToBaseline.median),
    'ratio min–max': `${formatRatio(c.ratioToBaseline.min)}–${formatRatio(c.ratioToBaseline.max)}`,
    'vs postMessage 1→1': formatRatio(vsPostMessage),
    'ms (median)': Math.round(c.ms.median),
    'setup ms': setup === undefined ? '-' : String(Math.round(setup)),
    'job ms': job === undefined ? '-' : String(Math.round(job)),
    checkpoints: checkpoints === undefined ? '-' : String(checkpoints),
  };
});
process.stdout.write('\n');
printTable(rows);
/** Median over rounds of case a's records/s over case b's in the same round. */
const roundRatio = (a: string, b: string): number => {
  const as = result.cases.find((c) => c.name === a)!.samples;
  const bs = result.cases.find((c) => c.name === b)!.samples;
  return median(as.map((s, round) => rateOf(s) / rateOf(bs[round])));
};
const scaling = heavy
  ? {
      'p=2 / p=1 (off)': roundRatio('weir p=2 off', 'weir p=1 off'),
      'p=2 / p=1 (EO 1s)': roundRatio('weir p=2 EO 1s', 'weir p=1 EO 1s'),
      'p=2 off / loop': roundRatio('weir p=2 off', reference.name),
      'p=1 off / loop': roundRatio('weir p=1 off', reference.name),
    }
  : {
      'p=2 / p=1 (EO 1s)': roundRatio('weir p=2 EO 1s', 'weir p=1 EO 1s'),
      'EO 1s / off (p=1)': roundRatio('weir p=1 EO 1s', 'weir p=1 off'),
    };
process.stdout.write(
  `\nper-round ratios (medians): ${Object.entries(scaling)
    .map(([k, v]) => `${k} ${formatRatio(v)}`)
    .join(', ')}\n`,
);
process.stdout.write(
  `\nchecksum (all cases agree): ${expected}\n` +
    'weir rows: records/s from the first sink record to the end of input (steady state); setup ms = ' +
    'startJob → first sink record; job ms = startJob → done (incl. the final checkpoint); ' +
    'checkpoints = completed, the final one included.\n',
);

const report: SuiteReport = {
  suite: heavy ? 'pipeline-cpu-heavy' : 'pipeline',
  title: `pipeline${heavy ? ' (CPU-heavy map)' : ''}: sequence → map → filter → keyBy → running sum (source records/s)`,
  command,
  machine: formatMachineInfo(machine),
  notes: [
    `n = ${n}, ${rounds} rounds (+${warmup} warmup), interleaved; checksums verified against the single-thread loop.`,
    'weir rows: records/s from the first sink record to the end of input; set-up (startJob → first record) is `setup ms`.',
    heavy
      ? 'Goals: weir p=2 ≥ 1.7× weir p=1 and ≥ 1.6× the single-thread loop; weir p=1 ≥ 0.9× the loop.'
      : 'Goal: weir p=1 EO 1s ≥ 1.0× node:stream and ≥ 3× worker_threads postMessage 1→1; p=2 ≥ 1.1× p=1.',
    `per-round ratios (medians): ${Object.entries(scaling)
      .map(([k, v]) => `${k} ${formatRatio(v)}`)
      .join(', ')}`,
  ],
  tables: [{ title: 'throughput (medians over rounds)', rows }],
  charts: [
    {
      title: `records/s relative to ${baseline.name} (median of per-round ratios)`,
      unit: '×',
      bars: result.cases.map((c) => ({ label: c.name, value: c.ratioToBaseline.median })),
      reference: { value: 1, label: baseline.name },
    },
  ],
};

writeJson(jsonPath, {
  benchmark: heavy ? 'pipeline-cpu-heavy' : 'pipeline',
  workload,
  pipeline: heavy
    ? 'sequence(0..N) → map(i => JSON.parse(JSON.stringify(event i)), key = sha1(user)) → filter(r => r.value % 3 !== 0) ' +
      '→ keyBy(key) → running sum per key (emit {key, sum} per record) → sink (last sum per key)'
    : "sequence(0..N) → map(i => ({ key: 'k' + (i % 10000), value: i * 2 })) → filter(r => r.value % 3 !== 0) " +
      '→ keyBy(key) → running sum per key (emit {key, sum} per record) → sink (last sum per key)',
  scaling,
  unit: 'source records per second',
  command,
  machine,
  params: {
    n,
    rounds,
    warmup,
    quick: args.quick,
    all: args.all,
    gcBetweenRuns: typeof globalThis.gc === 'function',
  },
  baseline: result.baseline,
  checksum: expected,
  order: result.order,
  cases: result.cases.map((c) => ({
    name: c.name,
    recordsPerSec: c.recordsPerSec,
    ratioToBaseline: c.ratioToBaseline,
    ms: c.ms,
    setupMs: optionalMedian(c.samples.map((s) => s.setupMs)) ?? null,
    jobMs: optionalMedian(c.samples.map((s) => s.jobMs)) ?? null,
    samples: c.samples,
  })),
  report,
});
process.stdout.write(`wrote ${path.relative(process.cwd(), jsonPath)}\n`);
