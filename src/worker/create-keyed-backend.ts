/**
 * Creates the keyed state backend of each keyed operator in a task, restoring it from the
 * checkpoint's chunks when the task is deployed with restore state. Chunks are read (and their
 * checksums verified) in `prepare`, before the chain is built; `create` only hands them over.
 */

import type { JobVertex } from '../graph/execution-plan.js';
import { HeapKeyedStateBackend } from '../state/heap-keyed-state-backend.js';
import type { KeyGroupChunk } from '../state/key-group-chunk.js';
import { keyGroupRangeFor } from '../state/key-groups.js';
import type { KeyedBackend } from './operators/keyed-backend.js';
import type { TaskSnapshotStorage } from './snapshot-storage.js';
import type { TaskDeployment } from './task-deployment.js';

export interface KeyedBackendFactory {
  /** Reads restore chunks before the chain is built. */
  prepare(): Promise<void>;
  readonly create: (uid: string, operatorName: string) => KeyedBackend;
}

export function createKeyedBackendFactory(
  d: TaskDeployment,
  vertex: JobVertex,
  storage: TaskSnapshotStorage | null,
): KeyedBackendFactory {
  const restored = new Map<string, KeyGroupChunk[]>();
  const range = keyGroupRangeFor(d.maxParallelism, vertex.parallelism, d.subtaskIndex);
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
      const backend = new HeapKeyedStateBackend({
        maxParallelism: d.maxParallelism,
        keyGroupRange: range,
        operatorName,
      });
      const chunks = restored.get(uid);
      if (chunks) backend.restore(chunks, { checkpointId: d.restore!.checkpointId });
      return adapt(backend);
    },
  };
}

function adapt(backend: HeapKeyedStateBackend): KeyedBackend {
  return {
    setCurrentKey: (key) => backend.setCurrentKey(key),
    get currentKey() {
      return backend.currentKey;
    },
    store: backend,
    keys: (stateName) => backend.keys(stateName),
    snapshot(checkpointId) {
      const snap = backend.snapshot(checkpointId);
      return {
        async serialize() {
          const { chunks } = await snap.serialize('full');
          return chunks.map((c) => ({ name: `kg-${c.keyGroup}`, keyGroup: c.keyGroup, bytes: c.bytes }));
        },
        release: () => snap.release(),
      };
    },
    notifyCheckpointComplete: (id) => backend.notifyCheckpointComplete(id),
    dispose() {},
  };
}
