/**
 * After a job ends — finished, failed for good, or cancelled — nothing it opened is left: no
 * worker thread, no file descriptor into its checkpoint directory (LMDB environments of the main
 * thread and of every task), no timer.
 */
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobCancelledError, JobFailedError, type JobOptions, startJob } from '../../dist/index.js';
import { fixture, threadCount, threadCountSettles } from './helpers.js';

/** Paths of this process's open file descriptors that lie under `dir`. */
function openFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {
      // closed between readdir and readlink
    }
  }
  return out;
}

const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

/** Waits (bounded, as threadCountSettles) for a resource count to come back down; returns the last value. */
async function settles(read: () => number, expected: number, ms = 30_000): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    const n = read();
    if (n <= expected || Date.now() > deadline) return n;
    await new Promise((r) => setTimeout(r, 20));
  }
}

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function runToEnd(failure: string, options: JobOptions, cancelAfterCheckpoint = false) {
  const client = await startJob(fixture('checkpointed-sum.mjs'), {
    parallelism: 2,
    ...options,
    args: { failure, n: '4000', keys: '10' },
  });
  if (cancelAfterCheckpoint) client.once('checkpoint', () => void client.cancel());
  return client.done.then(
    (r) => ({ ok: true as const, r }),
    (e: unknown) => ({ ok: false as const, e }),
  );
}

describe('no resource outlives its job', () => {
  for (const scenario of ['finished', 'failed', 'cancelled'] as const) {
    it(`${scenario}: no thread, no open file in the checkpoint dir, no timer`, async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'weir-resources-'));
      const threads = threadCount();
      const timersBefore = timers();
      const outcome = await runToEnd(
        scenario === 'failed' ? 'throw' : 'none',
        {
          checkpointing: { interval: 100, dir },
          restartStrategy:
            scenario === 'failed' ? { type: 'none' } : { type: 'fixed-delay', attempts: 1, delay: 0 },
        },
        scenario === 'cancelled',
      );
      if (scenario === 'finished') expect(outcome.ok).toBe(true);
      if (scenario === 'failed') expect(!outcome.ok && outcome.e).toBeInstanceOf(JobFailedError);
      if (scenario === 'cancelled') expect(!outcome.ok && outcome.e).toBeInstanceOf(JobCancelledError);
      expect(await threadCountSettles(threads)).toBe(threads);
      expect(openFilesUnder(dir)).toEqual([]);
      expect(await settles(timers, timersBefore)).toBeLessThanOrEqual(timersBefore);
    });
  }
});
