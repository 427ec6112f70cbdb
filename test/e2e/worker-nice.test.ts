/**
 * JobOptions.workerNice: every worker thread of the job runs that many nice levels below the
 * thread that started it, also after a restart on reused threads (lowered once, not twice), and
 * the starting thread keeps its own priority (Linux keeps a nice value per thread).
 */
import { getPriority } from 'node:os';
import { describe, expect, it } from 'vitest';
import { runJob } from '../../dist/index.js';
import { fixture } from './helpers.js';

interface Probe {
  readonly x: number;
  readonly attempt: number;
  readonly firstAttempt: number;
  readonly nice: number;
}

describe.runIf(process.platform === 'linux')('the workerNice job option', () => {
  it('lowers every worker thread by that many levels, across a restart, and not the main thread', async () => {
    const main = getPriority(0);
    const result = await runJob(fixture('thread-nice.mjs'), {
      parallelism: 2,
      workerNice: 5,
      restartStrategy: { type: 'fixed-delay', attempts: 1, delay: 0 },
      args: { fail: 'yes' },
    });
    expect(result.restarts).toBe(1);
    const out = result.sinks.out as Probe[];
    const restarted = out.filter((r) => r.attempt === 1);
    expect(restarted.length).toBeGreaterThan(0);
    // Some records of attempt 1 ran in a thread that had run attempt 0: the reuse this checks.
    expect(restarted.some((r) => r.firstAttempt === 0)).toBe(true);
    expect(new Set(out.map((r) => r.nice))).toEqual(new Set([Math.min(19, main + 5)]));
    expect(getPriority(0)).toBe(main);
  });

  it('leaves worker threads at the main thread’s priority by default', async () => {
    const main = getPriority(0);
    const result = await runJob(fixture('thread-nice.mjs'), { parallelism: 2 });
    expect(new Set((result.sinks.out as Probe[]).map((r) => r.nice))).toEqual(new Set([main]));
  });
});
