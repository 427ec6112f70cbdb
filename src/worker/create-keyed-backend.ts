/**
 * Creates the keyed state backend of each keyed operator in a task (heap or lmdb, as the job's
 * `stateBackend` says), restoring it from the checkpoint's chunks when the task is deployed with
 * restore state. Chunks are read (and their checksums verified) in `prepare`, before the chain is
 * built; `create` only hands them over.
 *
 * Incremental checkpoints: each backend gets an {@link IncrementalChain}. At the barrier the chain
 * decides full or delta; a delta's snapshot carries the handles of its base chain
 * (`sharedChunks`), which the task acknowledges before the delta's own chunks, so the
 * checkpoint's metadata names every chunk restore needs, in order.
 */

import type { JobVertex } from '../graph/execution-plan.js';
import type { TaskDeployment } from '../protocol/task-deployment.js';
import { HeapKeyedStateBackend } from '../state/heap/heap-keyed-state-backend.js';
import { IncrementalChain } from '../state/incremental-chain.js';
import type { KeyGroupChunk } from '../state/key-group-chunk.js';
import { keyGroupRangeFor } from '../state/key-groups.js';
import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import { LmdbKeyedStateBackend } from '../state/lmdb/lmdb-keyed-state-backend.js';
import type { KeyedBackend } from './operators/keyed-backend.js';
import type { TaskSnapshotStorage } from './snapshot-storage.js';

export interface KeyedBackendFactory {
  /** Reads restore chunks before the chain is built. */
  prepare(): Promise<void>;
  readonly create: (uid: string, operatorName: string) => KeyedBackend;
  /** Closes every backend created (lmdb: environments closed, files removed). Idempotent. */
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
  const incremental = d.checkpointing?.incremental ?? false;
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
      const options = { maxParallelism: d.maxParallelism, keyGroupRange: range, operatorName, incremental };
      // lmdb: a private environment in a fresh temp directory, removed by close() (see the backend).
      const backend: KeyedStateBackend =
        (d.stateBackend ?? d.checkpointing?.stateBackend) === 'lmdb'
          ? new LmdbKeyedStateBackend({ ...options, dir: d.stateDir })
          : new HeapKeyedStateBackend(options);
      created.push(backend);
      const chunks = restored.get(uid);
      // Restored chunks may come from either backend: the chunk format is shared.
      if (chunks) backend.restore(chunks, { checkpointId: d.restore!.checkpointId });
      return adapt(backend, incremental ? new IncrementalChain(d.checkpointing?.fullEvery) : null);
    },
    async close() {
      const all = created.splice(0);
      await Promise.all(all.map((b) => b.close()));
    },
  };
}

function adapt(backend: KeyedStateBackend, chain: IncrementalChain | null): KeyedBackend {
  return {
    setCurrentKey: (key, knownKeyGroup) => backend.setCurrentKey(key, knownKeyGroup),
    get currentKey() {
      return backend.currentKey;
    },
    store: backend,
    keys: (stateName) => backend.keys(stateName),
    snapshot(checkpointId) {
      const snap = backend.snapshot(checkpointId);
      const decision = chain?.decide(snap.baseCheckpointId) ?? { mode: 'full', shared: [] };
      return {
        sharedChunks: decision.shared,
        async serialize() {
          const { metadata, chunks } = await snap.serialize(decision.mode, { release: true });
          if (metadata.kind !== decision.mode) {
            // The backend had no base for a delta although the chain had one: they disagree.
            throw new Error(
              `keyed snapshot of checkpoint ${checkpointId} is ${metadata.kind}, expected ${decision.mode}`,
            );
          }
          return chunks.map((c) => ({ name: `kg-${c.keyGroup}`, keyGroup: c.keyGroup, bytes: c.bytes }));
        },
        persisted: (handles) => chain?.persisted(checkpointId, decision, handles),
        release: () => snap.release(),
      };
    },
    notifyCheckpointComplete(id) {
      chain?.confirm(id);
      backend.notifyCheckpointComplete(id);
    },
    // Closing is asynchronous (lmdb); the factory's close(), awaited by the task, does it.
    dispose() {},
  };
}
