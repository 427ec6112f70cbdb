/**
 * A copy-on-write snapshot of a heap keyed state backend, taken at a checkpoint barrier.
 *
 * Lifecycle: `backend.snapshot(id)` (synchronous, O(1) in the number of keys) → `encode()` or
 * `chunks()` (asynchronous, may be called several times, for 'full' and for 'delta'; a
 * checkpoint's `serialize()` is one releasing `encode` in the mode the strategy decided) →
 * `release()`. While live (until `release()`), the backend preserves for it the barrier-time value
 * of every entry touched after the barrier (see `heap-state-core.ts`); releasing stops that and
 * drops the preimages. Several snapshots may be live at once. An encoding with
 * `{ release: true }` (the checkpoint's) is the last use and releases as it goes: once a key
 * group is encoded, touches of its entries no longer make preimages for this snapshot (and a
 * delta never needed the groups it does not visit), so copy-on-write costs only for keys touched
 * before their group's turn.
 *
 * Encoding visits one key group at a time synchronously (one chunk per non-empty key group, the
 * loop shared with lmdb in `abstract-keyed-state-snapshot.ts`) and yields to the event loop
 * between key groups, at least every {@link YIELD_EVERY} entries, so the task keeps processing
 * records: the longest pause is one key group's encoding.
 */

import type { Packr } from 'msgpackr';
import { StateAccessError } from '../../errors.js';
import {
  AbstractKeyedStateSnapshot,
  type EncodeTally,
  wireExpiry,
} from '../abstract-keyed-state-snapshot.js';
import { type DirtyEpoch, type HeapDirtyGroup, mergeDirtyEntries } from '../dirty-epochs.js';
import type { DeltaWork, SnapshotStrategy } from '../incremental-chain.js';
import type { KeyGroupChunk } from '../key-group-chunk.js';
import { type SectionToEncode, SlotUpserts } from '../number-section-writer.js';
import type { StateEntry } from '../state-entry.js';
import type { StateTable } from '../state-table.js';
import type { CopyOnWriteSnapshot, HeapStateCore } from './heap-state-core.js';
import type { NumberSlotView } from './number-slots.js';

/** Entries encoded between two yields to the event loop (a key group is never split). */
export const YIELD_EVERY = 4096;

/** A group's changes in a delta: changed entries and slot changes by table, per pending epoch. */
type DirtyLists = HeapDirtyGroup;

export class HeapKeyedStateSnapshot
  extends AbstractKeyedStateSnapshot<DirtyLists>
  implements CopyOnWriteSnapshot
{
  /** The epoch this snapshot captures (internal to copy-on-write). */
  readonly version: number;

  readonly #core: HeapStateCore;
  readonly #epochs: readonly DirtyEpoch[];
  /** Group index → table → live entry → its value at the barrier. Dropped on release. */
  #preimages: Map<number, Map<StateTable, Map<StateEntry, StateEntry>>> | undefined = new Map();
  /** Number slots: group index → table → the group's slots at the barrier. Dropped on release. */
  #groupCopies: Map<number, Map<StateTable, NumberSlotView>> | undefined = new Map();

  /** @internal Created by `HeapKeyedStateBackend.snapshot`. */
  constructor(
    core: HeapStateCore,
    packr: Packr,
    strategy: SnapshotStrategy,
    checkpointId: number,
    timestamp: number,
    begun: {
      version: number;
      baseCheckpointId: number | undefined;
      epochs: readonly DirtyEpoch[];
      work?: DeltaWork;
    },
  ) {
    super(core, packr, strategy, checkpointId, timestamp, begun.baseCheckpointId, begun.work);
    this.#core = core;
    this.version = begun.version;
    this.#epochs = begun.epochs;
  }

  get released(): boolean {
    return this.#preimages === undefined;
  }

  /** @internal Copy-on-write hook (see `CopyOnWriteSnapshot`). */
  needsPreimage(groupIndex: number): boolean {
    return this.doneGroups === undefined || this.doneGroups[groupIndex] === 0;
  }

  /** @internal Copy-on-write hook (see `CopyOnWriteSnapshot`). */
  addPreimage(groupIndex: number, table: StateTable, entry: StateEntry, preimage: StateEntry): void {
    const pre = this.#preimages;
    if (pre === undefined) return;
    let byTable = pre.get(groupIndex);
    if (byTable === undefined) pre.set(groupIndex, (byTable = new Map()));
    let byKey = byTable.get(table);
    if (byKey === undefined) byTable.set(table, (byKey = new Map()));
    byKey.set(entry, preimage);
  }

  /** @internal Copy-on-write hook for number slots (see `CopyOnWriteSnapshot`). */
  addGroupCopy(groupIndex: number, table: StateTable, copy: NumberSlotView): void {
    const copies = this.#groupCopies;
    if (copies === undefined) return;
    let byTable = copies.get(groupIndex);
    if (byTable === undefined) copies.set(groupIndex, (byTable = new Map()));
    byTable.set(table, copy);
  }

  /**
   * What this snapshot sees of `table`'s number slots in group `g`: its copy, else the live group
   * if unchanged since the barrier, else nothing (created after the barrier).
   */
  #slotView(g: number, table: StateTable): NumberSlotView | undefined {
    const st = table.slots;
    if (st === undefined) return undefined;
    const copy = this.#groupCopies!.get(g)?.get(table);
    if (copy !== undefined) return copy;
    const grp = st.groups[g];
    return grp !== undefined && grp.version <= this.version ? grp : undefined;
  }

  /** Stops copy-on-write for this snapshot and drops its preimages. Idempotent. */
  release(): void {
    if (this.#preimages === undefined) return;
    this.#preimages = undefined;
    this.#groupCopies = undefined;
    this.#core.removeLive(this);
  }

  #checkLive(): void {
    if (this.#preimages === undefined) {
      throw new StateAccessError(
        `snapshot of checkpoint ${this.checkpointId} was released before it was serialized`,
      );
    }
  }

  protected async *generate(
    tally: EncodeTally,
    release: boolean,
  ): AsyncGenerator<KeyGroupChunk, void, undefined> {
    this.#checkLive();
    const groups = tally.kind === 'full' ? this.allGroups() : mergeDirtyEntries(this.#epochs);
    this.startEncoding(tally.kind, groups, release);
    try {
      yield* this.encodeGroups(tally, groups, YIELD_EVERY);
    } finally {
      if (release) this.release();
    }
  }

  protected sectionsOf(g: number, dirty: DirtyLists | undefined): SectionToEncode[] {
    this.#checkLive();
    return dirty === undefined ? this.#fullSections(g) : this.#deltaSections(g, dirty);
  }

  /** A releasing encoding encodes group `g` from its sections alone: its preimages can go. */
  protected override groupRead(g: number, work: number): void {
    if (this.doneGroups !== undefined) {
      this.#preimages!.delete(g);
      this.#groupCopies!.delete(g);
    }
    this.#core.counters.entriesSerialized += work;
  }

  /**
   * Every entry of group `g` as of the barrier. Entries expired at the barrier are skipped and,
   * if still live, removed (TTL clean-up at snapshot; the removal preserves them for older live
   * snapshots that still see them).
   */
  #fullSections(g: number): SectionToEncode[] {
    const sections: SectionToEncode[] = [];
    const version = this.version;
    const ts = this.timestamp;
    const preByTable = this.#preimages!.get(g);
    for (const table of this.#core.tables.values()) {
      const upserts: unknown[] = [];
      const live = table.groups[g];
      if (live !== undefined) {
        for (const [ik, e] of live) {
          if (e.version > version) continue; // touched after the barrier: preimage or absent
          if (e.expiresAt <= ts) {
            this.#core.removeAt(table, g, ik, e);
            continue;
          }
          upserts.push(e.key, table.toWire(e.value), wireExpiry(e.expiresAt));
        }
      }
      const pre = preByTable?.get(table);
      if (pre !== undefined) {
        for (const p of pre.values()) {
          if (p.expiresAt > ts) upserts.push(p.key, table.toWire(p.value), wireExpiry(p.expiresAt));
        }
      }
      const slots = this.#fullSlots(g, table);
      if (slots !== undefined && upserts.length > 0) upserts.push(...slots.toArray());
      if (upserts.length > 0) sections.push([table.name, table.kind, upserts, []]);
      else if (slots !== undefined) sections.push([table.name, table.kind, slots, []]);
    }
    return sections;
  }

  /**
   * Every unexpired slot of `table` in group `g` as of the barrier, or undefined when none. Slots
   * expired at the barrier are skipped and, if the view is the live group, freed afterwards (TTL
   * clean-up, as for entries).
   */
  #fullSlots(g: number, table: StateTable): SlotUpserts | undefined {
    const view = this.#slotView(g, table);
    if (view === undefined || view.size === 0) return undefined;
    const { keys, expires, count } = view;
    // No TTL: every slot holding a key, walked by the writer (no list).
    if (expires === undefined) return new SlotUpserts(view, undefined);
    const ts = this.timestamp;
    const list: number[] = [];
    let expired: number[] | undefined;
    for (let s = 0; s < count; s++) {
      if (keys[s] === undefined) continue;
      if (expires[s] <= ts) {
        if (view === table.slots!.groups[g]) (expired ??= []).push(s);
        continue;
      }
      list.push(s);
    }
    // After the walk: freeing is a change, which copies the group for live snapshots.
    if (expired !== undefined) for (const s of expired) this.#core.removeSlot(table, table.slots!, g, s);
    return list.length > 0 ? new SlotUpserts(view, list) : undefined;
  }

  /**
   * The barrier-time view of the changed entries of group `g`: an upsert or a tombstone each.
   * No lookup by key: each listed entry is its own view (untouched since the barrier), or its
   * preimage (touched since), and a removed one (`REMOVED`) or one expired at the barrier is a
   * tombstone. An entry listed in several pending epochs is written once, from the list of the
   * last epoch ≤ this snapshot's in which it was touched (the entry's `version`, or its
   * preimage's). Several entries of one key (removed, then inserted again) can give a tombstone
   * and an upsert of that key: restore applies a section's tombstones before its upserts, and at
   * most one of them was live at the barrier, so the key ends as it was at the barrier.
   */
  #deltaSections(g: number, dirty: DirtyLists): SectionToEncode[] {
    const sections: SectionToEncode[] = [];
    const version = this.version;
    const ts = this.timestamp;
    const preByTable = this.#preimages!.get(g);
    for (const [table, lists] of dirty.entries) {
      const upserts: unknown[] = [];
      const tombstones: unknown[] = [];
      const pre = preByTable?.get(table);
      for (const { version: listVersion, entries } of lists) {
        for (let i = 0; i < entries.length; i++) {
          const e = entries[i];
          let view: StateEntry;
          if (e.version <= version) {
            if (e.version !== listVersion) continue; // written from its newest list
            view = e;
          } else {
            // Touched after the barrier: it was live at the barrier (a removed entry is never
            // touched again), so its first touch since gave this live snapshot a preimage.
            const p = pre?.get(e);
            if (p === undefined) {
              throw new StateAccessError(
                `snapshot of checkpoint ${this.checkpointId}: no preimage for a changed entry of state '${table.name}' (internal error)`,
              );
            }
            if (p.version !== listVersion) continue;
            view = p;
          }
          if (view.expiresAt > ts)
            upserts.push(view.key, table.toWire(view.value), wireExpiry(view.expiresAt));
          else tombstones.push(e.key);
        }
      }
      const slots = this.#deltaSlots(g, table, dirty, tombstones);
      if (slots !== undefined) upserts.push(...slots.toArray());
      sections.push([table.name, table.kind, upserts, tombstones]);
    }
    for (const table of dirty.slots.keys()) {
      if (dirty.entries.has(table)) continue; // written above, with its entries
      const tombstones: unknown[] = [];
      const slots = this.#deltaSlots(g, table, dirty, tombstones);
      sections.push([table.name, table.kind, slots ?? [], tombstones]);
    }
    return sections;
  }

  /**
   * The barrier-time view of `table`'s changed slots in group `g` over the delta's epochs: each
   * changed slot once, as an upsert if it holds an unexpired key at the barrier (a slot re-used by
   * another key writes that key; one expired at the barrier is a tombstone), and every key removed
   * in those epochs as a tombstone (pushed onto `tombstones`; restore applies a section's
   * tombstones before its upserts, so a key removed and inserted again ends as its upsert).
   */
  #deltaSlots(
    g: number,
    table: StateTable,
    dirty: DirtyLists,
    tombstones: unknown[],
  ): SlotUpserts | undefined {
    const dirts = dirty.slots.get(table);
    if (dirts === undefined) return undefined;
    for (const d of dirts) for (const k of d.removedKeys) tombstones.push(k);
    const view = this.#slotView(g, table);
    if (view === undefined) return undefined;
    const { keys, expires, count } = view;
    const ts = this.timestamp;
    const seen = new Uint8Array(count);
    const list: number[] = [];
    for (const d of dirts) {
      for (const s of d.slots) {
        if (s >= count || seen[s] === 1) continue;
        seen[s] = 1;
        const key = keys[s];
        if (key === undefined) continue;
        if (expires !== undefined && expires[s] <= ts) tombstones.push(key);
        else list.push(s);
      }
    }
    return list.length > 0 ? new SlotUpserts(view, list) : undefined;
  }
}
