/**
 * Rescaled restore from disk: a keyed running sum and count runs at parallelism 2 with
 * checkpoints in a directory and fails (no restarts) after some checkpoints completed; a second
 * job restores the latest checkpoint at parallelism 3 and fails again; a third restores at
 * parallelism 1 and runs to the end. The state backend and incremental mode change between runs
 * (checkpoints share one chunk format). Every key's state and every source position must carry
 * over: the last run's final sums and counts are exact, and its counts continue each key's
 * count without a gap or a repeat.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobFailedError, type JobOptions, startJob } from '../../dist/index.js';
import { CheckpointStorage } from '../../dist/state/storage/checkpoint-storage.js';
import { expectedSums, fixture } from './helpers.js';

const N = 6000;
const KEYS = 10;

type Sum = { key: number; sum: number; count: number };

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Step {
  readonly parallelism: number;
  readonly stateBackend: 'heap' | 'lmdb';
  readonly incremental: boolean;
}

async function runStep(dir: string, step: Step, fail: boolean, restore: boolean, snapshots = 0) {
  const options: JobOptions = {
    parallelism: step.parallelism,
    stateBackend: step.stateBackend,
    checkpointing: { interval: 50, dir, incremental: step.incremental, fullEvery: 3 },
    restartStrategy: { type: 'none' },
    ...(restore ? { restoreFrom: 'latest' } : {}),
    // fail at 30% of the attempt's input once its source took `snapshots` snapshots (0: whether or
    // not a checkpoint completed in this attempt)
    args: {
      failure: fail ? 'throw' : 'none',
      n: String(N),
      keys: String(KEYS),
      at: '0.3',
      snapshots: String(snapshots),
    },
  };
  const client = await startJob(fixture('checkpointed-sum.mjs'), options);
  const outcome = await client.done.then(
    (result) => ({
      state: 'finished' as const,
      sums: result.sinks.sums as Sum[],
      emitted: result.metrics.operators.find((o) => o.name === 'numbers')?.recordsOut ?? 0,
    }),
    (error: unknown) => ({ state: 'failed' as const, error }),
  );
  return { outcome };
}

async function retainedCount(dir: string): Promise<number> {
  const storage = CheckpointStorage.open(dir, { create: false });
  try {
    for (const id of storage.listCompleted()) expect(storage.verifyCheckpoint(id).state).toBe('ok');
    return storage.listCompleted().length;
  } finally {
    await storage.close();
  }
}

const sequences: Record<string, Step[]> = {
  'heap+incremental p2 -> lmdb+incremental p3 -> heap p1': [
    { parallelism: 2, stateBackend: 'heap', incremental: true },
    { parallelism: 3, stateBackend: 'lmdb', incremental: true },
    { parallelism: 1, stateBackend: 'heap', incremental: false },
  ],
  'lmdb p2 -> heap+incremental p3 -> lmdb+incremental p1': [
    { parallelism: 2, stateBackend: 'lmdb', incremental: false },
    { parallelism: 3, stateBackend: 'heap', incremental: true },
    { parallelism: 1, stateBackend: 'lmdb', incremental: true },
  ],
};

describe('rescaled restore from a checkpoint directory', () => {
  it.each(Object.entries(sequences))('%s: state and positions carry over exactly', async (_name, steps) => {
    const dir = mkdtempSync(join(tmpdir(), 'weir-e2e-rescale-'));
    dirs.push(dir);
    for (let i = 0; i < steps.length - 1; i++) {
      // The first run fails only after two snapshots, so a checkpoint with progress exists however
      // loaded the machine is (the final run's "it did restore" check needs one); later runs fail
      // whether or not they completed a checkpoint of their own.
      const { outcome } = await runStep(dir, steps[i], true, i > 0, i === 0 ? 2 : 0);
      // Retention (default 3) covers the checkpoints earlier runs left in the directory too.
      expect(await retainedCount(dir), `step ${i}`).toBeLessThanOrEqual(3);
      expect(outcome.state, `step ${i}`).toBe('failed');
      if (outcome.state === 'failed') {
        expect(outcome.error).toBeInstanceOf(JobFailedError);
        expect(String((outcome.error as Error).cause)).toMatch(/injected failure/);
      }
    }
    const last = await runStep(dir, steps.at(-1)!, false, true);
    expect(await retainedCount(dir)).toBeLessThanOrEqual(3);
    expect(last.outcome.state).toBe('finished');
    if (last.outcome.state !== 'finished') return;
    // The restored positions were past the start: the last run's source read only the rest.
    expect(last.outcome.emitted).toBeGreaterThan(0);
    expect(last.outcome.emitted).toBeLessThan(N);
    const sums = last.outcome.sums;
    const byKey = new Map<number, Sum[]>();
    for (const s of sums) byKey.set(s.key, [...(byKey.get(s.key) ?? []), s]);
    for (const [key, e] of expectedSums(N, KEYS)) {
      const records = (byKey.get(key) ?? []).sort((a, b) => a.count - b.count);
      // Every key's counts are one contiguous run ending at the exact total, and the final sum is
      // exact. (The run may also deliver records from before the restored positions: a collect
      // sink's transactions sealed in the restored checkpoint but not yet committed, which the
      // restore commits. So a key's run can start at count 1 even though the source resumed.)
      expect(records.length, `key ${key}`).toBeGreaterThan(0);
      const first = records[0].count;
      expect(records.map((r) => r.count)).toEqual(
        Array.from({ length: records.length }, (_, i) => first + i),
      );
      expect(records.at(-1)).toEqual({ key, ...e });
    }
  });
});
