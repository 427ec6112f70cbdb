import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { CorruptStateError } from '../../../../src/errors.js';
import { CheckpointStorage, type ChunkHandle } from '../../../../src/state/storage/index.js';
import { DB_METADATA, environmentOptions } from '../../../../src/state/storage/storage-layout.js';
import { flipByte, metadataFor, overwriteChunkInLmdb, seededBytes, subtask, tempDir } from './helpers.js';

/** Commits full checkpoints 1..n with two chunks each; returns their handles by checkpoint id. */
async function commitFull(storage: CheckpointStorage, n: number): Promise<Map<number, ChunkHandle[]>> {
  const byId = new Map<number, ChunkHandle[]>();
  for (let id = 1; id <= n; id++) {
    const handles = await storage.writeChunks(id, { operatorUid: 'op', subtaskIndex: 0 }, [
      { name: 'big', bytes: seededBytes(id, 100_000), keyGroup: 0 },
      { name: 'small', bytes: seededBytes(id + 1000, 16), keyGroup: 1 },
    ]);
    expect((await storage.commitCheckpoint(metadataFor(id, [subtask('op', 0, handles)]))).state).toBe(
      'committed',
    );
    byId.set(id, handles);
  }
  return byId;
}

describe('damaged checkpoints', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  function openTemp(label: string): CheckpointStorage {
    const t = tempDir(label);
    const storage = CheckpointStorage.open(t.dir);
    cleanups.push(t.remove, () => storage.close());
    return storage;
  }

  it('a flipped byte in LMDB fails readChunk with CorruptStateError and restore falls back with a warning', async () => {
    const storage = openTemp('corrupt');
    const handles = await commitFull(storage, 2);
    const damaged = handles.get(2)![0];
    await overwriteChunkInLmdb(storage.dir, damaged.chunkId, flipByte(54_321));

    expect(() => storage.readChunk(damaged)).toThrow(CorruptStateError);
    expect(() => storage.readChunk(damaged)).toThrow(
      new RegExp(`chunk ${damaged.chunkId} \\(big\\) of checkpoint 2 is corrupt \\(checksum mismatch\\)`),
    );
    const verification = storage.verifyCheckpoint(2);
    expect(verification.state).toBe('damaged');
    expect(verification.state === 'damaged' && verification.chunks.map((c) => c.state)).toEqual([
      'corrupt',
      'ok',
    ]);

    const selection = storage.findRestorable();
    expect(selection.state).toBe('found');
    expect(selection.state === 'found' && selection.metadata.checkpointId).toBe(1);
    expect(selection.skipped).toHaveLength(1);
    expect(selection.skipped[0]).toMatchObject({ checkpointId: 2, state: 'damaged' });
    expect(selection.skipped[0].problems).toEqual([
      expect.stringMatching(/chunk .* \(big, 100000 B.*corrupt/),
    ]);
  });

  it('a truncated chunk is corrupt (size mismatch)', async () => {
    const storage = openTemp('truncated');
    const handles = await commitFull(storage, 1);
    const damaged = handles.get(1)![0];
    await overwriteChunkInLmdb(storage.dir, damaged.chunkId, (b) => b.subarray(0, 10));
    expect(() => storage.readChunk(damaged)).toThrow(/corrupt \(size 10, expected 100000\)/);
  });

  it('a missing chunk fails readChunk and restore falls back with a warning', async () => {
    const storage = openTemp('missing');
    const handles = await commitFull(storage, 3);
    const gone = handles.get(3)![1];
    await overwriteChunkInLmdb(storage.dir, gone.chunkId, () => undefined);

    expect(() => storage.readChunk(gone)).toThrow(CorruptStateError);
    expect(() => storage.readChunk(gone)).toThrow(/of checkpoint 3 is missing/);
    const selection = storage.findRestorable();
    expect(selection.state === 'found' && selection.metadata.checkpointId).toBe(2);
    expect(selection.skipped.map((s) => [s.checkpointId, s.state])).toEqual([[3, 'damaged']]);
    expect(selection.skipped[0].problems[0]).toMatch(/small.* missing$/);
  });

  it('corrupt metadata is skipped, listed as such, and discarding it keeps refcounts right', async () => {
    const storage = openTemp('metadata');
    await commitFull(storage, 2);
    const root = open(environmentOptions(storage.dir));
    const metadataDb = root.openDB<Buffer, number>({ name: DB_METADATA, encoding: 'binary' });
    const record = Buffer.from(metadataDb.getBinary(2)!);
    record[record.length - 1] ^= 0xff;
    metadataDb.putSync(2, record);
    await root.close();

    expect(() => storage.loadMetadata(2)).toThrow(/metadata of checkpoint 2 failed its checksum/);
    expect(storage.describe().map((row) => row.state)).toEqual(['readable', 'metadata-corrupt']);
    const selection = storage.findRestorable();
    expect(selection.state === 'found' && selection.metadata.checkpointId).toBe(1);
    expect(selection.skipped).toEqual([
      { checkpointId: 2, state: 'metadata-corrupt', problems: [expect.stringMatching(/checksum/)] },
    ]);

    expect(await storage.discardCheckpoint(2)).toMatchObject({ state: 'discarded', refcountsRebuilt: true });
    // Checkpoint 2's chunks are now orphans; checkpoint 1's survive cleanup.
    expect(await storage.cleanup({ keepFromCheckpointId: storage.nextCheckpointId() })).toEqual({
      deletedChunks: 2,
      freedBytes: 100_016,
    });
    expect(storage.verifyCheckpoint(1).state).toBe('ok');
  });

  it('when every checkpoint is damaged there is nothing to restore, and the skipped list says why', async () => {
    const storage = openTemp('all-damaged');
    const handles = await commitFull(storage, 2);
    await overwriteChunkInLmdb(storage.dir, handles.get(1)![0].chunkId, flipByte(0));
    await overwriteChunkInLmdb(storage.dir, handles.get(2)![1].chunkId, () => undefined);
    const selection = storage.findRestorable();
    expect(selection).toEqual({
      state: 'none',
      skipped: [
        expect.objectContaining({ checkpointId: 2, state: 'damaged' }),
        expect.objectContaining({ checkpointId: 1, state: 'damaged' }),
      ],
    });
  });

  it('an empty directory has nothing to restore and nothing skipped (fresh start)', () => {
    const storage = openTemp('empty');
    expect(storage.findRestorable()).toEqual({ state: 'none', skipped: [] });
    expect(storage.nextCheckpointId()).toBe(1);
  });
});
