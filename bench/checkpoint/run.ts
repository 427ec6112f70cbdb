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
 * `CHECKPOINT_CASES="EO 1s,EO 1s debloat"` runs only the cases named (and the `none` of their
 * backend). `CHECKPOINT_KEYS=5000000` (comma-separated) replaces the state sizes, and
 * `CHECKPOINT_BACKENDS=heap,lmdb` (either or both) keeps only that backend's cases: the 5 M-key
 * cases of issue 14 alone are
 *   CHECKPOINT_KEYS=5000000 CHECKPOINT_CASES="EO 1s,lmdb EO 1s" node --expose-gc --import tsx bench/checkpoint/run.ts --n 20000000 --rounds 2
 * Every run's digest of final sums is checked against a plain loop.
 *
 * Memory, per case: the process's peak RSS during the run (sampled every 20 ms on the main thread,
 * all threads and LMDB's mapped pages included) less its RSS just before the job started, the same
 * for its anonymous part alone (`RssAnon`: without the mapped LMDB pages, which are clean file
 * pages the kernel can drop, so not memory pressure), and the peak V8 used heap of the keyed
 * task's thread (each sink subtask, chained to the running sum that holds the keyed state, samples
 * its thread's heap every 65 536 records; max over subtasks). All are shown against the raw state size: Σ over keys of the key's UTF-8 bytes + 8 bytes for its
 * float64 sum, i.e. the payload with no per-entry overhead.
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

import { readFileSync } from 'node:fs';
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
/** `stuckTaskTimeout` of every run (the default, 5 s, is too short for 5 M keys on a loaded VM). */
const STUCK_TASK_TIMEOUT_MS = 60_000;

const args = parseBenchArgs();
if (args.help) {
  process.stdout.write(`usage: node --import tsx bench/checkpoint/run.ts ${BENCH_ARGS_USAGE}\n`);
  process.exit(0);
}
/** CHECKPOINT_KEYS="5000000" or "100000,1000000": the state sizes (default below). */
function keyCountsOf(env: string | undefined): number[] {
  if (env === undefined || env.trim() === '') return args.quick ? [100_000] : [100_000, 1_000_000];
  return env.split(',').map((x) => {
    const k = Number(x.trim());
    if (!Number.isSafeInteger(k) || k < 1)
      throw new RangeError(`CHECKPOINT_KEYS: '${x}' is not a positive integer`);
    return k;
  });
}
const keyCounts = keyCountsOf(process.env.CHECKPOINT_KEYS);
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
  /** `checkpointing.incremental` (deltas over the last confirmed checkpoint, a full one every 10). */
  readonly incremental?: boolean;
  /** Buffer debloating (`channels.debloat`). */
  readonly debloat?: true | { readonly targetMs: number };
  /** The running sum declared `{ type: 'number' }` (heap: number slots); baseline `number none`. */
  readonly numberState?: true;
}

interface CheckpointSample {
  readonly records: number;
  readonly ms: number;
  readonly setupMs: number;
  readonly checksum: string;
  readonly checkpoints: readonly CompletedCheckpointStats[];
  /** Peak process RSS during the run less the RSS just before it started, bytes. */
  readonly rssPeakDelta: number;
  /** Peak process RSS during the run, bytes. */
  readonly rssPeak: number;
  /**
   * Peak anonymous RSS (`RssAnon` of /proc/self/status: heaps, malloc, ArrayBuffers) less its value
   * just before the run, bytes; NaN where /proc is missing. Unlike `rssPeakDelta` it leaves out
   * mapped LMDB pages (clean file pages the kernel can drop: bench/README.md, "Checkpoint memory").
   */
  readonly anonPeakDelta: number;
  /** Peak V8 used heap of a keyed task's thread (max over sink subtasks), bytes. */
  readonly heapPeak: number;
}

/** Raw state size: Σ over keys 'k0'..'k{keys-1}' of UTF-8 key bytes + 8 bytes of float64 sum. */
function rawStateBytes(keys: number): number {
  let bytes = 0;
  // 'k' + decimal digits: count keys per digit length instead of building the strings.
  for (let digits = 1, lo = 0; lo < keys; digits++, lo = lo === 0 ? 10 : lo * 10) {
    const hi = Math.min(keys, lo === 0 ? 10 : lo * 10);
    bytes += (hi - lo) * (1 + digits + 8);
  }
  return bytes;
}

const CASES: readonly CheckpointCase[] = [
  { name: 'none', backend: 'heap', interval: null },
  { name: 'EO 10s', backend: 'heap', interval: 10_000 },
  { name: 'EO 1s', backend: 'heap', interval: 1000 },
  { name: 'EO 100ms', backend: 'heap', interval: 100 },
  { name: 'EO 1s unaligned', backend: 'heap', interval: 1000, unaligned: true },
  { name: 'EO 100ms unaligned', backend: 'heap', interval: 100, unaligned: true },
  { name: 'EO 1s incremental', backend: 'heap', interval: 1000, incremental: true },
  { name: 'EO 100ms incremental', backend: 'heap', interval: 100, incremental: true },
  { name: 'none debloat', backend: 'heap', interval: null, debloat: true },
  { name: 'EO 1s debloat', backend: 'heap', interval: 1000, debloat: true },
  { name: 'EO 100ms debloat', backend: 'heap', interval: 100, debloat: true },
  { name: 'EO 1s debloat 100ms', backend: 'heap', interval: 1000, debloat: { targetMs: 100 } },
  { name: 'number none', backend: 'heap', interval: null, numberState: true },
  { name: 'number EO 1s', backend: 'heap', interval: 1000, numberState: true },
  { name: 'number EO 100ms', backend: 'heap', interval: 100, numberState: true },
  { name: 'number EO 1s incremental', backend: 'heap', interval: 1000, incremental: true, numberState: true },
  { name: 'number EO 1s unaligned', backend: 'heap', interval: 1000, unaligned: true, numberState: true },
  { name: 'lmdb none', backend: 'lmdb', interval: null },
  { name: 'lmdb EO 1s', backend: 'lmdb', interval: 1000 },
  { name: 'lmdb EO 1s incremental', backend: 'lmdb', interval: 1000, incremental: true },
];

function checkpointingOf(c: CheckpointCase): CheckpointingOptions | undefined {
  if (c.interval === null) return undefined;
  return {
    interval: c.interval,
    mode: 'exactly-once',
    ...(c.unaligned ? { unaligned: true } : {}),
    ...(c.incremental ? { incremental: true } : {}),
  };
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

/** `RssAnon` of this process, bytes; NaN where /proc is missing. */
function rssAnon(): number {
  try {
    const m = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

async function runCase(c: CheckpointCase, keys: number): Promise<CheckpointSample> {
  const checkpointing = checkpointingOf(c);
  const rssBefore = process.memoryUsage.rss();
  let rssPeak = rssBefore;
  const anonBefore = rssAnon();
  let anonPeak = anonBefore;
  let tick = 0;
  const sampler = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss > rssPeak) rssPeak = rss;
    // Every 100 ms: a /proc read costs more than the RSS call.
    if (tick++ % 5 === 0) anonPeak = Math.max(anonPeak, rssAnon());
  }, 20);
  try {
    const { result, reports, startedAt } = await runWeirJob<DigestReport & { heapPeak?: number }>(
      KEYED_SUM_JOB,
      {
        parallelism: PARALLELISM,
        stateBackend: c.backend,
        // At 5 M keys on this loaded 2-core VM (load 12–15) one records batch of `EO 1s` stayed
        // busy > 5 s wall and the default watchdog failed the job (2026-12-02 16:37 UTC): the
        // bench measures throughput, not the watchdog.
        stuckTaskTimeout: STUCK_TASK_TIMEOUT_MS,
        args: {
          n: String(n),
          keys: String(keys),
          heapSample: '1',
          ...(c.numberState ? { stateType: 'number' } : {}),
        },
        ...(checkpointing ? { checkpointing } : {}),
        ...(c.debloat ? { channels: { debloat: c.debloat } } : {}),
      },
      { reportSink: 'digest' },
    );
    return {
      records: n,
      ...summarizeDigestReports(reports, startedAt),
      checkpoints: result.checkpoints,
      rssPeak,
      rssPeakDelta: rssPeak - rssBefore,
      anonPeakDelta: anonPeak - anonBefore,
      heapPeak: Math.max(0, ...reports.map((r) => r.heapPeak ?? 0)),
    };
  } finally {
    clearInterval(sampler);
  }
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
const mib = (v: number): string => (Number.isFinite(v) ? String(Math.round(v / 2 ** 20)) : '-');

const machine = machineInfo();
const command = commandLine('bench/checkpoint/run.ts');
process.stdout.write(
  `checkpoint cost: keyed-sum job, parallelism ${PARALLELISM}, exactly-once, n = ${n} records, keys ${keyCounts.join(' / ')}\n` +
    `machine: ${formatMachineInfo(machine)}\n` +
    `rounds: ${rounds} (+${warmup} warmup), interleaved; baseline: none (same backend)\n` +
    `command: ${command}\n`,
);

const skipped: { name: string; reason: string }[] = [];
/** CHECKPOINT_CASES="EO 1s,lmdb EO 1s,…" runs only those cases and their backends' `none`. */
const only = process.env.CHECKPOINT_CASES?.split(',').map((x) => x.trim());
/** CHECKPOINT_BACKENDS="heap,lmdb": only those backends' cases. */
const backends = (process.env.CHECKPOINT_BACKENDS ?? 'heap,lmdb').split(',').map((x) => x.trim());
for (const b of backends) {
  if (b !== 'heap' && b !== 'lmdb') throw new RangeError(`CHECKPOINT_BACKENDS: unknown backend '${b}'`);
}
const baselineOf = (c: CheckpointCase): string =>
  c.numberState ? 'number none' : c.backend === 'heap' ? 'none' : 'lmdb none';
const runnable = CASES.filter((c) => {
  if (!backends.includes(c.backend)) return false;
  const wanted = (name: string): boolean => only === undefined || only.includes(name);
  const isBaseline = c.name === baselineOf(c);
  if (isBaseline ? !CASES.some((x) => baselineOf(x) === c.name && wanted(x.name)) : !wanted(c.name))
    return false;
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
  const raw = rawStateBytes(keys);
  process.stdout.write(`raw state size: ${mib(raw)} MiB (key bytes + 8 per key)\n`);
  const result = await runInterleaved<CheckpointSample>(
    runnable.map((c) => ({ name: c.name, run: () => runCase(c, keys) })),
    {
      rounds,
      warmup,
      baseline: runnable.some((c) => c.name === 'none')
        ? 'none'
        : runnable.some((c) => c.name === 'number none')
          ? 'number none'
          : 'lmdb none',
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
    const base = byName.get(baselineOf(spec))!;
    return median(c.samples.map((s, i) => rate(s) / rate(base.samples[i])));
  });
  const rows: TableRow[] = result.cases.map((c, index) => {
    const spec = runnable.find((x) => x.name === c.name)!;
    const base = byName.get(baselineOf(spec))!;
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
      'max sync ms': ms1(Math.max(...all.map((x) => x.maxSyncDurationMs))),
      'mean async ms': ms1(mean(all.map((x) => x.maxAsyncDurationMs))),
      'mean alignment ms': ms1(mean(all.map((x) => x.maxAlignmentDurationMs))),
      'p99 alignment ms': ms1(
        quantile(
          all.map((x) => x.maxAlignmentDurationMs),
          0.99,
        ),
      ),
      'mean KiB': kib(mean(all.map((x) => x.bytes))),
      'peak RSS MiB (max)': mib(Math.max(...c.samples.map((s) => s.rssPeak))),
      'RSS growth / raw': (Math.max(...c.samples.map((s) => s.rssPeakDelta)) / raw).toFixed(2),
      'anon RSS growth / raw': (Math.max(...c.samples.map((s) => s.anonPeakDelta)) / raw).toFixed(2),
      'task heap MiB (max)': mib(Math.max(...c.samples.map((s) => s.heapPeak))),
      'task heap / raw': (Math.max(...c.samples.map((s) => s.heapPeak)) / raw).toFixed(2),
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
    rawStateBytes: raw,
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
  params: {
    n,
    rounds,
    warmup,
    parallelism: PARALLELISM,
    keyCounts,
    backends,
    cases: runnable.map((c) => c.name),
    quick: args.quick,
    mode: 'exactly-once',
  },
  skipped,
  results: perKeyCount,
  report,
});
process.stdout.write(`wrote ${path.relative(process.cwd(), jsonPath)}\n`);
