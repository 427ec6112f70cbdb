/**
 * Runs the demo job once in one checkpointing mode, with a worker crash planned, and records what
 * happened: job client events, telemetry from the workers, the crash report, the output. The
 * main thread creates the log topic, starts the job and appends the clicks while it runs
 * (`demo-feed.ts`); when the job has finished it reads the committed part files of both file
 * sinks back. All files (log, checkpoints, part files, the crash report) live in a temporary
 * directory removed afterwards.
 */

import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointMode } from '../api/source.js';
import { type CompletedCheckpointStats, type JobResult, startJob } from '../coordinator/job-client.js';
import { openLog } from '../log/log.js';
import type { Durability } from '../log/log-options.js';
import { type ClickFeed, feedClicks } from './demo-feed.js';
import type { ModeObservation } from './demo-measurements.js';
import type { CrashReport } from './demo-probe-sink.js';
import { ProgressReporter, type ProgressStream } from './demo-progress.js';
import type { DemoOutputRecord, LoggedClick, WindowCount } from './demo-records.js';
import { listenTelemetry, wallClockMs } from './demo-telemetry.js';

/** Appending starts at the first completed checkpoint, or after this long without one. */
const FEED_START_FALLBACK_MS = 5000;

export interface DemoRunConfig {
  /** Clicks in the stream. */
  readonly records: number;
  /** Clicks per second the main thread appends to the log. */
  readonly rate: number;
  readonly users: number;
  /** Of every operator; also the topic's partition count. */
  readonly parallelism: number;
  readonly checkpointIntervalMs: number;
  /** Sink subtask 0 crashes after this fraction of its share of the clicks (and ≥ 1 checkpoint). */
  readonly crashAt: number;
  /**
   * The log's durability for the feed's appends: `'fsync'` (the default, what the demo's
   * append latency means: call → durable) or, opt-in, `'os'` (call → written to the OS page
   * cache, no fsync; the table labels the row so). The job's exactness does not depend on it.
   */
  readonly durability: Durability;
  /**
   * Nice levels the job's worker threads run below the main thread (0–19; 0: equal), so that the
   * main thread's appends are not starved by the job on a small machine (the job option `workerNice`).
   */
  readonly workerNice: number;
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
  const partitions = config.parallelism;

  const readByPartition = new Map<number, { attempt: number; seq: number }>();
  const sinkTelemetry: { t: number; records: number }[] = [];
  const listener = listenTelemetry(telemetryName, (m) => {
    switch (m.kind) {
      case 'read': {
        // Messages of an older attempt may arrive after the new attempt's first ones.
        const prev = readByPartition.get(m.partition);
        if (!prev || m.attempt > prev.attempt || (m.attempt === prev.attempt && m.seq > prev.seq))
          readByPartition.set(m.partition, { attempt: m.attempt, seq: m.seq });
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
  // Shown progress changes only when every partition reported from the newest attempt, so that
  // after a restore it rewinds once instead of mixing positions from two attempts. Click `seq`
  // is at offset floor(seq / partitions) of its partition.
  let shownRead = 0;
  const read = (): number => {
    const entries = [...readByPartition.values()];
    const newest = Math.max(0, ...entries.map((e) => e.attempt));
    if (entries.some((e) => e.attempt !== newest)) return shownRead;
    let total = 0;
    for (const { seq } of entries) total += Math.floor(seq / partitions) + 1;
    return (shownRead = total);
  };

  const deployments: { attempt: number; at: number; restoredFrom?: number }[] = [];
  const failures: { at: number; cause: string }[] = [];
  const checkpoints: { at: number; stats: CompletedCheckpointStats }[] = [];
  let attempt = 0;
  let feed: ClickFeed | null = null;
  let feedStartedAt = Number.NaN;
  const state = () => ({
    done: read(),
    appended: feed?.appended() ?? 0,
    attempt,
    checkpoints: checkpoints.length,
  });
  let ticker: ReturnType<typeof setInterval> | undefined;
  const logDir = join(dir, 'log');
  const countsDir = join(dir, 'counts');
  const windowsDir = join(dir, 'windows');
  let log: ReturnType<typeof openLog>;
  try {
    log = openLog(logDir, { durability: config.durability });
  } catch (error) {
    // The telemetry channel would keep the process alive: `weir demo` printed the error and hung.
    listener.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  try {
    const topic = log.topic<LoggedClick>('clicks', { partitions });
    const startedAt = wallClockMs();
    const client = await startJob(new URL('./demo-job.js', import.meta.url), {
      parallelism: config.parallelism,
      args: {
        n: String(config.records),
        users: String(config.users),
        partitions: String(partitions),
        log: logDir,
        topic: 'clicks',
        counts: countsDir,
        windows: windowsDir,
        telemetry: telemetryName,
        crashFile,
        durability: config.durability,
        crashAfter: String(Math.max(1, Math.floor((config.crashAt * config.records) / config.parallelism))),
      },
      checkpointing: { interval: config.checkpointIntervalMs, mode, dir: join(dir, 'checkpoints') },
      restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
      // The main thread is the demo's "service": the job's threads yield the core to it.
      workerNice: config.workerNice,
      // A live page of this run (plan, rates, checkpoints, the injected crash with its stack).
      dashboard: { job: `demo ${mode}` },
    });
    progress.event(`live dashboard: ${client.dashboardUrl} (open it while the demo runs)`);
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
    // The main thread appends once the job is running (its first checkpoint completed: every
    // task is up), so that the latency figures are not dominated by the clicks that pile up
    // while worker threads start; a fallback timer starts it anyway.
    const startFeed = () => {
      if (feed) return;
      clearTimeout(feedFallback);
      const clicks = feedClicks(topic, {
        n: config.records,
        users: config.users,
        rate: config.rate,
        partitions,
      });
      feed = clicks;
      feedStartedAt = wallClockMs();
      // A failed append would leave the job waiting for clicks that never come: cancel it.
      clicks.done.catch((e: unknown) => {
        progress.event(`appending clicks failed: ${(e as Error).message}`);
        void client.cancel();
      });
    };
    const feedFallback = setTimeout(startFeed, FEED_START_FALLBACK_MS);
    client.on('checkpoint', startFeed);
    let result: JobResult;
    try {
      result = await client.done;
    } finally {
      clearTimeout(feedFallback);
      const f = feed as ClickFeed | null;
      f?.stop();
      await f?.done.catch(() => undefined);
    }
    const endedAt = wallClockMs();
    clearInterval(ticker);
    ticker = undefined;
    progress.finish({
      done: config.records,
      appended: (feed as ClickFeed | null)?.appended() ?? 0,
      attempt,
      checkpoints: checkpoints.length,
    });
    const fed = feed as ClickFeed | null;
    const crash = existsSync(crashFile) ? (JSON.parse(readFileSync(crashFile, 'utf8')) as CrashReport) : null;
    return {
      mode,
      startedAt,
      appendStartedAt: feedStartedAt,
      appendLatency: fed && fed.appendLatency.count > 0 ? fed.appendLatency.summary() : null,
      feedLoopDelay: fed?.eventLoopDelay() ?? null,
      endedAt,
      deployments,
      failures,
      checkpoints,
      crash,
      sinkTelemetry,
      restarts: result.restarts,
      output: readCommittedJsonl<DemoOutputRecord>(countsDir),
      windows: readCommittedJsonl<WindowCount>(windowsDir),
    };
  } finally {
    if (ticker) clearInterval(ticker);
    listener.close();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The records of the committed part files of a file sink's directory: by the file sink's
 * contract the only files whose names end in `.jsonl` (staged parts are hidden dot-files with
 * other endings). A missing directory (nothing ever committed) reads as no records.
 */
export function readCommittedJsonl<T>(dir: string): T[] {
  if (!existsSync(dir)) return [];
  const out: T[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.jsonl') || name.startsWith('.')) continue;
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (line !== '') out.push(JSON.parse(line) as T);
    }
  }
  return out;
}
