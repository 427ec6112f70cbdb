/**
 * Incremental change tracking, shared by the heap and lmdb keyed-state cores: which keys each
 * snapshot epoch touched, kept until a later checkpoint is confirmed, so that a delta covers
 * every change since its base (the newest confirmed checkpoint).
 *
 * Two forms, one per backend:
 * - heap ({@link markDirtyEntry}): the entry objects first touched in the current epoch, one
 *   array per key group (`table.dirtyEntries`). The core's version check makes the push happen
 *   once per entry per epoch, so the record path pays an array push, not a `Map.set`, and memory
 *   is one pointer per changed entry. A removed entry stays in its list, marked removed
 *   (`expiresAt = -Infinity`, see `heap-state-core.ts`): it is its own tombstone. An entry
 *   touched in several pending epochs is in several lists; the delta writes it once (see
 *   `heap-keyed-state-snapshot.ts`, `#deltaSections`).
 * - lmdb ({@link markDirty}): group index → internal key → user key (`table.dirty`): its
 *   cached entries are evicted, so the delta re-reads each key from the snapshot's view.
 * Closing the epoch at a snapshot moves a table's lists, O(1) per table (plus O(groups) for a
 * fresh heap array), into a pending {@link DirtyEpoch}.
 */

import type { SlotDirt } from './heap/number-slots.js';
import type { StateEntry } from './state-entry.js';
import type { StateTable } from './state-table.js';

/** One epoch's changed entries of one table and group (heap), with the epoch's number. */
export interface DirtyEntryList {
  /** The epoch these entries were first touched in. */
  readonly version: number;
  readonly entries: readonly StateEntry[];
}

/** Keys touched in one epoch, kept for incremental snapshots until a later checkpoint is confirmed. */
export interface DirtyEpoch {
  /** The checkpoint whose snapshot closed this epoch. */
  readonly checkpointId: number;
  /** The epoch number (= that snapshot's version). */
  readonly version: number;
  /** lmdb: table → group index → internal key → user key. */
  readonly dirty: ReadonlyMap<StateTable, Map<number, Map<unknown, unknown>>>;
  /** heap: table → group index → entries first touched in this epoch. */
  readonly entries: ReadonlyMap<StateTable, readonly (StateEntry[] | undefined)[]>;
  /** heap, number slots: table → group index → slots changed and keys removed in this epoch. */
  readonly slots: ReadonlyMap<StateTable, readonly (SlotDirt | undefined)[]>;
  /** heap: Σ of the `entries` lists' lengths and the slot changes (for the full-or-delta decision). */
  readonly entryCount: number;
}

/** Records that the key (group `g`, `internalKey`) of `table` changed in the current epoch. */
export function markDirty(table: StateTable, g: number, internalKey: unknown, userKey: unknown): void {
  let d = table.dirty.get(g);
  if (d === undefined) table.dirty.set(g, (d = new Map()));
  d.set(internalKey, userKey);
}

/**
 * Heap: records that entry `e` of `table` (group index `g`) was first touched in the current
 * epoch. The caller guarantees once per entry per epoch (`e.version !== epoch` before the touch,
 * or a new entry). Cost: one array push.
 */
export function markDirtyEntry(table: StateTable, g: number, e: StateEntry): void {
  const list = table.dirtyEntries[g];
  if (list === undefined) table.dirtyEntries[g] = [e];
  else list.push(e);
  table.dirtyEntryCount++;
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
    const entries = new Map<StateTable, (StateEntry[] | undefined)[]>();
    const slots = new Map<StateTable, (SlotDirt | undefined)[]>();
    let entryCount = 0;
    for (const t of tables) {
      if (t.dirty.size > 0) {
        dirty.set(t, t.dirty);
        t.dirty = new Map();
      }
      if (t.dirtyEntryCount > 0) {
        entries.set(t, t.dirtyEntries);
        entryCount += t.dirtyEntryCount;
        t.dirtyEntries = new Array(t.groups.length);
        t.dirtyEntryCount = 0;
      }
      const st = t.slots;
      if (st !== undefined && st.dirtyCount > 0) {
        slots.set(t, st.dirty);
        entryCount += st.dirtyCount;
        st.dirty = new Array(st.groups.length);
        st.dirtyCount = 0;
      }
    }
    this.pending.push({ checkpointId, version, dirty, entries, slots, entryCount });
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
    for (const t of tables) {
      t.dirty = new Map();
      t.dirtyEntries = new Array(t.groups.length);
      t.dirtyEntryCount = 0;
      if (t.slots !== undefined) {
        t.slots.dirty = new Array(t.slots.groups.length);
        t.slots.dirtyCount = 0;
      }
    }
    this.pending = [];
    this.lastConfirmedCheckpointId = baseCheckpointId;
  }
}

/** Σ of the pending epochs' changed-entry counts (heap; an entry touched in k epochs counts k times). */
export function dirtyEntryCount(epochs: readonly DirtyEpoch[]): number {
  let n = 0;
  for (const e of epochs) n += e.entryCount;
  return n;
}

/** Heap: what a delta encodes of one key group. */
export interface HeapDirtyGroup {
  /** Table → its changed-entry lists, ascending epoch. */
  readonly entries: Map<StateTable, DirtyEntryList[]>;
  /** Number-slot table → its slot changes, ascending epoch. */
  readonly slots: Map<StateTable, SlotDirt[]>;
}

/**
 * Heap: group index → what changed in it over `epochs` (entry lists and slot changes, ascending
 * epoch), by ascending group. Nothing is copied: O(epochs × tables × groups).
 */
export function mergeDirtyEntries(epochs: readonly DirtyEpoch[]): [number, HeapDirtyGroup][] {
  const byGroup = new Map<number, HeapDirtyGroup>();
  const groupOf = (g: number): HeapDirtyGroup => {
    let d = byGroup.get(g);
    if (d === undefined) byGroup.set(g, (d = { entries: new Map(), slots: new Map() }));
    return d;
  };
  for (const epoch of epochs) {
    for (const [table, groups] of epoch.entries) {
      for (let g = 0; g < groups.length; g++) {
        const entries = groups[g];
        if (entries === undefined) continue;
        const byTable = groupOf(g).entries;
        const lists = byTable.get(table);
        const list: DirtyEntryList = { version: epoch.version, entries };
        if (lists === undefined) byTable.set(table, [list]);
        else lists.push(list);
      }
    }
    for (const [table, groups] of epoch.slots) {
      for (let g = 0; g < groups.length; g++) {
        const dirt = groups[g];
        if (dirt === undefined) continue;
        const byTable = groupOf(g).slots;
        const lists = byTable.get(table);
        if (lists === undefined) byTable.set(table, [dirt]);
        else lists.push(dirt);
      }
    }
  }
  return [...byGroup].sort((a, b) => a[0] - b[0]);
}

/** lmdb: group index → table → internal key → user key: the union of `epochs`, by ascending group. */
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
