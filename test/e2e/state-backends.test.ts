/**
 * The exactly-once failure test of checkpointing.test.ts (keyed running sum and count, one
 * failure injected after a completed checkpoint, exact results) with incremental checkpoints and
 * with the lmdb working-state backend, at parallelism 2. With a checkpoint directory, the test
 * also checks that incremental checkpoints really share chunks and that every retained
 * checkpoint verifies.
 */
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type JobOptions, startJob } from '../../dist/index.js';
import { CheckpointStorage } from '../../dist/state/storage/checkpoint-storage.js';
import { flipByte, overwriteChunkInLmdb } from '../unit/state/storage/helpers.js';
import { expectedSums, finalByKey, fixture } from './helpers.js';

type Sum = { key: number; sum: number; count: number };

const N = 6000;
const KEYS = 10;

const dirs: string[] = [];
const tmpBefore = process.env.TMPDIR;
afterEach(() => {
  if (tmpBefore === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = tmpBefore;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * Gives this test's jobs a temp dir of their own (the job's main thread makes its lmdb working
 * directory under `os.tmpdir()`), so "no state directory left behind" cannot see the working
 * directories of other test files running at the same time.
 */
function isolateTmpdir(): void {
  const own = mkdtempSync(join(tmpdir(), 'weir-e2e-tmp-'));
  dirs.push(own);
  process.env.TMPDIR = own;
}

async function run(failure: string, options: JobOptions, minSnapshots = 0, stateType?: 'number') {
  const client = await startJob(fixture('checkpointed-sum.mjs'), {
    restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
    ...options,
    args: {
      failure,
      n: String(N),
      keys: String(KEYS),
      at: '0.6',
      minSnapshots: String(minSnapshots),
      ...(stateType ? { stateType } : {}),
    },
  });
  // Polls while the job runs: proves the check after the job can see open environments.
  let sawOpenStateFiles = false;
  const poll = setInterval(() => {
    if (openStateFiles().length > 0) sawOpenStateFiles = true;
  }, 20);
  const result = await client.done.finally(() => clearInterval(poll));
  return {
    result,
    sawOpenStateFiles,
    sums: result.sinks.sums as { key: number; sum: number; count: number }[],
  };
}

/** Files of lmdb state environments this process has open (worker threads share the process). */
function openStateFiles(): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.includes('weir-state-')) out.push(target);
    } catch {
      // The fd closed between readdir and readlink: not open any more.
    }
  }
  return out;
}

const stateDirs = () => new Set(readdirSync(tmpdir()).filter((n) => n.startsWith('weir-state-')));

describe.each([
  { name: 'heap, incremental', stateBackend: 'heap' as const, incremental: true, failures: ['throw'] },
  // State declared { type: 'number' }: the heap backend's number slots, full and incremental.
  {
    name: 'heap, number state',
    stateBackend: 'heap' as const,
    incremental: false,
    failures: ['exit'],
    stateType: 'number' as const,
  },
  {
    name: 'heap, number state, incremental',
    stateBackend: 'heap' as const,
    incremental: true,
    failures: ['throw'],
    stateType: 'number' as const,
  },
  { name: 'lmdb', stateBackend: 'lmdb' as const, incremental: false, failures: ['throw'] },
  {
    name: 'lmdb, incremental',
    stateBackend: 'lmdb' as const,
    incremental: true,
    failures: ['throw', 'exit'],
  },
])('exactly-once under failure: $name', ({ stateBackend, incremental, failures, stateType }) => {
  it.each(failures)('p=2: a %s failure restores and the output is exact', async (failure) => {
    const dir = mkdtempSync(join(tmpdir(), 'weir-e2e-state-'));
    dirs.push(dir);
    isolateTmpdir();
    const dirsBefore = stateDirs();
    // The restored attempt's sources end only after 6 snapshots each, so the retained
    // checkpoints (3 of a chain with a full one every 4th) include a delta even on a loaded machine.
    const { result, sums, sawOpenStateFiles } = await run(
      failure,
      {
        parallelism: 2,
        stateBackend,
        checkpointing: { interval: 100, dir, incremental, fullEvery: 4, retain: 3 },
      },
      incremental ? 6 : 0,
      stateType,
    );
    expect(result.restarts).toBe(1);
    // After the job: no lmdb state environment open, no state directory left behind.
    expect(sawOpenStateFiles).toBe(stateBackend === 'lmdb');
    expect(openStateFiles()).toEqual([]);
    expect([...stateDirs()].filter((d) => !dirsBefore.has(d))).toEqual([]);
    expect(sums).toHaveLength(N);
    expect(new Set(sums.map((s) => `${s.key}/${s.count}`)).size).toBe(N);
    const finals = finalByKey(sums, (s) => s.count);
    for (const [key, e] of expectedSums(N, KEYS)) expect(finals.get(key)).toEqual({ key, ...e });

    const storage = CheckpointStorage.open(dir, { create: false });
    try {
      const rows = storage.describe();
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.length).toBeLessThanOrEqual(3);
      for (const row of rows) expect(storage.verifyCheckpoint(row.checkpointId).state).toBe('ok');
      if (incremental) {
        // At least 6 checkpoints after the restore: some retained ones build on earlier chunks.
        const kinds = rows.map((r) => (r.state === 'readable' ? r.kind : 'corrupt'));
        expect(kinds).toContain('incremental');
      }
    } finally {
      await storage.close();
    }
  });
});

describe('restore skips a damaged checkpoint when allowed (allowFallbackPastDamaged)', () => {
  it.each(['lmdb'] as const)(
    '%s: a corrupt chunk of the newest checkpoint: warning, restore from the previous one, exact state',
    async (stateBackend) => {
      const dir = mkdtempSync(join(tmpdir(), 'weir-e2e-corrupt-'));
      dirs.push(dir);
      const options: JobOptions = {
        parallelism: 2,
        stateBackend,
        checkpointing: { interval: 50, dir, retain: 3 },
      };
      await run('none', options);
      const storage = CheckpointStorage.open(dir, { create: false });
      const [previous, newest] = storage.listCompleted().slice(-2);
      const metadata = storage.loadMetadata(newest)!;
      await storage.close();
      const keyed = metadata.subtasks.flatMap((s) => s.chunks).find((h) => h.keyGroup !== undefined)!;
      await overwriteChunkInLmdb(dir, keyed.chunkId, flipByte(40));

      const client = await startJob(fixture('checkpointed-sum.mjs'), {
        ...options,
        restoreFrom: 'latest',
        // Without it the restore is refused (restore-refusals.test.ts): the damaged checkpoint's
        // output may have been committed. The collect sink is per client, so nothing repeats here.
        allowFallbackPastDamaged: true,
        args: { failure: 'none', n: String(N), keys: String(KEYS) },
      });
      const warnings: string[] = [];
      const restored: number[] = [];
      client.on('warning', (w: Error) => warnings.push(w.message));
      client.on('restored', (e: { checkpointId: number }) => restored.push(e.checkpointId));
      const result = await client.done;
      expect(restored).toEqual([previous]);
      expect(warnings.join('\n')).toMatch(
        new RegExp(`past damaged checkpoint\\(s\\) ${newest} \\(.*corrupt`),
      );
      // The remainder after the previous checkpoint was processed again, from its state: exact.
      const finals = finalByKey(result.sinks.sums as Sum[], (s) => s.count);
      for (const [key, e] of expectedSums(N, KEYS)) expect(finals.get(key)).toEqual({ key, ...e });
    },
  );
});
