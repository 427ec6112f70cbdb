/**
 * Incremental checkpoints through real checkpoint storage, as the runtime drives them: two
 * subtasks of one keyed operator snapshot as their backend's snapshot strategy decides (full
 * base, then deltas that acknowledge their base chain as shared chunks), some checkpoints are declined, commits are
 * confirmed, and retention keeps two checkpoints. After every step, every retained checkpoint
 * restores (at parallelism 1, 2 and 3, through the restore planner) to exactly the state at its
 * barrier, and that equals a restore of a full snapshot taken at the same barrier.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { planTaskRestores } from '../../../src/coordinator/task-restore-planner.js';
import type { ExecutionPlan } from '../../../src/graph/execution-plan.js';
import type { KeyGroupChunk } from '../../../src/state/key-group-chunk.js';
import { keyGroupRangeFor } from '../../../src/state/key-groups.js';
import type { KeyedStateBackend } from '../../../src/state/keyed-state-backend.js';
import type { CheckpointMetadata } from '../../../src/state/storage/checkpoint-metadata.js';
import { CheckpointStorage } from '../../../src/state/storage/checkpoint-storage.js';
import type { ChunkHandle } from '../../../src/state/storage/chunk-handle.js';
import { type BackendFactory, backendFactories, keyGroupOf } from './backend-factories.js';
import { dumpBackend, type Schema } from './state-test-helpers.js';
import { flipByte, overwriteChunkInLmdb, tempDir } from './storage/helpers.js';

const MAX_P = 16;
const SCHEMA: Schema = { v: 'value', l: 'list' };

function planAt(parallelism: number): ExecutionPlan {
  return {
    maxParallelism: MAX_P,
    vertices: [
      {
        vertexId: 0,
        name: 'sum',
        parallelism,
        maxParallelism: MAX_P,
        operators: [
          { nodeId: 0, name: 'sum', uid: 'sum', spec: {} as never, chainedOutputs: [], outputEdges: [] },
        ],
        inputEdges: [],
        outputEdges: [],
      },
    ],
    edges: [],
  };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function restoreAll(
  make: BackendFactory,
  storage: CheckpointStorage,
  metadata: CheckpointMetadata,
  parallelism: number,
) {
  const plans = planTaskRestores(planAt(parallelism), metadata, () => []);
  const dump: Record<string, Record<string, unknown>> = {};
  for (let i = 0; i < parallelism; i++) {
    const handles = plans.get(`0/${i}`)!.keyedState.sum ?? [];
    const b = await make({ maxParallelism: MAX_P, keyGroupRange: keyGroupRangeFor(MAX_P, parallelism, i) });
    try {
      b.restore(handles.map((h): KeyGroupChunk => ({ keyGroup: h.keyGroup!, bytes: storage.readChunk(h) })));
      for (const [name, byKey] of Object.entries(dumpBackend(b, SCHEMA)))
        Object.assign((dump[name] ??= {}), byKey);
    } finally {
      await b.close();
    }
  }
  return dump;
}

describe.each(Object.entries(backendFactories))('incremental checkpoints (%s backend)', (_name, make) => {
  it('chains restore exactly, across declines, fullEvery and retention, at any parallelism', async () => {
    const t = tempDir('incremental');
    cleanups.push(t.remove);
    const storage = CheckpointStorage.open(t.dir);
    cleanups.push(() => storage.close());
    const subtasks: { backend: KeyedStateBackend }[] = [];
    for (let i = 0; i < 2; i++) {
      const backend = await make({
        maxParallelism: MAX_P,
        keyGroupRange: keyGroupRangeFor(MAX_P, 2, i),
        incremental: true,
        fullEvery: 4,
      });
      cleanups.push(() => backend.close());
      subtasks.push({ backend });
    }
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const retained: { metadata: CheckpointMetadata; expected: Record<string, Record<string, unknown>> }[] =
      [];
    let deltas = 0;
    for (let cp = 1; cp <= 14; cp++) {
      for (let i = 0; i < 40; i++) {
        const key = `k${rnd(60)}`;
        const s = subtasks[keyGroupOf(key, MAX_P) < MAX_P / 2 ? 0 : 1].backend;
        s.setCurrentKey(key);
        const r = rnd(10);
        if (r < 5) s.value<number>('v').update(cp * 1000 + i);
        else if (r < 8) s.list<number>('l').add(i);
        else if (r === 8) s.value('v').clear();
        else s.list('l').clear();
      }
      const declined = cp % 5 === 3;
      const acks: ChunkHandle[][] = [];
      const fullDumps: Record<string, Record<string, unknown>> = {};
      for (const [i, { backend }] of subtasks.entries()) {
        const snap = backend.snapshot(cp);
        const { metadata, chunks } = await snap.encode(snap.mode);
        expect(metadata.kind).toBe(snap.mode);
        if (snap.mode === 'delta') deltas++;
        else expect(snap.sharedChunks).toEqual([]);
        // The same barrier, serialized in full, is the reference.
        const full = await snap.encode('full');
        const ref = await make({ maxParallelism: MAX_P, keyGroupRange: backend.keyGroupRange });
        ref.restore(full.chunks);
        for (const [name, byKey] of Object.entries(dumpBackend(ref, SCHEMA)))
          Object.assign((fullDumps[name] ??= {}), byKey);
        await ref.close();
        snap.release();
        const own = await storage.writeChunks(
          cp,
          { operatorUid: 'sum', subtaskIndex: i },
          chunks.map((c) => ({ name: `kg-${c.keyGroup}`, keyGroup: c.keyGroup, bytes: c.bytes })),
        );
        snap.persisted(own);
        acks.push([...snap.sharedChunks, ...own]);
      }
      if (declined) continue; // never committed, never confirmed
      const metadata: CheckpointMetadata = {
        checkpointId: cp,
        timestamp: cp,
        incremental: acks.some((a) => a.some((h) => h.checkpointId !== cp)),
        job: { maxParallelism: MAX_P, operators: [{ operatorUid: 'sum', parallelism: 2 }] },
        subtasks: acks.map((chunks, subtaskIndex) => ({ operatorUid: 'sum', subtaskIndex, chunks })),
      };
      expect((await storage.commitCheckpoint(metadata)).state).toBe('committed');
      for (const s of subtasks) s.backend.notifyCheckpointComplete(cp);
      retained.push({ metadata, expected: fullDumps });
      while (retained.length > 2) await storage.discardCheckpoint(retained.shift()!.metadata.checkpointId);
      await storage.cleanup({ keepFromCheckpointId: cp + 1 });
      for (const r of retained) {
        expect(storage.verifyCheckpoint(r.metadata.checkpointId).state).toBe('ok');
        for (const p of [1, 2, 3]) expect(await restoreAll(make, storage, r.metadata, p)).toEqual(r.expected);
      }
    }
    expect(deltas).toBeGreaterThan(10);
    expect(retained.some((r) => r.metadata.incremental)).toBe(true);

    // A corrupt chunk written by the newest checkpoint: restore falls back to the previous one.
    const newest = retained[1].metadata;
    const own = newest.subtasks.flatMap((s) => s.chunks).find((h) => h.checkpointId === newest.checkpointId)!;
    await overwriteChunkInLmdb(t.dir, own.chunkId, flipByte(30));
    const selection = storage.findRestorable();
    expect(selection.state).toBe('found');
    if (selection.state !== 'found') return;
    expect(selection.metadata.checkpointId).toBe(retained[0].metadata.checkpointId);
    expect(selection.skipped.map((s) => s.checkpointId)).toEqual([newest.checkpointId]);
    expect(selection.skipped[0].problems.join()).toMatch(/corrupt/);
    expect(await restoreAll(make, storage, selection.metadata, 2)).toEqual(retained[0].expected);
  });
});
