/**
 * The backend's snapshot strategy owns the full/delta decision: what a task sees of a backend's
 * snapshot (`mode`, `sharedChunks`, `serialize()`, `persisted`) across confirmed, declined and
 * restored checkpoints, for each backend, with the checkpoint's chunks checked by restoring them.
 */

import { afterEach, describe, expect, it } from 'vitest';
import type { KeyedStateBackend, KeyedStateSnapshot } from '../../../src/state/keyed-state-backend.js';
import type { ChunkHandle } from '../../../src/state/storage/chunk-handle.js';
import { type BackendOptions, closeBackends, syncBackendFactories } from './backend-factories.js';

const RANGE = { start: 0, end: 7 };

afterEach(closeBackends);

/** What the task does in its async part; handles named after the chunks, as storage would. */
async function persist(snap: KeyedStateSnapshot): Promise<ChunkHandle[]> {
  const chunks = await snap.serialize();
  const own = chunks.map((c) => ({
    chunkId: `${snap.checkpointId}/${c.name}`,
    checkpointId: snap.checkpointId,
    name: c.name,
    size: c.bytes.length,
    checksum: 'c',
    keyGroup: c.keyGroup,
  }));
  snap.persisted(own);
  return own;
}

describe.each(Object.entries(syncBackendFactories))('snapshot strategy (%s backend)', (_name, make) => {
  const backend = (o: Partial<BackendOptions> = {}) =>
    make({ maxParallelism: 8, keyGroupRange: RANGE, ...o }) as KeyedStateBackend;
  const put = (b: KeyedStateBackend, key: string, v: number) => {
    b.setCurrentKey(key);
    b.value<number>('v').update(v);
  };

  it('without incremental checkpoints every snapshot is full and shares nothing', async () => {
    const b = backend();
    for (let cp = 1; cp <= 3; cp++) {
      put(b, `k${cp}`, cp);
      const snap = b.snapshot(cp);
      expect(snap.mode).toBe('full');
      expect(snap.sharedChunks).toEqual([]);
      await persist(snap);
      b.notifyCheckpointComplete(cp);
    }
  });

  it('deltas build on the last confirmed checkpoint, skip declined ones, and restart full every fullEvery', async () => {
    const b = backend({ incremental: true, fullEvery: 3 });
    put(b, 'a', 1);
    put(b, 'b', 2);
    const s1 = b.snapshot(1);
    expect(s1.mode).toBe('full');
    const h1 = await persist(s1);
    expect(b.liveSnapshots).toBe(0); // serialize() is the snapshot's last use
    b.notifyCheckpointComplete(1);

    put(b, 'a', 10);
    const s2 = b.snapshot(2);
    expect(s2.mode).toBe('delta');
    expect(s2.sharedChunks).toEqual(h1);
    await persist(s2); // checkpoint 2 is declined: never confirmed

    put(b, 'b', 20);
    const s3 = b.snapshot(3);
    expect(s3).toMatchObject({ mode: 'delta', baseCheckpointId: 1, sharedChunks: h1 });
    const h3 = await persist(s3);
    b.notifyCheckpointComplete(3);

    put(b, 'c', 30);
    const s4 = b.snapshot(4);
    expect(s4.mode).toBe('delta');
    expect(s4.sharedChunks).toEqual([...h1, ...h3]);
    const delta4 = await s4.encode('delta');
    expect(delta4.metadata).toMatchObject({ kind: 'delta', baseCheckpointId: 3 });
    await persist(s4);
    b.notifyCheckpointComplete(4);

    const s5 = b.snapshot(5); // a chain holds at most 3 links: 1 full + 2 deltas
    expect(s5.mode).toBe('full');
    expect(s5.sharedChunks).toEqual([]);
    s5.release();
  });

  it('after a restore the next snapshot is full, whatever was confirmed before', async () => {
    const b = backend({ incremental: true });
    put(b, 'a', 1);
    const s1 = b.snapshot(1);
    const full = await s1.encode('full');
    await persist(s1);
    b.notifyCheckpointComplete(1);
    const s2 = b.snapshot(2);
    expect(s2.mode).toBe('delta');
    s2.release(); // restore needs no live snapshot
    b.restore(full.chunks, { checkpointId: 1 });
    put(b, 'b', 2);
    const r = b.snapshot(2);
    expect(r.baseCheckpointId).toBe(1); // the backend could write a delta on 1 ...
    expect(r.mode).toBe('full'); // ... but the strategy has no chain of chunks to share
    expect(r.sharedChunks).toEqual([]);
    const out = await r.serialize();
    expect(out.map((c) => c.name)).toEqual(out.map((c) => `kg-${c.keyGroup}`));
    expect(out.length).toBeGreaterThan(0);
  });
});
