/**
 * Checkpoint cost: throughput of the keyed-sum job (`bench/jobs/keyed-sum-job.mjs`, the pipeline
 * benchmark's job with `keys` distinct keys of state) at parallelism 2, exactly-once, heap state
 * backend, with checkpoints every 10 s / 1 s / 100 ms (and unaligned every 1 s / 100 ms, and with
 * buffer debloating every 1 s / 100 ms) against no checkpointing, measured in the
 * same run (interleaved rounds, per-round ratios), for 100 k and 1 M keys of keyed state.
 *
 *   node --expose-gc --import tsx bench/checkpoint/run.ts [--quick] [--json PATH] [--n N] [--rounds R] [--warmup W]
 *
 * Reported per case: records/s (first sink record → end of input, as in the pipeline benchmark;
 * set-up excluded), overhead = 1 − ratio to `none` of the same state backend (median of per-round
 * ratios), and from `JobResult.checkpoints`: checkpoints completed (the final one, taken after
 * end of input, included), mean / p50 / p99 end-to-end duration, mean of each checkpoint's
 * slowest task's sync and async parts, mean and p99 alignment, mean bytes.
 * `CHECKPOINT_CASES="EO 1s,EO 1s debloat"` runs only the cases named (and `none`). Every run's digest of final sums is checked
 * against a plain loop.
 *
 * Cases that need what this build may not have yet — unaligned checkpoints, the `lmdb` state
 * backend — run when `resolveJobOptions` accepts their options and are skipped with its reason
 * printed otherwise (the lmdb cases' overhead is relative to `lmdb none`).
 *
 * Sizes: n = 12 M (a run lasts > 10 s on this 2-core VM even at ~1 M records/s, so the 10 s
 * interval fires; 36 runs, ~10–25 min depending on the machine's speed), 3 rounds,
 * no warmup round (each run is long and pays its own start-up outside the clock). --quick:
 * 100 k keys only, n = 1 M, 1 round: proves the suite works; the 10 s case then sees only the
 * final checkpoint, so it equals `none` plus one checkpoint.
 */

import path from 'node:path';
import type { CheckpointingOptions, CompletedCheckpointStats } from 'weir';
import { resolveJobOptions } from '../../dist/coordinator/job-options.js';
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
  type TableRow,
  writeJson,
} from '../harness/index.js';
import {
  commandLine,
  type ReportChart,
  type ReportTable,
  type SuiteReport,
} from '../harness/suite-report.js';
import { runWeirJob } from '../harness/weir-job-run.js';
import { checksumOf, digestOf } from '../pipeline/sum-digest.js';
import { type DigestReport, KEYED_SUM_JOB, summarizeDigestReports } from '../pipeline/weir.js';

const PARALLELISM = 2;

const args = parseBenchArgs();
if (args.help) {
  process.stdout.write(`usage: node --import tsx bench/checkpoint/run.ts ${BENCH_ARGS_USAGE}\n`);
  process.exit(0);
}
const keyCounts = args.quick ? [100_000] : [100_000, 1_000_000];
const n = args.n ?? (args.quick ? 1_000_000 : 12_000_000);
const rounds = args.rounds ?? (args.quick ? 1 : 3);
const warmup = args.warmup ?? 0;
const jsonPath = args.json ?? resultsPath(args.quick ? 'checkpoint-quick.json' : 'checkpoint.json');

type Backend = 'heap' | 'lmdb';

interface CheckpointCase {
  readonly name: string;
  readonly backend: Backend;
  readonly interval: number | null;
  readonly unaligned?: boolean;
  /** Buffer debloating (`channels.debloat`). */
  readonly debloat?: true | { readonly targetMs: number };
}

interface CheckpointSample {
  readonly records: number;
  readonly ms: number;
  readonly setupMs: number;
  readonly checksum: string;
  readonly checkpoints: readonly CompletedCheckpointStats[];
}

const CASES: readonly CheckpointCase[] = [
  { name: 'none', backend: 'heap', interval: null },
  { name: 'EO 10s', backend: 'heap', interval: 10_000 },
  { name: 'EO 1s', backend: 'heap', interval: 1000 },
  { name: 'EO 100ms', backend: 'heap', interval: 100 },
  { name: 'EO 1s unaligned', backend: 'heap', interval: 1000, unaligned: true },
  { name: 'EO 100ms unaligned', backend: 'heap', interval: 100, unaligned: true },
  { name: 'none debloat', backend: 'heap', interval: null, debloat: true },
  { name: 'EO 1s debloat', backend: 'heap', interval: 1000, debloat: true },
  { name: 'EO 100ms debloat', backend: 'heap', interval: 100, debloat: true },
  { name: 'EO 1s debloat 100ms', backend: 'heap', interval: 1000, debloat: { targetMs: 100 } },
  { name: 'lmdb none', backend: 'lmdb', interval: null },
  { name: 'lmdb EO 1s', backend: 'lmdb', interval: 1000 },
];

function checkpointingOf(c: CheckpointCase): CheckpointingOptions | undefined {
  if (c.interval === null) return undefined;
  return { interval: c.interval, mode: 'exactly-once', ...(c.unaligned ? { unaligned: true } : {}) };
}

/** Why a case cannot run with this build (resolveJobOptions rejects its options), or null. */
function unavailable(c: CheckpointCase): string | null {
  try {
    const checkpointing = checkpointingOf(c);
    resolveJobOptions({
      stateBackend: c.backend,
      ...(checkpointing ? { checkpointing } : {}),
      ...(c.debloat ? { channels: { debloat: c.debloat } } : {}),
    });
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

/** The expected digest: the same records through a plain loop. */
function expectedChecksum(records: number, keys: number): string {
  const sums = new Map<string, number>();
  let emitted = 0;
  for (let i = 0; i < records; i++) {
    const value = i * 2;
    if (value % 3 === 0) continue;
    const key = `k${i % keys}`;
    sums.set(key, (sums.get(key) ?? 0) + value);
    emitted++;
  }
  return checksumOf(digestOf(sums, emitted));
}

async function runCase(c: CheckpointCase, keys: number): Promise<CheckpointSample> {
  const checkpointing = checkpointingOf(c);
  const { result, reports, startedAt } = await runWeirJob<DigestReport>(
    KEYED_SUM_JOB,
    {
      parallelism: PARALLELISM,
      stateBackend: c.backend,
      args: { n: String(n), keys: String(keys) },
      ...(checkpointing ? { checkpointing } : {}),
      ...(c.debloat ? { channels: { debloat: c.debloat } } : {}),
    },
    { reportSink: 'digest' },
  );
  return { records: n, ...summarizeDigestReports(reports, startedAt), checkpoints: result.checkpoints };
}

const mean = (values: readonly number[]): number =>
  values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
/** Nearest-rank quantile (q in [0, 1]); NaN for no values. */
const quantile = (values: readonly number[], q: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
};
const ms1 = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : '-');
const kib = (v: number): string => (Number.isFinite(v) ? String(Math.round(v / 1024)) : '-');

const machine = machineInfo();
const command = commandLine('bench/checkpoint/run.ts');
process.stdout.write(
  `checkpoint cost: keyed-sum job, parallelism ${PARALLELISM}, exactly-once, n = ${n} records, keys ${keyCounts.join(' / ')}\n` +
    `machine: ${formatMachineInfo(machine)}\n` +
    `rounds: ${rounds} (+${warmup} warmup), interleaved; baseline: none (same backend)\n` +
    `command: ${command}\n`,
);

const skipped: { name: string; reason: string }[] = [];
/** CHECKPOINT_CASES="none,EO 1s,…" runs only those cases (`none` always runs: it is the baseline). */
const only = process.env.CHECKPOINT_CASES?.split(',').map((x) => x.trim());
const runnable = CASES.filter((c) => {
  if (only !== undefined && c.name !== 'none' && !only.includes(c.name)) return false;
  const reason = unavailable(c);
  if (reason !== null) skipped.push({ name: c.name, reason });
  return reason === null;
});
for (const s of skipped) process.stdout.write(`skipped '${s.name}': ${s.reason}\n`);

const tables: ReportTable[] = [];
const charts: ReportChart[] = [];
const perKeyCount: unknown[] = [];
for (const keys of keyCounts) {
  process.stdout.write(`\n── ${keys.toLocaleString('en-US')} keys ──\n`);
  const expected = expectedChecksum(n, keys);
  const result = await runInterleaved<CheckpointSample>(
    runnable.map((c) => ({ name: c.name, run: () => runCase(c, keys) })),
    {
      rounds,
      warmup,
      baseline: 'none',
      onSample({ name, round, warmup: isWarmup, sample }) {
        if (sample.checksum !== expected) {
          throw new Error(
            `checksum mismatch in '${name}' (${keys} keys): got ${sample.checksum}, expected ${expected}`,
          );
        }
        process.stderr.write(
          `  round ${round + 1}/${warmup + rounds}${isWarmup ? ' (warmup)' : ''}  ${name}: ` +
            `${formatRate((sample.records * 1000) / sample.ms)}/s, ${sample.checkpoints.length} checkpoints\n`,
        );
      },
    },
  );
  const rate = (s: CheckpointSample): number => (s.records * 1000) / s.ms;
  const byName = new Map(result.cases.map((c) => [c.name, c]));
  /** Median per-round ratio of each case's records/s to `none` of the same backend. */
  const ratios = result.cases.map((c) => {
    const spec = runnable.find((x) => x.name === c.name)!;
    const base = byName.get(spec.backend === 'heap' ? 'none' : 'lmdb none')!;
    return median(c.samples.map((s, i) => rate(s) / rate(base.samples[i])));
  });
  const rows: TableRow[] = result.cases.map((c, index) => {
    const spec = runnable.find((x) => x.name === c.name)!;
    const base = byName.get(spec.backend === 'heap' ? 'none' : 'lmdb none')!;
    const ratio = ratios[index];
    const all = c.samples.flatMap((s) => s.checkpoints);
    return {
      case: c.name,
      backend: spec.backend,
      'records/s (median)': formatRate(c.recordsPerSec.median),
      'vs none (same backend)': formatRatio(ratio),
      'overhead %': c === base ? '-' : ((1 - ratio) * 100).toFixed(1),
      checkpoints: median(c.samples.map((s) => s.checkpoints.length)),
      'mean duration ms': ms1(mean(all.map((x) => x.durationMs))),
      'p50 duration ms': ms1(
        quantile(
          all.map((x) => x.durationMs),
          0.5,
        ),
      ),
      'p99 duration ms': ms1(
        quantile(
          all.map((x) => x.durationMs),
          0.99,
        ),
      ),
      'mean sync ms': ms1(mean(all.map((x) => x.maxSyncDurationMs))),
      'mean async ms': ms1(mean(all.map((x) => x.maxAsyncDurationMs))),
      'mean alignment ms': ms1(mean(all.map((x) => x.maxAlignmentDurationMs))),
      'p99 alignment ms': ms1(
        quantile(
          all.map((x) => x.maxAlignmentDurationMs),
          0.99,
        ),
      ),
      'mean KiB': kib(mean(all.map((x) => x.bytes))),
      'setup ms': Math.round(median(c.samples.map((s) => s.setupMs))),
    };
  });
  process.stdout.write('\n');
  printTable(rows);
  const title = `${keys.toLocaleString('en-US')} keys`;
  tables.push({ title, rows });
  charts.push({
    title: `${title}: throughput relative to no checkpoints (same backend)`,
    unit: '×',
    bars: result.cases.map((c, index) => ({ label: c.name, value: ratios[index] })),
    reference: { value: 1, label: 'none' },
  });
  perKeyCount.push({
    keys,
    checksum: expected,
    order: result.order,
    ratioToNoneSameBackend: Object.fromEntries(result.cases.map((c, i) => [c.name, ratios[i]])),
    cases: result.cases,
  });
}
process.stdout.write(
  '\nrecords/s: first sink record → end of input (set-up excluded); checkpoints: completed, the final one ' +
    'included; sync/async: mean over checkpoints of the slowest task; goals: overhead ≤ 5 % at 1 s, ≤ 15 % at 100 ms.\n',
);

const report: SuiteReport = {
  suite: 'checkpoint',
  title: `checkpoint cost: keyed sum at parallelism ${PARALLELISM}, exactly-once, vs no checkpoints`,
  command,
  machine: formatMachineInfo(machine),
  notes: [
    `n = ${n}, ${rounds} rounds (+${warmup} warmup), interleaved; checksums verified against a plain loop.`,
    'Overhead = 1 − median per-round ratio of records/s to `none` (same backend). Goals: ≤ 5 % at 1 s, ≤ 15 % at 100 ms.',
    ...skipped.map((s) => `skipped ${s.name}: ${s.reason}`),
  ],
  tables,
  charts,
};
writeJson(jsonPath, {
  benchmark: 'checkpoint',
  job: 'bench/jobs/keyed-sum-job.mjs',
  unit: 'source records per second',
  command,
  machine,
  params: { n, rounds, warmup, parallelism: PARALLELISM, keyCounts, quick: args.quick, mode: 'exactly-once' },
  skipped,
  results: perKeyCount,
  report,
});
process.stdout.write(`wrote ${path.relative(process.cwd(), jsonPath)}\n`);
