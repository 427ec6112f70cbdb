/**
 * stopWithSavepoint: a running job stops with a self-contained savepoint; a later run restores it
 * (at another parallelism, into a fresh checkpoint directory) and the output of both runs
 * together is exactly the failure-free output.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionError, JobStateError, runJob, startJob } from '../../dist/index.js';
import { CheckpointStorage } from '../../dist/state/storage/checkpoint-storage.js';
import { committedJsonl, fixture, uncommittedFiles } from './helpers.js';

const N = 6000;
const KEYS = 10;
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('stopWithSavepoint', () => {
  it('stops with a savepoint that a rescaled run resumes exactly (file sink: commits are idempotent across processes)', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-savepoint-'));
    const out = path.join(dir, 'out');
    const savepointDir = path.join(dir, 'savepoint');
    const args = { n: String(N), keys: String(KEYS), out };
    const client = await startJob(fixture('keyed-count-to-files.mjs'), {
      parallelism: 2,
      checkpointing: { interval: 100, dir: path.join(dir, 'run1'), incremental: true },
      args: { ...args, rate: '3000' },
    });
    await new Promise((r) => client.once('checkpoint', r));
    const savepoint = await client.stopWithSavepoint(savepointDir);
    const first = await client.done;
    expect(first.status).toBe('stopped');
    expect(first.savepoint).toEqual(savepoint);
    expect(savepoint.path).toBe(savepointDir);
    // every checkpoint of run 1 completed before the savepoint
    expect(first.checkpoints.every((c) => c.checkpointId <= savepoint.checkpointId)).toBe(true);

    // The savepoint directory is self-contained: one full checkpoint that verifies.
    const storage = CheckpointStorage.open(savepointDir, { create: false });
    try {
      expect(storage.listCompleted()).toEqual([savepoint.checkpointId]);
      expect(storage.verifyCheckpoint(savepoint.checkpointId)).toMatchObject({ state: 'ok' });
    } finally {
      await storage.close();
    }
    rmSync(path.join(dir, 'run1'), { recursive: true, force: true }); // not needed any more

    const second = await runJob(fixture('keyed-count-to-files.mjs'), {
      parallelism: 3,
      restoreFrom: savepointDir,
      checkpointing: { interval: 100, dir: path.join(dir, 'run2') },
      args: { ...args, rate: '6000' },
    });
    expect(second.status).toBe('finished');
    expect(uncommittedFiles(out)).toEqual([]);
    const all = committedJsonl<{ key: number; count: number; sum: number }>(out);
    expect(new Set(all.map((s) => `${s.key}/${s.count}`)).size).toBe(N);
    expect(all).toHaveLength(N);
    const expected = new Map<number, number>();
    for (let x = 0; x < N; x++) expected.set(x % KEYS, (expected.get(x % KEYS) ?? 0) + x);
    for (const [key, sum] of expected) {
      expect(all.find((s) => s.key === key && s.count === N / KEYS)?.sum).toBe(sum);
    }
  });

  it('needs checkpointing, and a job that ended', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-savepoint-'));
    const plain = await startJob(fixture('checkpointed-sum.mjs'), { args: { n: '100', rate: '10000' } });
    await expect(plain.stopWithSavepoint(path.join(dir, 'x'))).rejects.toThrow(InvalidOptionError);
    await plain.done;
    const ended = await startJob(fixture('checkpointed-sum.mjs'), {
      checkpointing: { interval: 100 },
      args: { n: '100', rate: '10000' },
    });
    await ended.done;
    await expect(ended.stopWithSavepoint(path.join(dir, 'y'))).rejects.toThrow(JobStateError);
  });
});
