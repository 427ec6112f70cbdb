import { afterEach, describe, expect, it } from 'vitest';
import {
  checkpointsToDiscard,
  type RetentionStorage,
  SharedDirRetention,
} from '../../../src/cluster/shared-dir-retention.js';
import type { CheckpointMetadata } from '../../../src/state/storage/checkpoint-metadata.js';
import type { CommitOutcome, DiscardOutcome } from '../../../src/state/storage/checkpoint-storage.js';
import { CheckpointStorage, type ChunkHandle } from '../../../src/state/storage/index.js';
import { metadataFor, seededBytes, subtask, tempDir } from '../state/storage/helpers.js';

describe('checkpointsToDiscard (checkpointing.retain in a cluster job’s shared directory)', () => {
  it('keeps the newest `retain` up to the checkpoint just written', () => {
    expect(checkpointsToDiscard([1, 2, 3, 4, 5], 5, 3)).toEqual([1, 2]);
    expect(checkpointsToDiscard([4, 5], 5, 3)).toEqual([]);
    expect(checkpointsToDiscard([1, 2, 3], 3, 1)).toEqual([1, 2]);
    // Ids need not be contiguous (aborted checkpoints, restarts).
    expect(checkpointsToDiscard([2, 7, 9, 10], 10, 2)).toEqual([2, 7]);
    // A newer checkpoint already in the directory (written by a later run) is not counted.
    expect(checkpointsToDiscard([1, 2, 3, 8], 3, 1)).toEqual([1, 2]);
    expect(checkpointsToDiscard([], 3, 3)).toEqual([]);
  });
});

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
}
function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Scripted store: every call is logged; discards wait for the test to release them. */
function scriptedStorage(missing: Record<number, string[]> = {}) {
  const events: string[] = [];
  const completed: number[] = [];
  const discards: Deferred[] = [];
  const storage: RetentionStorage = {
    closed: false,
    missingChunks: (m: CheckpointMetadata) => {
      events.push(`check ${m.checkpointId}`);
      return missing[m.checkpointId] ?? [];
    },
    commitCheckpoint: async (m: CheckpointMetadata): Promise<CommitOutcome> => {
      events.push(`write ${m.checkpointId}`);
      completed.push(m.checkpointId);
      return { state: 'committed', checkpointId: m.checkpointId };
    },
    listCompleted: () => [...completed],
    discardCheckpoint: async (id: number): Promise<DiscardOutcome> => {
      events.push(`discard ${id} start`);
      const d = deferred();
      discards.push(d);
      await d.promise;
      completed.splice(completed.indexOf(id), 1);
      events.push(`discard ${id} end`);
      return { state: 'unknown', checkpointId: id };
    },
  };
  return { storage, events, discards };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));
const meta = (id: number) => metadataFor(id, []);

describe('SharedDirRetention.commit: check, commit point, directory copy, then discards, one at a time', () => {
  it('orders each commit as check → commit point → write, and runs no check while a discard runs', async () => {
    const s = scriptedStorage();
    const warnings: string[] = [];
    const r = new SharedDirRetention(s.storage, 1, (_l, _f, msg) => warnings.push(msg));
    const point = (id: number) => async () => {
      s.events.push(`commit point ${id}`);
    };
    expect(await r.commit(meta(1), point(1))).toEqual({ state: 'committed', written: true });
    expect(await r.commit(meta(2), point(2))).toEqual({ state: 'committed', written: true });
    await flush();
    // Checkpoint 2's discard of 1 is running (held): checkpoint 3 waits for it before its check.
    const third = r.commit(meta(3), point(3));
    await flush();
    expect(s.events.slice(-1)).toEqual(['discard 1 start']);
    s.discards[0].resolve();
    expect(await third).toEqual({ state: 'committed', written: true });
    expect(s.events.slice(0, 11)).toEqual([
      'check 1',
      'commit point 1',
      'write 1',
      'check 2',
      'commit point 2',
      'write 2',
      'discard 1 start',
      'discard 1 end',
      'check 3',
      'commit point 3',
      'write 3',
    ]);
    await flush();
    s.discards[1].resolve();
    await r.settled();
    expect(s.events.slice(-2)).toEqual(['discard 2 start', 'discard 2 end']);
    expect(warnings).toEqual([]);
  });

  it('a checkpoint with a missing chunk is not committed, not written and discards nothing; a warning names it and the chunk', async () => {
    const s = scriptedStorage({ 2: ['2-abc-0', '1-abc-3'] });
    const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
    const r = new SharedDirRetention(s.storage, 1, (_l, fields, msg) => warnings.push({ fields, msg }));
    let points = 0;
    const point = async () => {
      points++;
    };
    await r.commit(meta(1), point);
    expect(await r.commit(meta(2), point)).toEqual({
      state: 'missing-chunks',
      missing: ['2-abc-0', '1-abc-3'],
    });
    await r.settled();
    expect(points).toBe(1);
    expect(s.events).toEqual(['check 1', 'write 1', 'check 2']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].fields).toMatchObject({ checkpointId: 2, chunk: '2-abc-0' });
    expect(warnings[0].msg).toMatch(/checkpoint 2 aborted: it references chunk 2-abc-0 and 1 more/);
  });

  it('a refused commit point rejects and writes nothing; the chain goes on', async () => {
    const s = scriptedStorage();
    const r = new SharedDirRetention(s.storage, 1, () => undefined);
    await expect(
      r.commit(meta(1), async () => {
        throw new Error('superseded');
      }),
    ).rejects.toThrow('superseded');
    expect(await r.commit(meta(2), async () => undefined)).toEqual({ state: 'committed', written: true });
    expect(s.events).toEqual(['check 1', 'check 2', 'write 2']);
  });
});

describe('SharedDirRetention on a real store: incremental checkpoints under retain', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('a delta based on a discarded checkpoint is aborted before its commit point; a retained base keeps its chunks', async () => {
    const t = tempDir('shared-dir-retention');
    cleanups.push(t.remove);
    const storage = CheckpointStorage.open(t.dir);
    cleanups.push(() => storage.close());
    const owner = { operatorUid: 'sum', subtaskIndex: 0 };
    const write = (id: number, name: string) =>
      storage.writeChunks(id, owner, [{ name, bytes: seededBytes(id, 500), keyGroup: 0 }]);
    const of = (id: number, chunks: ChunkHandle[], incremental = false) =>
      metadataFor(id, [subtask('sum', 0, chunks)], { incremental });
    const r = new SharedDirRetention(storage, 2, () => undefined);
    const committed: number[] = [];
    const point = (id: number) => async () => {
      committed.push(id);
    };

    // 1 full, 2 a delta over 1, then two full ones (`fullEvery`): retain 2 discards 1 and 2.
    const c1 = await write(1, 'full-1');
    await r.commit(of(1, c1), point(1));
    const d2 = await write(2, 'delta-2');
    await r.commit(of(2, [...c1, ...d2], true), point(2));
    const c3 = await write(3, 'full-3');
    await r.commit(of(3, c3), point(3));
    const c4 = await write(4, 'full-4');
    await r.commit(of(4, c4), point(4));
    await r.settled();
    expect(storage.listCompleted()).toEqual([3, 4]);

    // A task that missed `complete` of 3 and 4 bases checkpoint 5 on 2: its chunks are gone.
    const d5 = await write(5, 'delta-5');
    const outcome = await r.commit(of(5, [...c1, ...d2, ...d5], true), point(5));
    expect(outcome).toEqual({ state: 'missing-chunks', missing: [c1[0].chunkId, d2[0].chunkId] });
    expect(committed).toEqual([1, 2, 3, 4]);

    // A delta over the retained 4 commits; once 4 is discarded its chunks stay for 6 and 7.
    const d6 = await write(6, 'delta-6');
    expect(await r.commit(of(6, [...c4, ...d6], true), point(6))).toEqual({
      state: 'committed',
      written: true,
    });
    const d7 = await write(7, 'delta-7');
    expect(await r.commit(of(7, [...c4, ...d6, ...d7], true), point(7))).toEqual({
      state: 'committed',
      written: true,
    });
    await r.settled();
    expect(storage.listCompleted()).toEqual([6, 7]);
    expect(storage.verifyCheckpoint(7).state).toBe('ok');
    expect(storage.verifyCheckpoint(6).state).toBe('ok');
    expect(committed).toEqual([1, 2, 3, 4, 6, 7]);
  });
});
