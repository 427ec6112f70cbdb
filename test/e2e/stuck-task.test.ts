/**
 * A task stuck in user code (a busy loop) never answers control calls: the checkpoint timeout
 * fails the checkpoint, the failure fails the attempt, the stuck thread is terminated after the
 * cancel grace period (it cannot stop by itself), and the restart — on fresh threads — restores
 * the last checkpoint and finishes with exact output.
 */
import { describe, expect, it } from 'vitest';
import { startJob } from '../../dist/index.js';
import { fixture, threadCount, threadCountSettles } from './helpers.js';

describe('a task stuck in user code', () => {
  it('is detected by the checkpoint timeout, its thread terminated, and the job recovers exactly', async () => {
    const threads = threadCount();
    const n = 3000;
    const client = await startJob(fixture('stuck-task.mjs'), {
      parallelism: 2,
      checkpointing: { interval: 100, timeout: 1000, tolerableFailures: 0 },
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
});
