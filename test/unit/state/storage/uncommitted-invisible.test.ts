import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointStorage } from '../../../../src/state/storage/index.js';
import { metadataFor, seededBytes, subtask, tempDir } from './helpers.js';

describe('uncommitted checkpoints', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('are invisible until their metadata commits, also to another handle', async () => {
    const t = tempDir('uncommitted');
    cleanups.push(t.remove);
    const task = CheckpointStorage.open(t.dir);
    const coordinator = CheckpointStorage.open(t.dir);
    cleanups.push(
      () => task.close(),
      () => coordinator.close(),
    );

    const c1 = await task.writeChunks(1, { operatorUid: 'op', subtaskIndex: 0 }, [
      { name: 'a', bytes: seededBytes(1, 64) },
    ]);
    await coordinator.commitCheckpoint(metadataFor(1, [subtask('op', 0, c1)]));
    const c2 = await task.writeChunks(2, { operatorUid: 'op', subtaskIndex: 0 }, [
      { name: 'a', bytes: seededBytes(2, 64) },
    ]);

    for (const view of [task, coordinator]) {
      expect(view.listCompleted()).toEqual([1]);
      expect(view.latestCompleted()?.checkpointId).toBe(1);
      expect(view.loadMetadata(2)).toBeUndefined();
      expect(view.verifyCheckpoint(2)).toEqual({ state: 'not-found', checkpointId: 2 });
      const selection = view.findRestorable();
      expect(selection.state === 'found' && selection.metadata.checkpointId).toBe(1);
      expect(selection.skipped).toEqual([]);
      // Orphans still count for id allocation: a restarted job must not reuse id 2.
      expect(view.nextCheckpointId()).toBe(3);
    }

    expect((await coordinator.commitCheckpoint(metadataFor(2, [subtask('op', 0, c2)]))).state).toBe(
      'committed',
    );
    expect(task.listCompleted()).toEqual([1, 2]);
  });

  it('refuses to commit metadata that references chunks which do not exist', async () => {
    const t = tempDir('missing-at-commit');
    cleanups.push(t.remove);
    const storage = CheckpointStorage.open(t.dir);
    cleanups.push(() => storage.close());
    const [real] = await storage.writeChunks(1, { operatorUid: 'op', subtaskIndex: 0 }, [
      { name: 'a', bytes: seededBytes(1, 8) },
    ]);
    const ghost = { ...real, chunkId: `${real.chunkId}-ghost` };
    expect(await storage.commitCheckpoint(metadataFor(1, [subtask('op', 0, [real, ghost])]))).toEqual({
      state: 'missing-chunks',
      checkpointId: 1,
      missing: [ghost.chunkId],
    });
    expect(storage.listCompleted()).toEqual([]);
  });
});
