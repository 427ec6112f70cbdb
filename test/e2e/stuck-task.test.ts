/**
 * A task stuck in user code (a busy loop) never answers control calls: the checkpoint timeout
 * fails the checkpoint, the failure fails the attempt, the stuck thread is terminated after the
 * cancel grace period (it cannot stop by itself), and the restart — on fresh threads — restores
 * the last checkpoint and finishes with exact output.
 */
import { describe, expect, it } from 'vitest';
import { JobFailedError, runJob, startJob, TaskFailureError, TaskStuckError } from '../../dist/index.js';
import { fixture, threadCount, threadCountSettles } from './helpers.js';

describe('a task stuck in user code', () => {
  it('is detected by the checkpoint timeout, its thread terminated, and the job recovers exactly', async () => {
    const threads = threadCount();
    const n = 3000;
    const client = await startJob(fixture('stuck-task.mjs'), {
      parallelism: 2,
      stuckTaskTimeout: 0, // this test is about the checkpoint timeout
      // The stuck checkpoint never completes, so any timeout fails it; 15 s (not 1 s) so that the
      // ordinary checkpoints before the hang and after the restart complete within it on a
      // loaded machine (a second timeout would make it two restarts).
      checkpointing: { interval: 100, timeout: 15_000, tolerableFailures: 0 },
      restartStrategy: { type: 'fixed-delay', attempts: 2, delay: 0 },
      args: { n: String(n), rate: '3000' },
    });
    const result = await client.done;
    expect(result.restarts).toBe(1);
    const counts = result.sinks.counts as { key: number; count: number }[];
    expect(new Set(counts.map((c) => `${c.key}/${c.count}`)).size).toBe(n);
    expect(counts).toHaveLength(n);
    for (let k = 0; k < 5; k++)
      expect(Math.max(...counts.filter((c) => c.key === k).map((c) => c.count))).toBe(n / 5);
    expect(await threadCountSettles(threads)).toBe(threads);
  });

  it('is named, task and operator, by the stuck-task watchdog long before any checkpoint timeout', async () => {
    const threads = threadCount();
    const n = 3000;
    const client = await startJob(fixture('stuck-task.mjs'), {
      parallelism: 2,
      stuckTaskTimeout: 1000,
      // The default checkpoint timeout (600 s) would never fire within the test.
      checkpointing: { interval: 100 },
      restartStrategy: { type: 'fixed-delay', attempts: 2, delay: 0 },
      args: { n: String(n), rate: '3000' },
    });
    const causes: unknown[] = [];
    client.on('restarting', (e: { cause: unknown }) => causes.push(e.cause));
    const result = await client.done;
    expect(result.restarts).toBe(1);
    const failure = causes[0] as TaskFailureError;
    expect(failure).toBeInstanceOf(TaskFailureError);
    expect(failure.operator).toBe('maybe hang');
    expect(failure.task).toMatch(/^numbers -> maybe hang \(1\/2\)$/);
    const stuck = failure.cause as TaskStuckError;
    expect(stuck).toBeInstanceOf(TaskStuckError);
    expect(stuck.operator).toBe('maybe hang');
    expect(stuck.message).toMatch(/stuck in user code of operator maybe hang/);
    const counts = result.sinks.counts as { key: number; count: number }[];
    expect(counts).toHaveLength(n);
    expect(new Set(counts.map((c) => `${c.key}/${c.count}`)).size).toBe(n);
    expect(await threadCountSettles(threads)).toBe(threads);
  });

  it('fails the job with a TaskStuckError when no restart is allowed', async () => {
    const error = await runJob(fixture('stuck-task.mjs'), {
      parallelism: 1,
      stuckTaskTimeout: 1000,
      args: { n: '3000', rate: '3000' },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobFailedError);
    const failure = (error as JobFailedError).cause as TaskFailureError;
    expect(failure.operator).toBe('maybe hang');
    expect(failure.cause).toBeInstanceOf(TaskStuckError);
  });
});
