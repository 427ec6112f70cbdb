import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointStorage } from '../../../../src/state/storage/index.js';
import { metadataFor, seededBytes, subtask, tempDir } from './helpers.js';

describe('CheckpointStorage round trip', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  function openTemp(): CheckpointStorage {
    const t = tempDir('roundtrip');
    const storage = CheckpointStorage.open(t.dir);
    cleanups.push(t.remove, () => storage.close());
    return storage;
  }

  it('returns the written bytes and the committed metadata', async () => {
    const storage = openTemp();
    const inputs = [
      { name: 'keyed/sum/kg-0', bytes: seededBytes(1, 70_000), keyGroup: 0 },
      { name: 'keyed/sum/kg-1', bytes: seededBytes(2, 3), keyGroup: 1 },
      { name: 'operator/offsets', bytes: new Uint8Array(0) },
    ];
    const handles = await storage.writeChunks(1, { operatorUid: 'sum', subtaskIndex: 0 }, inputs);
    expect(handles.map((h) => [h.name, h.size, h.keyGroup, h.checkpointId])).toEqual([
      ['keyed/sum/kg-0', 70_000, 0, 1],
      ['keyed/sum/kg-1', 3, 1, 1],
      ['operator/offsets', 0, undefined, 1],
    ]);
    expect(new Set(handles.map((h) => h.chunkId)).size).toBe(3);
    const metadata = metadataFor(1, [subtask('sum', 0, handles)]);
    expect(await storage.commitCheckpoint(metadata)).toEqual({ state: 'committed', checkpointId: 1 });

    expect(storage.loadMetadata(1)).toEqual(metadata);
    expect(storage.latestCompleted()).toEqual(metadata);
    for (const [i, handle] of handles.entries()) {
      expect(Buffer.from(storage.readChunk(handle)).equals(Buffer.from(inputs[i].bytes))).toBe(true);
    }
    const verification = storage.verifyCheckpoint(1);
    expect(verification.state).toBe('ok');
  });

  it('markSinksCommitted rewrites only that checkpoint, durably; false for one not committed', async () => {
    const t = tempDir('mark');
    cleanups.push(t.remove);
    const first = CheckpointStorage.open(t.dir);
    for (const id of [1, 2]) {
      const handles = await first.writeChunks(id, { operatorUid: 'op', subtaskIndex: 0 }, [
        { name: 'x', bytes: seededBytes(id, 10) },
      ]);
      await first.commitCheckpoint(metadataFor(id, [subtask('op', 0, handles)]));
    }
    const before = first.loadMetadata(2)!;
    expect(before.sinksCommitted).toBeUndefined();
    expect(await first.markSinksCommitted(2)).toBe(true);
    expect(await first.markSinksCommitted(3)).toBe(false);
    await first.close();

    const second = CheckpointStorage.open(t.dir, { create: false });
    cleanups.push(() => second.close());
    expect(second.loadMetadata(2)).toEqual({ ...before, sinksCommitted: true });
    expect(second.loadMetadata(1)?.sinksCommitted).toBeUndefined();
    expect(second.verifyCheckpoint(2).state).toBe('ok');
    expect(second.listCompleted()).toEqual([1, 2]);
  });

  it('survives reopening and lists checkpoints ascending whatever the commit order', async () => {
    const t = tempDir('reopen');
    cleanups.push(t.remove);
    const first = CheckpointStorage.open(t.dir);
    for (const id of [3, 1, 12, 2]) {
      const handles = await first.writeChunks(id, { operatorUid: 'op', subtaskIndex: 0 }, [
        { name: 'x', bytes: seededBytes(id, 100) },
      ]);
      expect((await first.commitCheckpoint(metadataFor(id, [subtask('op', 0, handles)]))).state).toBe(
        'committed',
      );
    }
    await first.close();

    const second = CheckpointStorage.open(t.dir, { create: false });
    cleanups.push(() => second.close());
    expect(second.listCompleted()).toEqual([1, 2, 3, 12]);
    expect(second.latestCompleted()?.checkpointId).toBe(12);
    expect(second.nextCheckpointId()).toBe(13);
    const chunk = second.loadMetadata(12)!.subtasks[0].chunks[0];
    expect(Buffer.from(second.readChunk(chunk)).equals(Buffer.from(seededBytes(12, 100)))).toBe(true);
  });

  it('reports a duplicate commit and leaves the first metadata in place', async () => {
    const storage = openTemp();
    const handles = await storage.writeChunks(5, { operatorUid: 'op', subtaskIndex: 0 }, [
      { name: 'x', bytes: seededBytes(5, 10) },
    ]);
    const metadata = metadataFor(5, [subtask('op', 0, handles)]);
    await storage.commitCheckpoint(metadata);
    expect(await storage.commitCheckpoint({ ...metadata, timestamp: 1 })).toEqual({
      state: 'duplicate',
      checkpointId: 5,
    });
    expect(storage.loadMetadata(5)?.timestamp).toBe(metadata.timestamp);
  });

  it('describes checkpoints for the CLI: kind, sizes shared and own, operators', async () => {
    const storage = openTemp();
    const owner = { operatorUid: 'sum', subtaskIndex: 0 };
    const base = await storage.writeChunks(1, owner, [{ name: 'a', bytes: seededBytes(1, 1000) }]);
    await storage.commitCheckpoint(metadataFor(1, [subtask('sum', 0, base)]));
    const delta = await storage.writeChunks(2, owner, [{ name: 'b', bytes: seededBytes(2, 10) }]);
    await storage.commitCheckpoint(
      metadataFor(2, [subtask('sum', 0, [...base, ...delta])], { incremental: true }),
    );

    expect(storage.describe()).toEqual([
      expect.objectContaining({
        state: 'readable',
        checkpointId: 1,
        kind: 'full',
        totalBytes: 1000,
        ownBytes: 1000,
      }),
      expect.objectContaining({
        state: 'readable',
        checkpointId: 2,
        kind: 'incremental',
        totalBytes: 1010,
        ownBytes: 10,
        chunkCount: 2,
        operators: ['sum ×1'],
      }),
    ]);
  });

  it('keeps ids increasing after every checkpoint is discarded', async () => {
    const storage = openTemp();
    const handles = await storage.writeChunks(7, { operatorUid: 'op', subtaskIndex: 0 }, [
      { name: 'x', bytes: seededBytes(7, 10) },
    ]);
    await storage.commitCheckpoint(metadataFor(7, [subtask('op', 0, handles)]));
    await storage.discardCheckpoint(7);
    expect(storage.listCompleted()).toEqual([]);
    expect(storage.nextCheckpointId()).toBe(8);
  });

  it('rejects malformed input up front', async () => {
    const storage = openTemp();
    await expect(storage.writeChunks(0, { operatorUid: 'op', subtaskIndex: 0 }, [])).rejects.toThrow(
      RangeError,
    );
    await expect(
      storage.writeChunks(1, { operatorUid: 'op', subtaskIndex: 0 }, [{ name: 'x', bytes: 'no' as never }]),
    ).rejects.toThrow(TypeError);
    await expect(storage.commitCheckpoint(metadataFor(1, [subtask('op', 0, [{} as never])]))).rejects.toThrow(
      TypeError,
    );
    expect(() => CheckpointStorage.open('/nonexistent-weir-dir', { create: false })).toThrow(
      /no checkpoint storage/,
    );
  });
});
