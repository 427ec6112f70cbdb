/** A heap keyed state backend for operator unit tests, with snapshot → restore. */
import { HeapKeyedStateBackend } from '../../../../src/state/heap/heap-keyed-state-backend.js';
import { keyGroupRangeFor } from '../../../../src/state/key-groups.js';

export interface TestBackend extends HeapKeyedStateBackend {
  /** Snapshots and restores into a fresh backend (what a task does after a failure). */
  restoreCopy(): Promise<TestBackend>;
  /** Snapshots and restores into `parallelism` backends, each with its key groups (rescaling). */
  restoreRescaled(parallelism: number): Promise<TestBackend[]>;
}

type Chunks = readonly { keyGroup: number; bytes: Uint8Array }[];

export function heapBackend(chunks?: Chunks, parallelism = 1, subtask = 0): TestBackend {
  const range = keyGroupRangeFor(128, parallelism, subtask);
  const backend = new HeapKeyedStateBackend({
    maxParallelism: 128,
    keyGroupRange: range,
    operatorName: 'test',
  });
  if (chunks) {
    const own = chunks.filter((c) => c.keyGroup >= range.start && c.keyGroup <= range.end);
    backend.restore(own, { checkpointId: 1 });
  }
  const snapshotChunks = async (): Promise<Chunks> => {
    const snap = backend.snapshot(1);
    const { chunks: out } = await snap.encode('full');
    snap.release();
    return out.map((c) => ({ keyGroup: c.keyGroup, bytes: c.bytes }));
  };
  return Object.assign(backend, {
    async restoreCopy() {
      return heapBackend(await snapshotChunks());
    },
    async restoreRescaled(p: number) {
      const out = await snapshotChunks();
      return Array.from({ length: p }, (_, i) => heapBackend(out, p, i));
    },
  });
}
