/**
 * What every keyed state backend (heap, lmdb) offers the runtime: the user-facing
 * {@link KeyedStateStore} plus key scoping, snapshots in the shared key-group chunk format
 * (`key-group-chunk.ts`), restore from such chunks, and close. Because the chunk format is
 * shared, a checkpoint written by one backend restores into the other.
 */

import type { KeyedStateStore } from '../api/functions.js';
import type { SerializedKeyedState, SnapshotMode } from './heap/heap-keyed-state-snapshot.js';
import type { KeyGroupChunk } from './key-group-chunk.js';
import type { KeyGroupRange } from './key-groups.js';

/** Result of a backend's `restore`. */
export interface KeyedStateRestoreSummary {
  /** Chunks applied (key group in range) and skipped (other subtasks' key groups). */
  readonly appliedChunks: number;
  readonly skippedChunks: number;
  /** Key groups of this range that received state, ascending. */
  readonly keyGroups: readonly number[];
  /** Base of the next delta. */
  readonly checkpointId: number | undefined;
}

/** Options of {@link KeyedStateBackendSnapshot.serialize}. */
export interface SerializeOptions {
  /**
   * This is the snapshot's last use: it releases itself as it goes — a key group serialized is no
   * longer preserved by copy-on-write (the heap backend stops making preimages for it) — and the
   * snapshot is released when the serialization ends, successfully or not. Further `serialize`
   * calls throw StateAccessError. What a checkpoint's asynchronous part wants.
   */
  readonly release?: boolean;
}

/** A consistent view taken at the barrier: serialize (possibly several times), then release. */
export interface KeyedStateBackendSnapshot {
  readonly checkpointId: number;
  /** Backend clock at the barrier; TTL expiry in the snapshot is judged against it. */
  readonly timestamp: number;
  /** The confirmed checkpoint a 'delta' serialization is relative to; undefined: full only. */
  readonly baseCheckpointId: number | undefined;
  serialize(mode?: SnapshotMode, options?: SerializeOptions): Promise<SerializedKeyedState>;
  release(): void;
}

export interface KeyedStateBackend extends KeyedStateStore {
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  /**
   * Scopes state access to `key`. `knownKeyGroup` (≥ 0): the key's group as the producer's hash
   * partitioner computed it, used instead of hashing a string or number key again.
   */
  setCurrentKey(key: unknown, knownKeyGroup?: number): void;
  readonly currentKey: unknown;
  /** The current key's key group, or −1 before the first `setCurrentKey`. */
  readonly currentKeyGroup: number;
  /** Snapshots taken and not yet released. */
  readonly liveSnapshots: number;
  /** Synchronous part of a checkpoint: never O(state). */
  snapshot(checkpointId: number): KeyedStateBackendSnapshot;
  notifyCheckpointComplete(checkpointId: number): void;
  /** Before any snapshot: applies chunks (per key group: full first, then deltas in order). */
  restore(chunks: Iterable<KeyGroupChunk>, options?: { checkpointId?: number }): KeyedStateRestoreSummary;
  /** Keys with an unexpired entry in state `name`. Callers must not change state while iterating. */
  keys(name: string): Iterable<unknown>;
  stateNames(): string[];
  /** Releases resources (files, native handles). Idempotent; the backend is unusable afterwards. */
  close(): Promise<void>;
}
