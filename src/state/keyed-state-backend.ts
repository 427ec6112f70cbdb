/**
 * The one keyed-state interface: what keyed operators use and what every keyed state backend
 * (heap, lmdb) implements. The user-facing {@link KeyedStateStore} (`store`: the handles user
 * functions get as `ctx.state`) plus key scoping, snapshots in the shared key-group chunk format
 * (`key-group-chunk.ts`), restore from such chunks, and close. Because the chunk format is
 * shared, a checkpoint written by one backend restores into the other.
 *
 * Snapshots: the backend's snapshot strategy (`incremental-chain.ts`) decides at the barrier
 * whether a checkpoint's snapshot is full or a delta; the task only serializes it, forwards its
 * `sharedChunks` and reports the handles it persisted.
 */

import type { KeyedStateStore } from '../api/functions.js';
import type { ChunkKind, KeyGroupChunk } from './key-group-chunk.js';
import type { KeyGroupRange } from './key-groups.js';
import type { ChunkHandle } from './storage/chunk-handle.js';

/** What every backend's constructor takes (each backend adds its own options). */
export interface KeyedStateBackendOptions {
  /** Number of key groups; must match the partitioner's. 1..32768. */
  readonly maxParallelism: number;
  /** The key groups this subtask owns (inclusive bounds; `end < start` is an empty range). */
  readonly keyGroupRange: KeyGroupRange;
  /** Clock for TTL, ms. Default `Date.now`. Expiry times are absolute and survive restore. */
  readonly clock?: () => number;
  /**
   * Incremental checkpoints: track changed keys so a checkpoint's snapshot can be a delta on the
   * last confirmed one. Costs one set insertion per key and epoch on the hot path, and memory for
   * the keys changed since the last confirmed checkpoint. Default false: every snapshot is full.
   */
  readonly incremental?: boolean;
  /** Incremental only: at most this many links (1 full + deltas) per chain. Default 10. */
  readonly fullEvery?: number;
  /** Operator name for error messages. */
  readonly operatorName?: string;
}

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

/** Which serialization to produce. 'delta' falls back to 'full' when there is no base. */
export type SnapshotMode = 'full' | 'delta';

/** What a serialized snapshot is, besides its chunks. Small; goes into checkpoint metadata. */
export interface KeyedStateSnapshotMetadata {
  readonly format: 1;
  /** 'delta' chunks apply on top of the state restored from `baseCheckpointId`'s chain. */
  readonly kind: ChunkKind;
  readonly checkpointId: number;
  /** For a delta: the checkpoint it is relative to (the newest confirmed one at snapshot time). */
  readonly baseCheckpointId: number | undefined;
  /** Backend clock at the barrier; TTL expiry is judged against it. */
  readonly timestamp: number;
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  /** Key groups that have a chunk, ascending (empty or unchanged key groups have none). */
  readonly keyGroups: readonly number[];
  /** Upserted entries (full: all live entries) and tombstones written. */
  readonly entries: number;
  readonly tombstones: number;
  /** Total bytes of all chunks. */
  readonly bytes: number;
}

export interface SerializedKeyedState {
  readonly metadata: KeyedStateSnapshotMetadata;
  readonly chunks: readonly KeyGroupChunk[];
}

/** Options of {@link KeyedStateSnapshot.encode}. */
export interface EncodeOptions {
  /**
   * This is the snapshot's last use: it releases itself as it goes — a key group encoded is no
   * longer preserved by copy-on-write (the heap backend stops making preimages for it) — and the
   * snapshot is released when the encoding ends, successfully or not. Further calls throw
   * StateAccessError. What a checkpoint's asynchronous part wants.
   */
  readonly release?: boolean;
}

/** One chunk a checkpoint persists for an operator. */
export interface NamedChunk {
  readonly name: string;
  readonly keyGroup?: number;
  readonly bytes: Uint8Array;
}

/**
 * A consistent view of keyed state taken at the barrier (the synchronous part), persisted later.
 * A checkpoint calls `serializeChunks()` (or `serialize()`) once, `persisted(handles)` once the
 * chunks are durable, then `release()`; tools and tests may `encode` it in either mode (possibly
 * several times) instead.
 */
export interface KeyedStateSnapshot {
  readonly checkpointId: number;
  /** Backend clock at the barrier; TTL expiry in the snapshot is judged against it. */
  readonly timestamp: number;
  /** The confirmed checkpoint a 'delta' encoding is relative to; undefined: full only. */
  readonly baseCheckpointId: number | undefined;
  /** What the backend's snapshot strategy decided at the barrier for this checkpoint. */
  readonly mode: SnapshotMode;
  /**
   * A delta's base chain: chunks of earlier checkpoints that this one builds on (its base and
   * the deltas since, in checkpoint order); empty for a full snapshot. They are acknowledged
   * before the new chunks, so the checkpoint's metadata names the whole chain and restore
   * applies it in order.
   */
  readonly sharedChunks: readonly ChunkHandle[];
  /**
   * The checkpoint's asynchronous part: encodes the view in `mode` into per-key-group chunks. Its
   * last use: the view releases itself as it goes (copy-on-write stops for each key group once
   * encoded) and when it ends.
   */
  serialize(): Promise<readonly NamedChunk[]>;
  /**
   * `serialize()` as a stream, one chunk per non-empty key group in ascending order, for a task
   * that writes chunks while later key groups are still being encoded (what a checkpoint's
   * asynchronous part uses: it then holds a bounded part of the snapshot's bytes, not all of
   * them). The same last use: call one of the two, once.
   */
  serializeChunks(): AsyncIterable<NamedChunk>;
  /** The chunks `serialize()` produced are durable under `handles`: a later delta may build on them. */
  persisted(handles: readonly ChunkHandle[]): void;
  /** Encodes the view in `mode` (default 'full') into chunks plus metadata. */
  encode(mode?: SnapshotMode, options?: EncodeOptions): Promise<SerializedKeyedState>;
  /** Ends the view (copy-on-write stops preserving it, a read transaction ends). Idempotent. */
  release(): void;
}

export interface KeyedStateBackend extends KeyedStateStore {
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  /** The handles scoped to the current key, without the backend around them: `ctx.state`. */
  readonly store: KeyedStateStore;
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
  snapshot(checkpointId: number): KeyedStateSnapshot;
  /** Checkpoint `checkpointId` completed: a snapshot of it persisted becomes the next delta's base. */
  notifyCheckpointComplete(checkpointId: number): void;
  /**
   * The next snapshot is full: the incremental chain starts over (a cluster coordinator refused
   * a checkpoint whose record, naming every chunk of the chain, was too long). No-op without
   * incremental snapshots.
   */
  rebase(): void;
  /** Before any snapshot: applies chunks (per key group: full first, then deltas in order). */
  restore(chunks: Iterable<KeyGroupChunk>, options?: { checkpointId?: number }): KeyedStateRestoreSummary;
  /**
   * Keys with an unexpired entry in state `name`, in no particular order. Used by operators that
   * rebuild an in-memory index from state on restore (timers, windows). Callers must not change
   * state while iterating.
   */
  keys(name: string): Iterable<unknown>;
  stateNames(): string[];
  /** Releases resources (files, native handles). Idempotent; the backend is unusable afterwards. */
  close(): Promise<void>;
}
