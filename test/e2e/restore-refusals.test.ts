/**
 * Restore is exact or refused (DESIGN §7): every case in which a restore cannot guarantee
 * exactly-once is a typed error that says what to do, each opt-in is a warning event, and default
 * operator ids survive edits of stateless operators.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CheckpointFileDamagedError,
  CheckpointStorageError,
  type FreshStartEvent,
  InvalidOptionError,
  type JobClient,
  type JobOptions,
  JobWarning,
  MaxParallelismMismatchError,
  NonRestoredStateError,
  type RestoredEvent,
  RestoreFallbackRefusedError,
  runJob,
  startJob,
} from '../../dist/index.js';
import { CheckpointStorage } from '../../dist/state/storage/checkpoint-storage.js';
import { flipByte, overwriteChunkInLmdb } from '../unit/state/storage/helpers.js';
import { committedJsonl, fixture } from './helpers.js';

const JOB = fixture('evolving-count.mjs');
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const N = 3000;
const KEYS = 6;
type Count = { key: number; count: number };

let base: string;
afterEach(() => rmSync(base, { recursive: true, force: true }));
const tmp = (label: string) => {
  base = mkdtempSync(path.join(tmpdir(), `weir-restore-${label}-`));
  return base;
};

/** Everything the restore path tells the user, recorded from a client. */
function record(client: JobClient) {
  const seen = {
    warnings: [] as JobWarning[],
    restored: [] as RestoredEvent[],
    fresh: [] as FreshStartEvent[],
  };
  client.on('warning', (w: unknown) => {
    if (w instanceof JobWarning) seen.warnings.push(w);
  });
  client.on('restored', (e: RestoredEvent) => seen.restored.push(e));
  client.on('fresh-start', (e: FreshStartEvent) => seen.fresh.push(e));
  return seen;
}

/** Every (key, count) exactly once, each key counted to its last record: an exact run. */
function expectExact(records: readonly Count[]) {
  expect(new Set(records.map((r) => `${r.key}/${r.count}`)).size).toBe(N);
  expect(records).toHaveLength(N);
  for (let k = 0; k < KEYS; k++)
    expect(Math.max(...records.filter((r) => r.key === k).map((r) => r.count))).toBe(N / KEYS);
}

/**
 * Runs the job until its first checkpoint completed, then stops it with a savepoint in `dir`.
 * Each source subtask holds after N / 6 records of this run (`hold`): without it, a first
 * checkpoint that took longer than the input (~1 s at 3000 records/s; load 30 on 2 cores) left
 * the savepoint refused ("cannot trigger a savepoint checkpoint (sources-finished)").
 */
async function runToSavepoint(options: JobOptions, dir: string) {
  const client = await startJob(JOB, { ...options, args: { ...options.args, hold: String(N / 6) } });
  const seen = record(client);
  await new Promise((r) => client.once('checkpoint', r));
  const savepoint = await client.stopWithSavepoint(dir);
  await client.done;
  return { savepoint, seen };
}

const args = (extra: Record<string, string>) => ({
  n: String(N),
  keys: String(KEYS),
  rate: '3000',
  ...extra,
});
/** Into a file sink: its commits are idempotent across runs (the collect sink's are per client). */
const fileArgs = (out: string, extra: Record<string, string>) => args({ sink: 'file', out, ...extra });

describe('default operator ids survive edits of stateless operators', () => {
  it('inserting, removing and reordering filter/map/flatMap around a keyed count restores its state exactly', async () => {
    const dir = tmp('ids');
    const out = path.join(dir, 'out');
    const cp = (i: number) => ({ interval: 100, dir: path.join(dir, `run${i}`) });
    const run1 = await runToSavepoint(
      { parallelism: 2, checkpointing: cp(1), args: fileArgs(out, { before: 'map', after: 'filter' }) },
      path.join(dir, 'sp1'),
    );
    // Inserted a filter and a flatMap before the keyed count, removed the filter after it.
    const run2 = await runToSavepoint(
      {
        parallelism: 2,
        checkpointing: cp(2),
        restoreFrom: path.join(dir, 'sp1'),
        args: fileArgs(out, { before: 'filter,map,flat', after: '' }),
      },
      path.join(dir, 'sp2'),
    );
    expect(run2.seen.restored.map((e) => e.checkpointId)).toEqual([run1.savepoint.checkpointId]);
    // Removed the filter, reordered map and flatMap, inserted two operators after the count.
    const client3 = await startJob(JOB, {
      parallelism: 2,
      checkpointing: cp(3),
      restoreFrom: path.join(dir, 'sp2'),
      args: fileArgs(out, { rate: '20000', before: 'flat,map', after: 'map,filter' }),
    });
    const seen3 = record(client3);
    await client3.done;
    expect(seen3.restored.map((e) => e.checkpointId)).toEqual([run2.savepoint.checkpointId]);
    // No state was dropped; the stateful operators without uid were named in a warning.
    for (const seen of [run2.seen, seen3]) {
      expect(seen.warnings.map((w) => w.kind)).toEqual(['operators-without-uid']);
      expect(seen.warnings[0].message).toMatch(/"running count"/);
    }
    expectExact(committedJsonl<Count>(out));
  });
});

describe('a removed stateful operator, another maxParallelism', () => {
  it('refused without allowNonRestoredState (NonRestoredStateError naming it); dropped with a warning with it; maxParallelism refused naming both values', async () => {
    const dir = tmp('orphan');
    const out = path.join(dir, 'out');
    const sp = path.join(dir, 'sp');
    const run1 = await runToSavepoint(
      {
        parallelism: 2,
        checkpointing: { interval: 100, dir: path.join(dir, 'run1') },
        args: fileArgs(out, { audit: '1' }),
      },
      sp,
    );
    const withoutAudit: JobOptions = {
      parallelism: 2,
      checkpointing: { interval: 100, dir: path.join(dir, 'run2') },
      restoreFrom: sp,
      args: fileArgs(out, { rate: '20000' }),
    };
    const refused = await runJob(JOB, withoutAudit).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NonRestoredStateError);
    expect((refused as NonRestoredStateError).operators).toEqual([
      { operatorUid: 'keyed-process:audit:0', name: 'audit', kind: 'operator' },
    ]);
    expect((refused as Error).message).toMatch(
      /allowNonRestoredState: true \(CLI --allow-non-restored-state\)/,
    );

    const mismatch = await runJob(JOB, {
      ...withoutAudit,
      maxParallelism: 64,
      allowNonRestoredState: true,
    }).catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(MaxParallelismMismatchError);
    expect(mismatch).toMatchObject({ checkpointMaxParallelism: 128, jobMaxParallelism: 64 });
    expect((mismatch as Error).message).toMatch(/maxParallelism 128.*maxParallelism 64/);

    const client = await startJob(JOB, { ...withoutAudit, allowNonRestoredState: true });
    const seen = record(client);
    await client.done;
    const dropped = seen.warnings.filter((w) => w.kind === 'non-restored-state');
    expect(dropped).toHaveLength(1);
    expect(dropped[0].details).toMatchObject({
      checkpointId: run1.savepoint.checkpointId,
      operators: [{ operatorUid: 'keyed-process:audit:0', name: 'audit' }],
    });
    expectExact(committedJsonl<Count>(out));
  });
});

describe('a fallback past a damaged checkpoint whose output was committed', () => {
  it('is refused (RestoreFallbackRefusedError naming the checkpoints, output untouched); allowed, it commits duplicates with a warning', async () => {
    const dir = tmp('fallback');
    const out = path.join(dir, 'out');
    const release = path.join(dir, 'release');
    const options: JobOptions = {
      parallelism: 2,
      checkpointing: { interval: 100, dir: path.join(dir, 'cp'), retain: 1000 },
      args: args({ sink: 'file', out, rate: '6000' }),
    };
    // The sources hold after N / 6 records each until `release` exists, and it is written only
    // once a checkpoint completed: that checkpoint (`fallback`) covers at most N / 3 records,
    // however slow the machine. Every later checkpoint is damaged below, so the restore falls
    // back to `fallback` and must emit again records whose output run 1 committed. (Damaging
    // only the newest failed CI under load: the checkpoint before it had been taken after the
    // last record, and the fallback committed nothing twice.)
    const run1 = await startJob(JOB, {
      ...options,
      args: { ...options.args, hold: String(N / 6), release },
    });
    const fallback = await new Promise<number>((r) =>
      run1.once('checkpoint', (s: { checkpointId: number }) => r(s.checkpointId)),
    );
    writeFileSync(release, '');
    await run1.done;
    expectExact(committedJsonl<Count>(out));
    const storage = CheckpointStorage.open(path.join(dir, 'cp'), { create: false });
    const completed = storage.listCompleted();
    expect(completed).toContain(fallback);
    const later = completed.filter((c) => c > fallback);
    expect(later.length).toBeGreaterThan(0);
    // A chunk each later checkpoint wrote itself (a shared one would damage `fallback` too).
    const own = later.map(
      (c) =>
        storage
          .loadMetadata(c)!
          .subtasks.flatMap((s) => s.chunks)
          .find((h) => h.checkpointId === c)!,
    );
    await storage.close();
    for (const chunk of own) await overwriteChunkInLmdb(path.join(dir, 'cp'), chunk.chunkId, flipByte(20));

    const refused = await runJob(JOB, { ...options, restoreFrom: 'latest' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RestoreFallbackRefusedError);
    expect(refused).toMatchObject({ fallbackCheckpointId: fallback });
    const damaged = (refused as RestoreFallbackRefusedError).damaged.map((d) => d.checkpointId);
    expect([...damaged].sort((a, b) => a - b)).toEqual(later);
    expect((refused as Error).message).toMatch(
      /allowFallbackPastDamaged: true \(CLI --allow-fallback-past-damaged\)/,
    );
    expectExact(committedJsonl<Count>(out)); // nothing ran

    const client = await startJob(JOB, { ...options, restoreFrom: 'latest', allowFallbackPastDamaged: true });
    const seen = record(client);
    await client.done;
    expect(seen.restored.map((e) => e.checkpointId)).toEqual([fallback]);
    const warned = seen.warnings.filter((w) => w.kind === 'fallback-past-damaged');
    expect(warned).toHaveLength(1);
    expect(warned[0].details).toMatchObject({ restoredCheckpointId: fallback });
    const skipped = (warned[0].details as unknown as { skipped: { checkpointId: number }[] }).skipped;
    expect(skipped.map((d) => d.checkpointId).sort((a, b) => a - b)).toEqual(later);
    // The consequence the refusal prevents: output after `fallback` committed a second time.
    expect(committedJsonl<Count>(out).length).toBeGreaterThanOrEqual(N + (2 * N) / 3);
  });
});

describe('checkpoint directories for restoreFrom: latest', () => {
  it('a directory that does not exist: a fresh start, said; one that lost data.mdb: refused; restoreFrom without a dir: refused', async () => {
    const dir = tmp('dirs');
    const cp = path.join(dir, 'never-created');
    const options: JobOptions = {
      parallelism: 1,
      checkpointing: { interval: 100, dir: cp },
      restoreFrom: 'latest',
      args: args({ rate: '20000' }),
    };
    const client = await startJob(JOB, options);
    const seen = record(client);
    const result = await client.done;
    expect(seen.fresh).toEqual([
      {
        dir: cp,
        reason: 'no-directory',
        message: expect.stringMatching(/did not exist: starting from the beginning/),
      },
    ]);
    expectExact(result.sinks.counts as Count[]);

    rmSync(path.join(cp, 'data.mdb'));
    const lost = await runJob(JOB, options).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(CheckpointStorageError);
    expect((lost as Error).message).toMatch(/lock\.mdb but no data\.mdb/);

    mkdirSync(path.join(dir, 'empty'));
    const empty = await startJob(JOB, {
      ...options,
      checkpointing: { interval: 100, dir: path.join(dir, 'empty') },
    });
    const emptySeen = record(empty);
    await empty.done;
    expect(emptySeen.fresh.map((e) => e.reason)).toEqual(['empty-directory']);

    await expect(runJob(JOB, { ...options, checkpointing: { interval: 100 } })).rejects.toThrow(
      InvalidOptionError,
    );
    await expect(runJob(JOB, { ...options, checkpointing: undefined })).rejects.toThrow(InvalidOptionError);
  });

  it('weir run --restore latest: prints the fresh start; a truncated data.mdb is a typed error and exit 1, never a signal', () => {
    const dir = tmp('cli');
    const cp = path.join(dir, 'cp');
    const weir = (extra: string[]) =>
      spawnSync(
        process.execPath,
        [
          path.join(ROOT, 'bin/weir.js'),
          'run',
          JOB,
          '--checkpoint-dir',
          cp,
          '--checkpoint-interval',
          '100',
          ...extra,
        ],
        { cwd: ROOT, encoding: 'utf8' },
      );
    const first = weir(['--restore', 'latest', '--arg', 'n=600', '--arg', 'rate=20000']);
    expect(first.status).toBe(0);
    expect(first.stderr).toMatch(
      /weir run: fresh start: checkpoint directory .*cp did not exist: starting from the beginning/,
    );
    expect(first.stderr).toMatch(/weir run: warning: 3 stateful operator\(s\) have no explicit uid/);

    const file = path.join(cp, 'data.mdb');
    truncateSync(file, Math.floor(readFileSync(file).length / 2));
    const damaged = weir(['--restore', 'latest', '--arg', 'n=600']);
    expect(damaged.signal).toBeNull();
    expect(damaged.status).toBe(1);
    expect(damaged.stderr).toMatch(/checkpoint file .*data\.mdb is damaged: .* it was truncated/);
    // The in-process API reports the same typed error.
    expect(() => CheckpointStorage.open(cp, { create: false })).toThrow(CheckpointFileDamagedError);
  });
});
