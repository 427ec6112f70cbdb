import { readdirSync, readlinkSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointDeclinedError, CheckpointStorageError } from '../../../../src/errors.js';
import { CheckpointStorage } from '../../../../src/state/storage/index.js';
import { metadataFor, seededBytes, subtask, tempDir } from './helpers.js';

/** File descriptors of this process that point into `dir` (Linux /proc), or undefined elsewhere. */
function openFilesUnder(dir: string): string[] | undefined {
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const targets: string[] = [];
  for (const fd of fds) {
    try {
      targets.push(readlinkSync(`/proc/self/fd/${fd}`));
    } catch (error) {
      // The fd readdir itself used (or one closed meanwhile) vanishes before readlink.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return targets.filter((target) => target.startsWith(dir));
}

describe('close', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('leaves no handle: no open file in the directory, which can be deleted and recreated empty', async () => {
    const t = tempDir('close');
    cleanups.push(t.remove);
    const storage = CheckpointStorage.open(t.dir);
    const handles = await storage.writeChunks(1, { operatorUid: 'op', subtaskIndex: 0 }, [
      { name: 'a', bytes: seededBytes(1, 4096) },
    ]);
    await storage.commitCheckpoint(metadataFor(1, [subtask('op', 0, handles)]));
    const whileOpen = openFilesUnder(t.dir);
    if (whileOpen !== undefined) expect(whileOpen.length).toBeGreaterThan(0);
    await storage.close();
    await storage.close(); // idempotent

    const reopened = CheckpointStorage.open(t.dir, { create: false });
    expect(reopened.listCompleted()).toEqual([1]);
    await reopened.close();
    const afterClose = openFilesUnder(t.dir);
    if (afterClose !== undefined) expect(afterClose).toEqual([]);

    // If lmdb-js still held the old environment, a new open would see the deleted data.
    rmSync(t.dir, { recursive: true });
    const fresh = CheckpointStorage.open(t.dir);
    cleanups.push(() => fresh.close());
    expect(fresh.listCompleted()).toEqual([]);
    expect(fresh.nextCheckpointId()).toBe(1);
  });

  it('rejects use after close with CheckpointStorageError', async () => {
    const t = tempDir('closed-use');
    cleanups.push(t.remove);
    const storage = CheckpointStorage.open(t.dir);
    await storage.close();
    expect(storage.closed).toBe(true);
    expect(() => storage.listCompleted()).toThrow(CheckpointStorageError);
    await expect(storage.writeChunks(1, { operatorUid: 'op', subtaskIndex: 0 }, [])).rejects.toThrow(
      /is closed/,
    );
  });

  it('waits for writes in flight: a close during writeChunks leaves no write queued on the closed environment', async () => {
    // lmdb-js blocks writes only on the root database once close() starts; a chunk put queued on
    // a sub-database afterwards made lmdb-js call into the closed environment from setImmediate
    // (an uncaught error; a fatal process abort when the thread was being terminated).
    const t = tempDir('close-in-flight');
    cleanups.push(t.remove);
    const storage = CheckpointStorage.open(t.dir, { maxBatchBytes: 4096, maxInFlightBytes: 4096 });
    const chunks = Array.from({ length: 12 }, (_, i) => ({ name: `c${i}`, bytes: seededBytes(i, 4096) }));
    const writing = storage.writeChunks(1, { operatorUid: 'op', subtaskIndex: 0 }, chunks);
    const settled = writing.then(
      () => 'written',
      (error: unknown) => error,
    );
    await storage.close();
    const outcome = await settled;
    // Either every chunk became durable before the close, or the rest was refused.
    if (outcome !== 'written') {
      expect(outcome).toBeInstanceOf(CheckpointDeclinedError);
      expect((outcome as CheckpointDeclinedError).reason).toBe('storage-failed');
      expect((outcome as Error).message).toMatch(/closed/);
    }
    // Give a stray setImmediate/setTimeout commit the chance to fire (and fail the test run).
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reopened = CheckpointStorage.open(t.dir, { create: false });
    cleanups.push(() => reopened.close());
    expect(reopened.listCompleted()).toEqual([]);
  });

  it('waits for a commit in flight before closing', async () => {
    const t = tempDir('close-commit');
    cleanups.push(t.remove);
    const storage = CheckpointStorage.open(t.dir);
    const handles = await storage.writeChunks(1, { operatorUid: 'op', subtaskIndex: 0 }, [
      { name: 'a', bytes: seededBytes(1, 4096) },
    ]);
    const committing = storage.commitCheckpoint(metadataFor(1, [subtask('op', 0, handles)]));
    await storage.close();
    await expect(committing).resolves.toEqual({ state: 'committed', checkpointId: 1 });
    const reopened = CheckpointStorage.open(t.dir, { create: false });
    cleanups.push(() => reopened.close());
    expect(reopened.listCompleted()).toEqual([1]);
  });
});
