/**
 * A savepoint whose commits completed before the job stopped is committed exactly once: a run
 * restored from it commits none of its transactions again. With `sinks.collect` a repeated
 * commit reaches the NEW client (its own deduplication only knows its own run), so the two
 * clients' outputs together show any commit-on-restore as duplicates.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runJob, startJob } from '../../dist/index.js';
import { expectExactRunningSums, fixture, whenHeld } from './helpers.js';

type Row = { key: number; count: number; sum: number };
const N = 6000;
const KEYS = 10;
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function stopWithSavepoint() {
  const client = await startJob(fixture('checkpointed-sum.mjs'), {
    parallelism: 2,
    checkpointing: { interval: 100, dir: path.join(dir, 'run1') },
    // Every reader holds for good half-way (and says so in `dir`): the savepoint is taken
    // mid-stream however loaded the machine, never refused because the input ended first.
    args: { n: String(N), keys: String(KEYS), rate: '3000', holdAt: '0.5', heldDir: dir },
  });
  await whenHeld(dir, 2, client.done);
  const savepoint = await client.stopWithSavepoint(path.join(dir, 'savepoint'));
  const first = await client.done;
  expect(first.status).toBe('stopped');
  return { savepoint, rows: (first.sinks.sums ?? []) as Row[] };
}

function resume(restoreFrom: string, parallelism: number) {
  return runJob(fixture('checkpointed-sum.mjs'), {
    parallelism,
    restoreFrom,
    checkpointing: { interval: 100, dir: path.join(dir, `run2-${parallelism}`) },
    args: { n: String(N), keys: String(KEYS), rate: '6000' },
  });
}

describe('restoring a savepoint whose commits completed commits nothing again', () => {
  it('sinks.collect, resumed from the savepoint at the same and at another parallelism by new clients', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-savepoint-restore-'));
    const first = await stopWithSavepoint();
    // The savepoint was taken while every reader held half-way: the first client has exactly
    // the first half, the rest is left to the restored runs.
    expect(first.rows).toHaveLength(N / 2);
    for (const parallelism of [2, 3]) {
      const second = await resume(first.savepoint.path, parallelism);
      expect(second.status).toBe('finished');
      expectExactRunningSums([...first.rows, ...((second.sinks.sums ?? []) as Row[])], N, KEYS);
    }
  });

  it("sinks.collect, resumed from the job's own directory (`latest`): the savepoint there is marked too", async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-savepoint-restore-'));
    const first = await stopWithSavepoint();
    const second = await runJob(fixture('checkpointed-sum.mjs'), {
      parallelism: 2,
      restoreFrom: 'latest',
      checkpointing: { interval: 100, dir: path.join(dir, 'run1') },
      args: { n: String(N), keys: String(KEYS), rate: '6000' },
    });
    expect(second.status).toBe('finished');
    expectExactRunningSums([...first.rows, ...((second.sinks.sums ?? []) as Row[])], N, KEYS);
  });
});
