import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointStorage, type ChunkHandle } from '../../../../src/state/storage/index.js';
import { metadataFor, seededBytes, subtask, tempDir } from './helpers.js';

describe('retention with shared chunks', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('discarding c1 keeps the chunks the incremental c2 shares with it; c2 stays restorable', async () => {
    const t = tempDir('retention');
    cleanups.push(t.remove);
    const storage = CheckpointStorage.open(t.dir);
    cleanups.push(() => storage.close());
    const owner = { operatorUid: 'sum', subtaskIndex: 0 };

    const c1 = await storage.writeChunks(1, owner, [
      { name: 'base-0', bytes: seededBytes(10, 5000), keyGroup: 0 },
      { name: 'base-1', bytes: seededBytes(11, 7000), keyGroup: 1 },
    ]);
    await storage.commitCheckpoint(metadataFor(1, [subtask('sum', 0, c1)]));
    // c2 is a delta over c1: it shares base-0 and base-1 and adds one chunk.
    const d2 = await storage.writeChunks(2, owner, [
      { name: 'delta-0', bytes: seededBytes(12, 300), keyGroup: 0 },
    ]);
    await storage.commitCheckpoint(
      metadataFor(2, [subtask('sum', 0, [...c1, ...d2])], { incremental: true }),
    );

    expect(await storage.discardCheckpoint(1)).toEqual({
      state: 'discarded',
      checkpointId: 1,
      deletedChunks: 0,
      freedBytes: 0,
      refcountsRebuilt: false,
    });
    expect(storage.listCompleted()).toEqual([2]);
    expect(storage.verifyCheckpoint(2).state).toBe('ok');
    const selection = storage.findRestorable();
    expect(selection.state === 'found' && selection.metadata.checkpointId).toBe(2);
    expect(Buffer.from(storage.readChunk(c1[1])).equals(Buffer.from(seededBytes(11, 7000)))).toBe(true);
    // A cleanup after the discard does not treat the shared chunks as orphans either.
    expect(await storage.cleanup({ keepFromCheckpointId: 3 })).toEqual({ deletedChunks: 0, freedBytes: 0 });
    expect(storage.verifyCheckpoint(2).state).toBe('ok');

    // Discarding the last referencing checkpoint frees everything.
    expect(await storage.discardCheckpoint(2)).toMatchObject({ deletedChunks: 3, freedBytes: 12_300 });
    expect(() => storage.readChunk(c1[0])).toThrow(/missing/);
    expect(await storage.discardCheckpoint(2)).toEqual({ state: 'unknown', checkpointId: 2 });
  });

  it('an incremental checkpoint whose shared base was discarded before its commit is refused', async () => {
    const t = tempDir('retention-race');
    cleanups.push(t.remove);
    const storage = CheckpointStorage.open(t.dir);
    cleanups.push(() => storage.close());
    const owner = { operatorUid: 'sum', subtaskIndex: 0 };
    const c1 = await storage.writeChunks(1, owner, [{ name: 'base', bytes: seededBytes(1, 100) }]);
    await storage.commitCheckpoint(metadataFor(1, [subtask('sum', 0, c1)]));
    const d2 = await storage.writeChunks(2, owner, [{ name: 'delta', bytes: seededBytes(2, 10) }]);
    await storage.discardCheckpoint(1);
    expect(
      await storage.commitCheckpoint(
        metadataFor(2, [subtask('sum', 0, [...c1, ...d2])], { incremental: true }),
      ),
    ).toEqual({ state: 'missing-chunks', checkpointId: 2, missing: [c1[0].chunkId] });
  });

  it('random chains with random retention never lose a chunk a retained checkpoint needs', async () => {
    const t = tempDir('retention-prop');
    cleanups.push(t.remove);
    const storage = CheckpointStorage.open(t.dir);
    cleanups.push(() => storage.close());
    let nextId = 1;
    await fc.assert(
      fc.asyncProperty(
        // per step: how many new chunks, which earlier chunks to share (bitmask), discard which retained one
        fc.array(
          fc.record({ fresh: fc.nat(2), share: fc.nat(), discard: fc.option(fc.nat(), { nil: undefined }) }),
          {
            minLength: 1,
            maxLength: 8,
          },
        ),
        async (steps) => {
          const retained = new Map<number, ChunkHandle[]>();
          for (const step of steps) {
            const id = nextId++;
            const pool = [...new Map([...retained.values()].flat().map((h) => [h.chunkId, h])).values()];
            const shared = pool.filter((_, i) => (step.share >> i) & 1);
            const fresh = await storage.writeChunks(
              id,
              { operatorUid: 'op', subtaskIndex: 0 },
              Array.from({ length: step.fresh }, (_, i) => ({
                name: `n${i}`,
                bytes: seededBytes(id * 10 + i, 50),
              })),
            );
            const handles = [...shared, ...fresh];
            const outcome = await storage.commitCheckpoint(
              metadataFor(id, [subtask('op', 0, handles)], { incremental: shared.length > 0 }),
            );
            expect(outcome.state).toBe('committed');
            retained.set(id, handles);
            if (step.discard !== undefined && retained.size > 1) {
              const victim = [...retained.keys()][step.discard % retained.size];
              expect((await storage.discardCheckpoint(victim)).state).toBe('discarded');
              retained.delete(victim);
            }
            await storage.cleanup({ keepFromCheckpointId: id + 1 });
            for (const retainedId of retained.keys())
              expect(storage.verifyCheckpoint(retainedId).state).toBe('ok');
          }
          for (const id of retained.keys()) await storage.discardCheckpoint(id);
          // Everything discarded: nothing may be left behind either.
          expect(await storage.cleanup({ keepFromCheckpointId: nextId })).toEqual({
            deletedChunks: 0,
            freedBytes: 0,
          });
          expect(storage.listCompleted()).toEqual([]);
        },
      ),
      { numRuns: 25, seed: 20240601 },
    );
  });
});
