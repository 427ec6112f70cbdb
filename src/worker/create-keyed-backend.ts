/**
 * Creates the keyed state backend of each keyed operator in a task (heap or lmdb, as the job's
 * `stateBackend` says), restoring it from the checkpoint's chunks when the task is deployed with
 * restore state. Chunks are read (and their checksums verified) in `prepare`, before the chain is
 * built; `create` only hands them over. Operators use the backend as it is
 * (`state/keyed-state-backend.ts`): with incremental checkpoints its snapshot strategy decides
 * full or delta at each barrier, and a delta's snapshot carries the handles of its base chain
 * (`sharedChunks`), which the task acknowledges before the delta's own chunks, so the
 * checkpoint's metadata names every chunk restore needs, in order.
 */

import type { JobVertex } from '../graph/execution-plan.js';
import type { TaskDeployment } from '../protocol/task-deployment.js';
import { HeapKeyedStateBackend } from '../state/heap/heap-keyed-state-backend.js';
import type { KeyGroupChunk } from '../state/key-group-chunk.js';
import { keyGroupRangeFor } from '../state/key-groups.js';
import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import { LmdbKeyedStateBackend } from '../state/lmdb/lmdb-keyed-state-backend.js';
import type { TaskSnapshotStorage } from './snapshot-storage.js';

export interface KeyedBackendFactory {
  /** Reads restore chunks before the chain is built. */
  prepare(): Promise<void>;
  readonly create: (uid: string, operatorName: string) => KeyedStateBackend;
  /** Every backend created: its next snapshot is full (`KeyedStateBackend.rebase`). */
  rebase(): void;
  /**
   * Closes every backend created (lmdb: environments closed, files removed). Idempotent. The task
   * awaits it after the chain closed: operators never close their backend.
   */
  close(): Promise<void>;
}

export function createKeyedBackendFactory(
  d: TaskDeployment,
  vertex: JobVertex,
  storage: Pick<TaskSnapshotStorage, 'readChunk'> | null,
): KeyedBackendFactory {
  const restored = new Map<string, KeyGroupChunk[]>();
  const range = keyGroupRangeFor(d.maxParallelism, vertex.parallelism, d.subtaskIndex);
  const created: KeyedStateBackend[] = [];
  return {
    async prepare() {
      if (!d.restore) return;
      for (const [uid, handles] of Object.entries(d.restore.keyedState)) {
        if (!storage) throw new Error('restore state given but no checkpoint storage is open');
        restored.set(
          uid,
          handles.map((h) => ({ keyGroup: h.keyGroup!, bytes: storage.readChunk(h) })),
        );
      }
    },
    create(uid, operatorName) {
      const options = {
        maxParallelism: d.maxParallelism,
        keyGroupRange: range,
        operatorName,
        incremental: d.checkpointing?.incremental ?? false,
        fullEvery: d.checkpointing?.fullEvery,
      };
      // lmdb: a private environment in a fresh temp directory, removed by close() (see the backend).
      const backend: KeyedStateBackend =
        (d.stateBackend ?? d.checkpointing?.stateBackend) === 'lmdb'
          ? new LmdbKeyedStateBackend({ ...options, dir: d.stateDir })
          : new HeapKeyedStateBackend(options);
      created.push(backend);
      const chunks = restored.get(uid);
      // Restored chunks may come from either backend: the chunk format is shared.
      if (chunks) backend.restore(chunks, { checkpointId: d.restore!.checkpointId });
      return backend;
    },
    rebase() {
      for (const b of created) b.rebase();
    },
    async close() {
      const all = created.splice(0);
      await Promise.all(all.map((b) => b.close()));
    },
  };
}
