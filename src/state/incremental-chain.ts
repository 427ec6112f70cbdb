/**
 * The chain of chunks behind a subtask's incremental keyed snapshots: which checkpoint the next
 * delta builds on, and which chunks (base + deltas, in checkpoint order) restore needs with it.
 *
 * Invariants:
 * - The base is always a checkpoint this subtask wrote AND saw confirmed
 *   (`notifyCheckpointComplete`). A declined or aborted checkpoint is never confirmed, so the
 *   next delta stays relative to the last confirmed one (it then covers the aborted epochs too,
 *   which the backend's dirty-key tracking guarantees).
 * - After a restore the chain is empty: the first snapshot is full. The task cannot know which of
 *   its predecessor's deltas were committed, and a full snapshot also re-bases a rescaled task.
 * - A re-base ({@link IncrementalChain.rebase}: a cluster coordinator could not commit a record
 *   naming the whole chain) drops the base: an aborted checkpoint never becomes a base, so without
 *   it every retry would be the same too-long delta over the same base.
 * - A chain holds at most `fullEvery` links (1 full + `fullEvery − 1` deltas), which bounds both
 *   restore work and the chunks a retained checkpoint keeps alive.
 * - A delta only where it pays: when the backend reports how many changed entries a delta would
 *   walk ({@link DeltaWork}) and they exceed `maxDeltaFraction` of the live entries, the snapshot
 *   is full (which also restarts the chain). A delta entry costs more than a full one (it is
 *   reached through a list of scattered objects, deduplicated across pending epochs, and keeps
 *   the chain and its restore work growing), so past that fraction a full snapshot is cheaper
 *   to write and to restore. The threshold ({@link DEFAULT_MAX_DELTA_FRACTION}) comes from
 *   `bench/checkpoint` (bench/README.md).
 *
 * Pure bookkeeping (no I/O); one per keyed operator subtask, on the task thread. It is the
 * incremental {@link SnapshotStrategy} of a keyed state backend: the backend asks it at each
 * barrier whether the snapshot is full or a delta ({@link FULL_SNAPSHOTS} when not incremental).
 */

import type { ChunkHandle } from './storage/chunk-handle.js';

/** What a snapshot should serialize, decided at the barrier. */
export type ChainDecision =
  | { readonly mode: 'full'; readonly shared: readonly [] }
  | {
      readonly mode: 'delta';
      readonly baseCheckpointId: number;
      /** Chunks of the base chain, to be acknowledged before the delta's own chunks. */
      readonly shared: readonly ChunkHandle[];
      /** Deltas in the chain once this one is added. */
      readonly deltas: number;
    };

/** What a delta would cost, as the backend sees it at the barrier. */
export interface DeltaWork {
  /** Changed entries the delta would walk (an entry changed in k pending epochs counts k times). */
  readonly dirty: number;
  /** Live entries (what a full snapshot would walk). */
  readonly live: number;
}

/**
 * A backend's snapshot strategy: at the barrier it decides full or delta; it learns which chunks
 * a checkpoint persisted and which checkpoints completed, so the next delta knows its base chain.
 */
export interface SnapshotStrategy {
  /**
   * `backendBase`: the confirmed checkpoint the backend's dirty-key tracking is relative to;
   * `work`: the size of the delta against a full snapshot, when the backend knows it.
   */
  decide(backendBase: number | undefined, work?: DeltaWork): ChainDecision;
  persisted(checkpointId: number, decision: ChainDecision, own: readonly ChunkHandle[]): void;
  confirm(checkpointId: number): void;
  /** Restored state: the next snapshot is full. */
  reset(): void;
  /**
   * The coordinator refused the chain (a cluster checkpoint record too long to commit,
   * cluster-record-limit.ts): the next snapshot is full, so the chain starts over.
   */
  rebase(): void;
}

const FULL: ChainDecision = { mode: 'full', shared: [] };

/** The strategy of a backend without incremental checkpoints: every snapshot is full. */
export const FULL_SNAPSHOTS: SnapshotStrategy = {
  decide: () => FULL,
  persisted() {},
  confirm() {},
  reset() {},
  rebase() {},
};

interface Link {
  /** Every chunk restore needs, in checkpoint order (the base chain, then this checkpoint's own). */
  readonly handles: readonly ChunkHandle[];
  /** Deltas in the chain (0 for a full snapshot). */
  readonly deltas: number;
}

export const DEFAULT_FULL_EVERY = 10;

/**
 * A delta is written only while its changed entries are at most this fraction of the live
 * entries; above it the snapshot is full. `bench/state/delta-vs-full.mjs` at 1 M keys: a delta
 * of a fraction f of the entries costs 0.28–0.41× a full encoding up to f = 0.5, 0.6–0.7× at
 * 0.6–0.8, 0.84× (0.44–1.65× by round) at f = 1; above 3/4 the gain is small and noisy, and a
 * full snapshot restarts the chain (bench/README.md, "Incremental tracking at 1 M keys").
 */
export const DEFAULT_MAX_DELTA_FRACTION = 0.75;

/**
 * Below this many live entries the fraction is not applied (a delta is written whenever the
 * chain allows): either encoding then takes well under a millisecond, and a delta writes less.
 */
export const MIN_LIVE_FOR_DELTA_FRACTION = 4096;

export class IncrementalChain implements SnapshotStrategy {
  readonly fullEvery: number;
  readonly maxDeltaFraction: number;
  /** The confirmed base, or undefined (none yet, or just restored). */
  #base: ({ readonly checkpointId: number } & Link) | undefined;
  /** Snapshots persisted but not yet confirmed, by checkpoint id. */
  readonly #pending = new Map<number, Link>();

  constructor(fullEvery: number = DEFAULT_FULL_EVERY, maxDeltaFraction: number = DEFAULT_MAX_DELTA_FRACTION) {
    if (!Number.isInteger(fullEvery) || fullEvery < 1) {
      throw new RangeError(`fullEvery must be an integer >= 1, got ${String(fullEvery)}`);
    }
    if (!(maxDeltaFraction >= 0)) {
      throw new RangeError(`maxDeltaFraction must be a number >= 0, got ${String(maxDeltaFraction)}`);
    }
    this.fullEvery = fullEvery;
    this.maxDeltaFraction = maxDeltaFraction;
  }

  /** The confirmed checkpoint the next delta would build on, if any. */
  get baseCheckpointId(): number | undefined {
    return this.#base?.checkpointId;
  }

  /**
   * At the barrier: a delta when there is a confirmed base that the backend's snapshot is relative
   * to (`backendBase`), the chain has room and the delta is small enough (`work`, see
   * `maxDeltaFraction`); otherwise full.
   */
  decide(backendBase: number | undefined, work?: DeltaWork): ChainDecision {
    const base = this.#base;
    if (base === undefined || backendBase !== base.checkpointId || base.deltas + 1 >= this.fullEvery) {
      return FULL;
    }
    if (
      work !== undefined &&
      work.live >= MIN_LIVE_FOR_DELTA_FRACTION &&
      work.dirty > this.maxDeltaFraction * work.live
    ) {
      return FULL;
    }
    return {
      mode: 'delta',
      baseCheckpointId: base.checkpointId,
      shared: base.handles,
      deltas: base.deltas + 1,
    };
  }

  /** The snapshot of `checkpointId`, serialized as `decision` said, is durable under `own`. */
  persisted(checkpointId: number, decision: ChainDecision, own: readonly ChunkHandle[]): void {
    const deltas = decision.mode === 'delta' ? decision.deltas : 0;
    this.#pending.set(checkpointId, { handles: [...decision.shared, ...own], deltas });
  }

  /** Checkpoint `checkpointId` completed: it becomes the base if this subtask persisted it. */
  confirm(checkpointId: number): void {
    const link = this.#pending.get(checkpointId);
    for (const id of [...this.#pending.keys()]) if (id <= checkpointId) this.#pending.delete(id);
    if (link === undefined) return;
    if (this.#base !== undefined && this.#base.checkpointId > checkpointId) return;
    this.#base = { checkpointId, ...link };
  }

  /** Restored state: no base until a full snapshot is confirmed. */
  reset(): void {
    this.#base = undefined;
    this.#pending.clear();
  }

  /**
   * Re-base: no base until a full snapshot is confirmed. Snapshots persisted but not confirmed
   * are forgotten too: one taken as a delta over the refused chain before the re-base arrived
   * would otherwise become the base, and the chain would stay as long.
   */
  rebase(): void {
    this.reset();
  }
}
