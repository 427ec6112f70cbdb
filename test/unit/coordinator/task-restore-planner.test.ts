import { describe, expect, it } from 'vitest';
import { planTaskRestores } from '../../../src/coordinator/task-restore-planner.js';
import type { ExecutionPlan } from '../../../src/graph/execution-plan.js';
import { keyGroupRangeFor } from '../../../src/state/key-groups.js';
import type { CheckpointMetadata } from '../../../src/state/storage/checkpoint-metadata.js';
import type { ChunkHandle } from '../../../src/state/storage/chunk-handle.js';

const MAX = 16;

function planAt(parallelism: number): ExecutionPlan {
  const op = (nodeId: number, uid: string) => ({
    nodeId,
    name: uid,
    uid,
    spec: {} as never,
    chainedOutputs: [],
    outputEdges: [],
  });
  return {
    maxParallelism: MAX,
    vertices: [
      {
        vertexId: 0,
        name: 'src',
        parallelism,
        maxParallelism: MAX,
        operators: [op(0, 'src')],
        inputEdges: [],
        outputEdges: [],
      },
      {
        vertexId: 1,
        name: 'sum',
        parallelism,
        maxParallelism: MAX,
        operators: [op(1, 'sum')],
        inputEdges: [],
        outputEdges: [],
      },
    ],
    edges: [],
  };
}

const handle = (id: string, extra: Partial<ChunkHandle>): ChunkHandle => ({
  chunkId: id,
  checkpointId: 7,
  name: 'x',
  size: 1,
  checksum: 'c',
  ...extra,
});

/** A checkpoint taken at parallelism 2: one keyed chunk per key group, two source splits per subtask. */
function metadataAt2(): { metadata: CheckpointMetadata; entries: Map<string, unknown[]> } {
  const entries = new Map<string, unknown[]>();
  const subtasks: CheckpointMetadata['subtasks'][number][] = [];
  for (let s = 0; s < 2; s++) {
    const opChunk = handle(`op-${s}`, { name: 'operator-state' });
    entries.set(opChunk.chunkId, [`split-${s}a`, `split-${s}b`]);
    subtasks.push({ operatorUid: 'src', subtaskIndex: s, chunks: [opChunk] });
    const range = keyGroupRangeFor(MAX, 2, s);
    const keyed: ChunkHandle[] = [];
    for (let kg = range.start; kg <= range.end; kg++)
      keyed.push(handle(`kg-${kg}`, { name: `kg-${kg}`, keyGroup: kg }));
    subtasks.push({ operatorUid: 'sum', subtaskIndex: s, chunks: keyed });
  }
  const metadata: CheckpointMetadata = {
    checkpointId: 7,
    timestamp: 0,
    incremental: false,
    job: {
      maxParallelism: MAX,
      operators: [
        { operatorUid: 'src', parallelism: 2 },
        { operatorUid: 'sum', parallelism: 2 },
      ],
    },
    subtasks,
  };
  return { metadata, entries };
}

describe('planTaskRestores', () => {
  it("carries the checkpoint's sinksCommitted to every task (absent: false, commit-on-restore)", () => {
    const { metadata, entries } = metadataAt2();
    const read = (h: ChunkHandle) => entries.get(h.chunkId)!;
    for (const r of planTaskRestores(planAt(3), metadata, read).values())
      expect(r.sinksCommitted).toBe(false);
    const marked = { ...metadata, sinksCommitted: true };
    for (const r of planTaskRestores(planAt(3), marked, read).values()) expect(r.sinksCommitted).toBe(true);
  });

  it.each([1, 2, 3, 5])('rescaling 2 -> %i hands every key group to exactly its new owner', (p) => {
    const { metadata, entries } = metadataAt2();
    const restores = planTaskRestores(planAt(p), metadata, (h) => entries.get(h.chunkId)!);
    const seen: number[] = [];
    for (let i = 0; i < p; i++) {
      const r = restores.get(`1/${i}`)!;
      expect(r.checkpointId).toBe(7);
      const range = keyGroupRangeFor(MAX, p, i);
      for (const h of r.keyedState.sum ?? []) {
        expect(h.keyGroup).toBeGreaterThanOrEqual(range.start);
        expect(h.keyGroup).toBeLessThanOrEqual(range.end);
        seen.push(h.keyGroup!);
      }
    }
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: MAX }, (_, i) => i));
  });

  it.each([1, 2, 3, 5])(
    'rescaling 2 -> %i splits operator state evenly, losing and repeating nothing',
    (p) => {
      const { metadata, entries } = metadataAt2();
      const restores = planTaskRestores(planAt(p), metadata, (h) => entries.get(h.chunkId)!);
      const all: unknown[] = [];
      const sizes: number[] = [];
      for (let i = 0; i < p; i++) {
        const got = restores.get(`0/${i}`)!.operatorState.src ?? [];
        sizes.push(got.length);
        all.push(...got);
      }
      expect(all).toEqual(['split-0a', 'split-0b', 'split-1a', 'split-1b']);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    },
  );

  it.each([1, 2, 3, 5])(
    "rescaling an incremental chain 2 -> %i keeps each key group's chunks in checkpoint order",
    (p) => {
      // Subtask s acknowledged: its base (checkpoint 3, full), deltas of 5 and 6, then its own of 7.
      const subtasks: CheckpointMetadata['subtasks'][number][] = [];
      for (let s = 0; s < 2; s++) {
        const range = keyGroupRangeFor(MAX, 2, s);
        const chunks: ChunkHandle[] = [];
        for (const cp of [3, 5, 6, 7])
          for (let kg = range.start; kg <= range.end; kg += cp === 3 ? 1 : 2)
            chunks.push(handle(`${cp}-kg-${kg}`, { checkpointId: cp, keyGroup: kg }));
        subtasks.push({ operatorUid: 'sum', subtaskIndex: s, chunks });
      }
      const metadata: CheckpointMetadata = {
        ...metadataAt2().metadata,
        incremental: true,
        subtasks,
      };
      const restores = planTaskRestores(planAt(p), metadata, () => []);
      let total = 0;
      for (let i = 0; i < p; i++) {
        const byGroup = new Map<number, number[]>();
        for (const h of restores.get(`1/${i}`)!.keyedState.sum ?? []) {
          const list = byGroup.get(h.keyGroup!) ?? [];
          list.push(h.checkpointId);
          byGroup.set(h.keyGroup!, list);
          total++;
        }
        for (const [kg, ids] of byGroup) {
          expect(ids[0], `key group ${kg}`).toBe(3);
          expect(ids).toEqual([...ids].sort((a, b) => a - b));
          expect(ids).toEqual(kg % 2 === 0 ? [3, 5, 6, 7] : [3]);
        }
      }
      expect(total).toBe(subtasks.reduce((n, s) => n + s.chunks.length, 0));
    },
  );
});
