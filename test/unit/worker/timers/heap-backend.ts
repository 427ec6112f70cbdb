/** A KeyedBackend over the heap backend for operator unit tests, with snapshot → restore. */
import { HeapKeyedStateBackend } from '../../../../src/state/heap-keyed-state-backend.js';
import { keyGroupRangeFor } from '../../../../src/state/key-groups.js';
import type { KeyedBackend } from '../../../../src/worker/operators/keyed-backend.js';

export interface TestBackend extends KeyedBackend {
  /** Snapshots and restores into a fresh backend (what a task does after a failure). */
  restoreCopy(): Promise<TestBackend>;
}

export function heapBackend(chunks?: readonly { keyGroup: number; bytes: Uint8Array }[]): TestBackend {
  const backend = new HeapKeyedStateBackend({
    maxParallelism: 128,
    keyGroupRange: keyGroupRangeFor(128, 1, 0),
    operatorName: 'test',
  });
  if (chunks) backend.restore(chunks, { checkpointId: 1 });
  return {
    setCurrentKey: (key) => backend.setCurrentKey(key),
    get currentKey() {
      return backend.currentKey;
    },
    store: backend,
    keys: (name) => backend.keys(name),
    snapshot() {
      throw new Error('not used');
    },
    dispose() {},
    async restoreCopy() {
      const snap = backend.snapshot(1);
      const { chunks: out } = await snap.serialize('full');
      snap.release();
      return heapBackend(out.map((c) => ({ keyGroup: c.keyGroup, bytes: c.bytes })));
    },
  };
}
