/**
 * A re-base (an `abort` with `rebase`, cluster-record-limit.ts) reaches every keyed backend a task
 * created through its factory: each one's next snapshot is full, though its chain had a
 * confirmed base and room for more deltas.
 */
import { describe, expect, it } from 'vitest';
import type { JobVertex } from '../../../../src/graph/execution-plan.js';
import type { TaskDeployment } from '../../../../src/protocol/task-deployment.js';
import type { KeyedStateBackend } from '../../../../src/state/keyed-state-backend.js';
import { createKeyedBackendFactory } from '../../../../src/worker/create-keyed-backend.js';

const deployment = {
  maxParallelism: 8,
  subtaskIndex: 0,
  checkpointing: { mode: 'exactly-once', incremental: true, fullEvery: 100, stateBackend: 'heap' },
} as unknown as TaskDeployment;
const vertex = { parallelism: 1 } as unknown as JobVertex;

/** Writes a key, takes checkpoint `id`'s snapshot and returns its mode; `complete`: persisted and confirmed. */
async function checkpoint(b: KeyedStateBackend, id: number, complete: boolean): Promise<string> {
  b.setCurrentKey(`k${id}`);
  b.store.value<number>('v').update(id);
  const snap = b.snapshot(id);
  const mode = snap.mode;
  await snap.serialize();
  if (complete) snap.persisted([]);
  snap.release();
  if (complete) b.notifyCheckpointComplete(id);
  return mode;
}

describe('KeyedBackendFactory.rebase', () => {
  it('makes the next snapshot of every backend it created full', async () => {
    const factory = createKeyedBackendFactory(deployment, vertex, null);
    await factory.prepare();
    try {
      const backends = [factory.create('a', 'a'), factory.create('b', 'b')];
      for (const b of backends) {
        expect(await checkpoint(b, 1, true)).toBe('full');
        expect(await checkpoint(b, 2, true)).toBe('delta');
        // Checkpoint 3, a delta, is refused by the coordinator: never confirmed.
        expect(await checkpoint(b, 3, false)).toBe('delta');
      }
      factory.rebase();
      for (const b of backends) {
        expect(await checkpoint(b, 4, true)).toBe('full');
        expect(await checkpoint(b, 5, true)).toBe('delta');
      }
    } finally {
      await factory.close();
    }
  });
});
