/**
 * Pipeline benchmark runner: every implementation of the pipeline in `pipeline-spec.ts`, run
 * interleaved (see bench/harness/run-interleaved.ts for why), checksums verified against the
 * single-thread loop, records/s and ratios to the node:stream baseline printed as a table and
 * written to bench/results/pipeline.json (pipeline-quick.json with --quick).
 *
 *   node --expose-gc --import tsx bench/pipeline/run.ts [--quick] [--json PATH] [--n N] [--rounds R] [--warmup W] [--all]
 *
 * `--expose-gc` is optional: with it the harness collects garbage between runs. `--all` adds the
 * idiomatic RxJS groupBy version, left out by default because at ~0.6 M records/s one run of it
 * takes longer than all other cases together, which stretches every round and so lets the
 * machine's speed drift within a round (the thing interleaving is meant to cancel).
 *
 * Sizes: the default n (2 M) keeps a round to a few seconds, so a round's cases see the same
 * machine; 7 rounds give a usable median. --quick: 300 k records, 2 rounds, numbers not for quoting.
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
import { nodeStreamCase } from './node-stream.js';
import type { PipelineCase, PipelineResult } from './pipeline-case.js';
import { rxjsGroupByCase, rxjsMapCase } from './rxjs.js';
import { singleThreadLoopCase } from './single-thread-loop.js';
import { workerThreadsCase } from './worker-threads.js';

const DEFAULT_N = 2_000_000;
const QUICK_N = 300_000;

const args = parseBenchArgs();
if (args.help) {
  process.stdout.write(`usage: node --import tsx bench/pipeline/run.ts ${BENCH_ARGS_USAGE}\n`);
  process.exit(0);
}
const n = args.n ?? (args.quick ? QUICK_N : DEFAULT_N);
const rounds = args.rounds ?? (args.quick ? 2 : 7);
const warmup = args.warmup ?? 1;
const jsonPath = args.json ?? resultsPath(args.quick ? 'pipeline-quick.json' : 'pipeline.json');

const reference = singleThreadLoopCase();
const baseline = nodeStreamCase();
const cases: PipelineCase[] = [
  reference,
  baseline,
  rxjsMapCase(),
  ...(args.all ? [rxjsGroupByCase()] : []),
  workerThreadsCase({ parallelism: 1 }),
  workerThreadsCase({ sources: 1, consumers: 2 }),
  workerThreadsCase({ parallelism: 2 }),
];

// ── HOOK: weir cases ────────────────────────────────────────────────────────────────────────────
// Add weir here; each is one PipelineCase (see pipeline-case.ts and bench/README.md "pipeline"):
//   cases.push(weirCase({ parallelism: 1 }));
//   cases.push(weirCase({ parallelism: 2 }));
//   cases.push(weirCase({ parallelism: 2, checkpointing: { interval: 1000, mode: 'exactly-once' } }));
//   cases.push(weirCase({ parallelism: 2, checkpointing: { interval: 1000, mode: 'at-least-once' } }));
// ────────────────────────────────────────────────────────────────────────────────────────────────

const machine = machineInfo();
const command = [
  'node',
  ...process.execArgv,
  path.relative(process.cwd(), process.argv[1] ?? 'bench/pipeline/run.ts'),
  ...process.argv.slice(2),
].join(' ');
process.stdout.write(
  `pipeline benchmark: sequence(0..${n}) → map → filter → keyBy → running sum → discard\n` +
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

const setupMs = (samples: readonly PipelineResult[]): number | undefined => {
  const values = samples.flatMap((s) => (s.setupMs === undefined ? [] : [s.setupMs]));
  return values.length === 0 ? undefined : median(values);
};

process.stdout.write('\n');
printTable(
  result.cases.map((c) => ({
    case: c.name,
    'records/s (median)': formatRate(c.recordsPerSec.median),
    min: formatRate(c.recordsPerSec.min),
    max: formatRate(c.recordsPerSec.max),
    [`vs ${baseline.name}`]: formatRatio(c.ratioToBaseline.median),
    'ratio min–max': `${formatRatio(c.ratioToBaseline.min)}–${formatRatio(c.ratioToBaseline.max)}`,
    'ms (median)': Math.round(c.ms.median),
    'setup ms': setupMs(c.samples) === undefined ? '-' : String(Math.round(setupMs(c.samples)!)),
  })),
);
process.stdout.write(`\nchecksum (all cases agree): ${expected}\n`);

writeJson(jsonPath, {
  benchmark: 'pipeline',
  pipeline:
    "sequence(0..N) → map(i => ({ key: 'k' + (i % 10000), value: i * 2 })) → filter(r => r.value % 3 !== 0) " +
    '→ keyBy(key) → running sum per key (emit {key, sum} per record) → discard',
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
    setupMs: setupMs(c.samples) ?? null,
    samples: c.samples,
  })),
});
process.stdout.write(`wrote ${path.relative(process.cwd(), jsonPath)}\n`);
