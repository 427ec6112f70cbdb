/**
 * Recovery time: from a worker crash to processing again, against the size of the keyed state,
 * heap backend, exactly-once, parallelism 2 (`bench/jobs/recovery-job.mjs`).
 *
 * One run: fill `keys` keys of keyed state, let a checkpoint that covers all of them complete,
 * crash sink subtask 0's worker with process.exit(1) (it writes `timeOrigin + now()` to a file
 * first), restart (fixed-delay, 0 ms) from that checkpoint, and take the first record the
 * restored attempt processes (min over its sink subtasks, same clock). Breakdown from the job
 * client's events, timed on the main thread with the same clock:
 *   crash → `restarting` (failure detected, old execution torn down)
 *   → `deployed` (attempt 1 created, restore state planned)
 *   → first record (workers started, job module loaded, state restored, source resumed).
 * Every run checks that the restored attempt found its keys' state (`hadState` = all records).
 *
 *   node --expose-gc --import tsx bench/recovery/run.ts [--quick] [--json PATH] [--rounds R]
 *
 * Full: 1 k / 100 k / 1 M keys, 3 repeats each (rotated), medians. --quick: 1 k and 100 k, one
 * repeat. `--rounds` = repeats.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BENCH_ARGS_USAGE,
  formatMachineInfo,
  machineInfo,
  median,
  parseBenchArgs,
  printTable,
  resultsPath,
  runInterleaved,
  type TableRow,
  writeJson,
} from '../harness/index.js';
import { commandLine, type SuiteReport } from '../harness/suite-report.js';
import { runWeirJob, wallNow } from '../harness/weir-job-run.js';

const JOB = new URL('../jobs/recovery-job.mjs', import.meta.url);
const PARALLELISM = 2;
const INTERVAL_MS = 200;
const AFTER_RESTORE = 200;

const args = parseBenchArgs();
if (args.help) {
  process.stdout.write(`usage: node --import tsx bench/recovery/run.ts ${BENCH_ARGS_USAGE}\n`);
  process.exit(0);
}
const keyCounts = args.quick ? [1_000, 100_000] : [1_000, 100_000, 1_000_000];
const repeats = args.rounds ?? (args.quick ? 1 : 3);
const jsonPath = args.json ?? resultsPath(args.quick ? 'recovery-quick.json' : 'recovery.json');

interface RecoveryReport {
  readonly subtask: number;
  readonly attempt: number;
  readonly firstAt: number;
  readonly records: number;
  readonly hadState: number;
}

interface RecoverySample {
  /** For runInterleaved: one "record" per run, `ms` = crash → first record. */
  readonly records: 1;
  readonly ms: number;
  readonly detectMs: number;
  readonly redeployMs: number;
  readonly startRestoreMs: number;
  readonly restoredCheckpointId: number;
  readonly restoredBytes: number | null;
  readonly jobMs: number;
}

async function runOnce(keys: number): Promise<RecoverySample> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'weir-recovery-'));
  const crashFile = path.join(dir, 'crash-at');
  try {
    let restartingAt = Number.NaN;
    let deployedAt = Number.NaN;
    let restoredFrom: number | undefined;
    const { result, reports, startedAt, doneAt } = await runWeirJob<RecoveryReport>(
      JOB,
      {
        parallelism: PARALLELISM,
        args: { keys: String(keys), crashFile, afterRestore: String(AFTER_RESTORE) },
        checkpointing: { interval: INTERVAL_MS, mode: 'exactly-once' },
        restartStrategy: { type: 'fixed-delay', attempts: 1, delay: 0 },
      },
      {
        reportSink: 'recovery',
        onClient(client) {
          client.on('restarting', () => {
            restartingAt = wallNow();
          });
          client.on('deployed', (e: { attempt: number; restoredFrom?: number }) => {
            if (e.attempt !== 1) return;
            deployedAt = wallNow();
            restoredFrom = e.restoredFrom;
          });
        },
      },
    );
    if (result.restarts !== 1)
      throw new Error(`recovery job: expected 1 restart, got ${result.restarts} (no crash?)`);
    if (restoredFrom === undefined)
      throw new Error('recovery job: attempt 1 did not restore from a checkpoint');
    const restored = reports.filter((r) => r.attempt === 1 && r.records > 0);
    if (restored.length === 0) throw new Error('recovery job: the restored attempt processed no record');
    for (const r of restored) {
      if (r.hadState !== r.records) {
        throw new Error(
          `recovery job: subtask ${r.subtask} found state for ${r.hadState} of ${r.records} records after restore`,
        );
      }
    }
    const crashAt = Number(readFileSync(crashFile, 'utf8'));
    const firstAt = Math.min(...restored.map((r) => r.firstAt));
    return {
      records: 1,
      ms: firstAt - crashAt,
      detectMs: restartingAt - crashAt,
      redeployMs: deployedAt - restartingAt,
      startRestoreMs: firstAt - deployedAt,
      restoredCheckpointId: restoredFrom,
      restoredBytes: result.checkpoints.find((c) => c.checkpointId === restoredFrom)?.bytes ?? null,
      jobMs: doneAt - startedAt,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const machine = machineInfo();
const command = commandLine('bench/recovery/run.ts');
process.stdout.write(
  `recovery: crash → first record processed again, parallelism ${PARALLELISM}, heap state, exactly-once, ` +
    `checkpoints every ${INTERVAL_MS} ms, keys ${keyCounts.join(' / ')}\n` +
    `machine: ${formatMachineInfo(machine)}\n` +
    `repeats: ${repeats} (rotated over state sizes), medians\n` +
    `command: ${command}\n\n`,
);

const name = (keys: number): string => `${keys.toLocaleString('en-US')} keys`;
const result = await runInterleaved<RecoverySample>(
  keyCounts.map((keys) => ({ name: name(keys), run: () => runOnce(keys) })),
  {
    rounds: repeats,
    warmup: 0,
    baseline: name(keyCounts[0]),
    onSample({ name: caseName, round, sample }) {
      process.stderr.write(
        `  repeat ${round + 1}/${repeats}  ${caseName}: ${sample.ms.toFixed(0)} ms ` +
          `(detect ${sample.detectMs.toFixed(0)}, redeploy ${sample.redeployMs.toFixed(0)}, ` +
          `start+restore ${sample.startRestoreMs.toFixed(0)})\n`,
      );
    },
  },
);

const m = (values: readonly number[]): string => median(values).toFixed(0);
const rows: TableRow[] = result.cases.map((c, i) => {
  const bytes = c.samples.flatMap((s) => (s.restoredBytes === null ? [] : [s.restoredBytes]));
  return {
    state: c.name,
    'crash → processing ms': m(c.samples.map((s) => s.ms)),
    'min–max ms': `${Math.round(c.ms.min)}–${Math.round(c.ms.max)}`,
    'crash → restarting': m(c.samples.map((s) => s.detectMs)),
    'restarting → deployed': m(c.samples.map((s) => s.redeployMs)),
    'deployed → first record': m(c.samples.map((s) => s.startRestoreMs)),
    'checkpoint KiB': bytes.length === 0 ? '-' : String(Math.round(median(bytes) / 1024)),
    keys: keyCounts[i],
  };
});
printTable(rows);
process.stdout.write('\nall times in ms, medians; goal: recovery (small state) ≤ 500 ms.\n');

const report: SuiteReport = {
  suite: 'recovery',
  title: 'recovery: worker crash → first record processed by the restored attempt',
  command,
  machine: formatMachineInfo(machine),
  notes: [
    `parallelism ${PARALLELISM}, heap state, exactly-once, checkpoints every ${INTERVAL_MS} ms, restart delay 0; ${repeats} repeat(s), medians.`,
    'Breakdown from job client events (same wall clock): crash → restarting → deployed → first record. Goal: ≤ 500 ms with small state.',
  ],
  tables: [{ title: 'recovery time by state size (ms)', rows }],
  charts: [
    {
      title: 'crash → processing again (ms, median); goal ≤ 500 ms for small state',
      unit: ' ms',
      bars: result.cases.map((c) => ({ label: c.name, value: c.ms.median })),
      reference: { value: 500, label: 'goal 500 ms' },
    },
  ],
};
writeJson(jsonPath, {
  benchmark: 'recovery',
  job: 'bench/jobs/recovery-job.mjs',
  unit: 'milliseconds',
  command,
  machine,
  params: {
    keyCounts,
    repeats,
    parallelism: PARALLELISM,
    checkpointIntervalMs: INTERVAL_MS,
    quick: args.quick,
  },
  order: result.order,
  cases: result.cases.map((c, i) => ({ name: c.name, keys: keyCounts[i], ms: c.ms, samples: c.samples })),
  report,
});
process.stdout.write(`wrote ${path.relative(process.cwd(), jsonPath)}\n`);
