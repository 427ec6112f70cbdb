/**
 * Runs one weir job for a benchmark and hands back what the job's report sink delivered
 * (`bench/jobs/report-sink.mjs`: one summary record per sink subtask) with wall-clock times
 * comparable to those the job recorded in its worker threads (`performance.timeOrigin + now()`).
 *
 * With checkpointing, the checkpoint directory is a fresh temporary directory removed after the
 * run (also when it fails), so runs never restore from each other and leave nothing behind.
 * Imports weir from dist/ (`'weir'`, the package's self-reference): run `npm run build` first.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type JobClient, type JobOptions, type JobResult, startJob } from 'weir';

/** Milliseconds since the epoch with sub-ms resolution, comparable across worker threads. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

export interface WeirJobRun<R> {
  readonly result: JobResult;
  /** The records of the report sink, one per sink subtask (in delivery order). */
  readonly reports: readonly R[];
  /** `wallNow()` just before `startJob` was called. */
  readonly startedAt: number;
  /** `wallNow()` when `done` resolved. */
  readonly doneAt: number;
}

export interface WeirJobRunOptions {
  /** Name of the report sink in `JobResult.sinks` (its records become `reports`). */
  readonly reportSink: string;
  /** Called with the client right after `startJob` resolved, e.g. to listen to its events. */
  readonly onClient?: (client: JobClient) => void;
}

/** Runs `job` to its end; rejects with the job's error. */
export async function runWeirJob<R>(
  job: URL,
  options: JobOptions,
  run: WeirJobRunOptions,
): Promise<WeirJobRun<R>> {
  const dir = options.checkpointing ? mkdtempSync(path.join(os.tmpdir(), 'weir-bench-')) : undefined;
  try {
    const startedAt = wallNow();
    const client = await startJob(job, {
      ...options,
      ...(options.checkpointing && dir ? { checkpointing: { ...options.checkpointing, dir } } : {}),
    });
    run.onClient?.(client);
    const result = await client.done;
    const doneAt = wallNow();
    const reports = (result.sinks[run.reportSink] ?? []) as R[];
    return { result, reports, startedAt, doneAt };
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** `checkpointing` of a case, named the way the tables show it: `off`, `EO 1s`, `ALO 100ms`. */
export function checkpointLabel(checkpointing: JobOptions['checkpointing']): string {
  if (!checkpointing) return 'off';
  const mode = checkpointing.mode === 'at-least-once' ? 'ALO' : 'EO';
  const i = checkpointing.interval;
  return `${mode} ${i % 1000 === 0 ? `${i / 1000}s` : `${i}ms`}`;
}
