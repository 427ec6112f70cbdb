/**
 * Runs the demo job once in one checkpointing mode, with a worker crash planned, and records what
 * happened: job client events, telemetry from the workers, the crash report, the output. All
 * files (checkpoints, the crash report) live in a temporary directory removed afterwards.
 */

import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initialSplit } from '../connectors/sequence-source.js';
import { type CompletedCheckpointStats, startJob } from '../coordinator/job-client.js';
import type { CheckpointMode } from '../coordinator/job-options.js';
import { DEMO_SINK } from './demo-job.js';
import type { ModeObservation } from './demo-measurements.js';
import type { CrashReport } from './demo-probe-sink.js';
import { ProgressReporter, type ProgressStream } from './demo-progress.js';
import type { DemoOutputRecord } from './demo-records.js';
import { listenTelemetry, wallClockMs } from './demo-telemetry.js';

export interface DemoRunConfig {
  /** Clicks in the stream. */
  readonly records: number;
  /** Clicks per second offered by the source, in total. */
  readonly rate: number;
  readonly users: number;
  readonly parallelism: number;
  readonly checkpointIntervalMs: number;
  /** Sink subtask 0 crashes after this fraction of its share of the clicks (and ≥ 1 checkpoint). */
  readonly crashAt: number;
}

export async function runDemoMode(
  mode: CheckpointMode,
  config: DemoRunConfig,
  progressOut: ProgressStream,
): Promise<ModeObservation> {
  const dir = mkdtempSync(join(tmpdir(), `weir-demo-${mode}-`));
  const crashFile = join(dir, 'crash.json');
  const telemetryName = `weir-demo:${process.pid}:${randomUUID()}`;
  const progress = new ProgressReporter(progressOut, mode, config.records);

  const readBySubtask = new Map<number, { attempt: number; seq: number }>();
  const sinkTelemetry: { t: number; records: number }[] = [];
  const listener = listenTelemetry(telemetryName, (m) => {
    switch (m.kind) {
      case 'read': {
        // Messages of an older attempt may arrive after the new attempt's first ones.
        const prev = readBySubtask.get(m.subtask);
        if (!prev || m.attempt >= prev.attempt)
          readBySubtask.set(m.subtask, { attempt: m.attempt, seq: m.seq });
        break;
      }
      case 'sink':
        sinkTelemetry.push({ t: m.t, records: m.records });
        break;
      default: {
        const unreachable: never = m;
        throw new Error(`unknown telemetry message ${JSON.stringify(unreachable)}`);
      }
    }
  });
  // Shown progress changes only when every source subtask reported from the newest attempt, so
  // that after a restore it rewinds once instead of mixing positions from two attempts.
  let shownRead = 0;
  const read = (): number => {
    const entries = [...readBySubtask.values()];
    const newest = Math.max(0, ...entries.map((e) => e.attempt));
    if (entries.some((e) => e.attempt !== newest)) return shownRead;
    let total = 0;
    for (const [subtask, { seq }] of readBySubtask) {
      total += seq - initialSplit(0, config.records, subtask, config.parallelism).start + 1;
    }
    return (shownRead = total);
  };

  const deployments: { attempt: number; at: number; restoredFrom?: number }[] = [];
  const failures: { at: number; cause: string }[] = [];
  const checkpoints: { at: number; stats: CompletedCheckpointStats }[] = [];
  let attempt = 0;
  const state = () => ({ done: read(), attempt, checkpoints: checkpoints.length });
  let ticker: ReturnType<typeof setInterval> | undefined;
  try {
    const startedAt = wallClockMs();
    const client = await startJob(new URL('./demo-job.js', import.meta.url), {
      parallelism: config.parallelism,
      args: {
        n: String(config.records),
        rate: String(config.rate),
        users: String(config.users),
        telemetry: telemetryName,
        crashFile,
        crashAfter: String(Math.max(1, Math.floor((config.crashAt * config.records) / config.parallelism))),
      },
      checkpointing: { interval: config.checkpointIntervalMs, mode, dir: join(dir, 'checkpoints') },
      restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
    });
    client.on('deployed', (e: { attempt: number; restoredFrom?: number }) => {
      deployments.push({ attempt: e.attempt, at: wallClockMs(), restoredFrom: e.restoredFrom });
      attempt = e.attempt;
      if (e.attempt > 0) {
        progress.event(
          `attempt ${e.attempt} deployed, restored from checkpoint ${e.restoredFrom ?? '(none: fresh start)'}`,
        );
      }
    });
    client.on('restarting', (e: { cause: Error }) => {
      failures.push({ at: wallClockMs(), cause: e.cause?.message?.split('\n')[0] ?? String(e.cause) });
      progress.event(`worker crashed (${failures.at(-1)!.cause}); restarting from the latest checkpoint`);
    });
    client.on('checkpoint', (stats: CompletedCheckpointStats) => {
      checkpoints.push({ at: wallClockMs(), stats });
    });
    const warned = new Set<string>();
    client.on('warning', (e: Error) => {
      // e.g. a control call to a task that just died; each distinct message once
      if (!warned.has(e.message)) progress.event(`runtime warning: ${e.message}`);
      warned.add(e.message);
    });
    ticker = setInterval(() => progress.update(state()), 100);
    const result = await client.done;
    const endedAt = wallClockMs();
    clearInterval(ticker);
    ticker = undefined;
    progress.finish({ done: config.records, attempt, checkpoints: checkpoints.length });
    const crash = existsSync(crashFile) ? (JSON.parse(readFileSync(crashFile, 'utf8')) as CrashReport) : null;
    return {
      mode,
      startedAt,
      endedAt,
      deployments,
      failures,
      checkpoints,
      crash,
      sinkTelemetry,
      restarts: result.restarts,
      output: (result.sinks[DEMO_SINK] ?? []) as DemoOutputRecord[],
    };
  } finally {
    if (ticker) clearInterval(ticker);
    listener.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
