/**
 * Incremental change tracking, shared by the heap and lmdb keyed-state cores: which keys each
 * snapshot epoch touched, kept until a later checkpoint is confirmed, so that a delta covers
 * every change since its base (the newest confirmed checkpoint).
 *
 * A table collects the keys first touched in the current epoch in `table.dirty` (group index →
 * internal key → user key, see {@link markDirty}); closing the epoch at a snapshot moves those
 * maps, O(1) per table, into a pending {@link DirtyEpoch}.
 */

import type { StateTable } from './state-table.js';

/** Keys touched in one epoch, kept for incremental snapshots until a later checkpoint is confirmed. */
export interface DirtyEpoch {
  /** The checkpoint whose snapshot closed this epoch. */
  readonly checkpointId: number;
  /** The epoch number (= that snapshot's version). */
  readonly version: number;
  /** Table → group index → internal key → user key. */
  readonly dirty: ReadonlyMap<StateTable, Map<number, Map<unknown, unknown>>>;
}

/** Records that the key (group `g`, `internalKey`) of `table` changed in the current epoch. */
export function markDirty(table: StateTable, g: number, internalKey: unknown, userKey: unknown): void {
  let d = table.dirty.get(g);
  if (d === undefined) table.dirty.set(g, (d = new Map()));
  d.set(internalKey, userKey);
}

export class DirtyEpochs {
  /** Dirty epochs since the last confirmed checkpoint, ascending. */
  pending: DirtyEpoch[] = [];
  /** Base of the next delta: the newest checkpoint confirmed complete (or restored). */
  lastConfirmedCheckpointId: number | undefined = undefined;

  /**
   * Closes epoch `version` for the snapshot of `checkpointId`: every table's dirty keys become a
   * pending epoch. Returns the delta base and the epochs the delta must cover.
   * O(tables + pending epochs).
   */
  close(
    checkpointId: number,
    version: number,
    tables: Iterable<StateTable>,
  ): { baseCheckpointId: number | undefined; epochs: readonly DirtyEpoch[] } {
    const dirty = new Map<StateTable, Map<number, Map<unknown, unknown>>>();
    for (const t of tables) {
      if (t.dirty.size > 0) {
        dirty.set(t, t.dirty);
        t.dirty = new Map();
      }
    }
    this.pending.push({ checkpointId, version, dirty });
    return { baseCheckpointId: this.lastConfirmedCheckpointId, epochs: this.pending.slice() };
  }

  /**
   * Checkpoint `checkpointId` is complete: later deltas are based on it, and the dirty epochs up
   * to it are dropped. Unknown ids (aborted, not taken by this backend) are ignored.
   */
  confirm(checkpointId: number): void {
    const i = this.pending.findIndex((e) => e.checkpointId === checkpointId);
    if (i < 0) return;
    this.pending.splice(0, i + 1);
    this.lastConfirmedCheckpointId = checkpointId;
  }

  /** After a restore: nothing is dirty, and the restored checkpoint is the base of the next delta. */
  reset(tables: Iterable<StateTable>, baseCheckpointId: number | undefined): void {
    for (const t of tables) t.dirty = new Map();
    this.pending = [];
    this.lastConfirmedCheckpointId = baseCheckpointId;
  }
}

/** Group index → table → internal key → user key: the union of `epochs`, by ascending group. */
export function mergeDirtyEpochs(
  epochs: readonly DirtyEpoch[],
): [number, Map<StateTable, Map<unknown, unknown>>][] {
  const byGroup = new Map<number, Map<StateTable, Map<unknown, unknown>>>();
  for (const epoch of epochs) {
    for (const [table, groups] of epoch.dirty) {
      for (const [g, keys] of groups) {
        let byTable = byGroup.get(g);
        if (byTable === undefined) byGroup.set(g, (byTable = new Map()));
        const acc = byTable.get(table);
        if (acc === undefined) byTable.set(table, new Map(keys));
        else for (const [ik, k] of keys) acc.set(ik, k);
      }
    }
  }
  return [...byGroup].sort((a, b) => a[0] - b[0]);
}
