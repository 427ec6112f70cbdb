import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointStorage } from '../../../../src/state/storage/index.js';
import { metadataFor, seededBytes, subtask, tempDir } from './helpers.js';

describe('cleanup', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('removes orphans older than the in-flight checkpoint, never committed chunks or in-flight ones', async () => {
    const t = tempDir('cleanup');
    cleanups.push(t.remove);
    const storage = CheckpointStorage.open(t.dir);
    cleanups.push(() => storage.close());
    const owner = { operatorUid: 'op', subtaskIndex: 0 };

    const c1 = await storage.writeChunks(1, owner, [{ name: 'a', bytes: seededBytes(1, 1000) }]);
    await storage.commitCheckpoint(metadataFor(1, [subtask('op', 0, c1)]));
    // Checkpoint 2 was aborted after its task wrote chunks: orphans.
    const aborted = await storage.writeChunks(2, owner, [
      { name: 'a', bytes: seededBytes(2, 300) },
      { name: 'b', bytes: seededBytes(3, 200) },
    ]);
    // Checkpoint 3 is in flight: written, not yet committed.
    const inFlight = await storage.writeChunks(3, owner, [{ name: 'a', bytes: seededBytes(4, 700) }]);

    expect(await storage.cleanup({ keepFromCheckpointId: 3 })).toEqual({ deletedChunks: 2, freedBytes: 500 });
    expect(() => storage.readChunk(aborted[0])).toThrow(/missing/);
    expect(storage.readChunk(c1[0])).toHaveLength(1000);
    expect(storage.readChunk(inFlight[0])).toHaveLength(700);

    // The in-flight checkpoint can still commit after the cleanup.
    expect((await storage.commitCheckpoint(metadataFor(3, [subtask('op', 0, inFlight)]))).state).toBe(
      'committed',
    );
    expect(await storage.cleanup({ keepFromCheckpointId: storage.nextCheckpointId() })).toEqual({
      deletedChunks: 0,
      freedBytes: 0,
    });
    expect(storage.verifyCheckpoint(1).state).toBe('ok');
    expect(storage.verifyCheckpoint(3).state).toBe('ok');
  });

  it('deletes in several transactions when there are many orphans', async () => {
    const t = tempDir('cleanup-many');
    cleanups.push(t.remove);
    const storage = CheckpointStorage.open(t.dir);
    cleanups.push(() => storage.close());
    const inputs = Array.from({ length: 1300 }, (_, i) => ({ name: `c${i}`, bytes: seededBytes(i + 1, 8) }));
    await storage.writeChunks(1, { operatorUid: 'op', subtaskIndex: 0 }, inputs);
    expect(await storage.cleanup({ keepFromCheckpointId: 2 })).toEqual({
      deletedChunks: 1300,
      freedBytes: 10_400,
    });
    expect(storage.nextCheckpointId()).toBe(1);
  });
});
