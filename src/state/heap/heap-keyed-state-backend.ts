/**
 * The heap keyed state backend: keyed state in JS maps, organised key group → state name → key,
 * snapshotted copy-on-write (see `heap-state-core.ts` for the design and its costs). What it
 * shares with the lmdb backend (handles, options, strategy, restore loop) is in
 * `abstract-keyed-state-backend.ts`.
 *
 * Used by one operator subtask on one thread: nothing here is thread-safe, and the runtime calls
 * `setCurrentKey` before running user code for a record, `snapshot` at the barrier, and
 * `serialize`/`release` on the snapshot afterwards (asynchronously, interleaved with records).
 */

import { StateAccessError } from '../../errors.js';
import { AbstractKeyedStateBackend } from '../abstract-keyed-state-backend.js';
import { StateHandles } from '../handles/state-handles.js';
import { internalKeyOf } from '../internal-key.js';
import type { DecodedChunk } from '../key-group-chunk.js';
import type { KeyedStateBackendOptions } from '../keyed-state-backend.js';
import type { StateEntry } from '../state-entry.js';
import type { StateTable } from '../state-table.js';
import { HeapKeyedStateSnapshot } from './heap-keyed-state-snapshot.js';
import { type CopyOnWriteCounters, HeapStateCore } from './heap-state-core.js';
import type { NumberSlotTable } from './number-slots.js';

export type HeapKeyedStateBackendOptions = KeyedStateBackendOptions;

export type { KeyedStateRestoreSummary } from '../keyed-state-backend.js';

export class HeapKeyedStateBackend extends AbstractKeyedStateBackend<HeapKeyedStateSnapshot> {
  protected readonly core: HeapStateCore;
  readonly store: StateHandles;

  constructor(options: HeapKeyedStateBackendOptions) {
    super(options);
    this.core = new HeapStateCore({
      maxParallelism: this.maxParallelism,
      keyGroupRange: this.keyGroupRange,
      clock: options.clock ?? Date.now,
      incremental: options.incremental ?? false,
      operatorName: options.operatorName ?? 'keyed operator',
    });
    const core = this.core;
    this.store = new StateHandles(core, (name, kind) => core.table(name, kind));
  }

  /** Sets the key every handle reads and writes; computes its key group once per key switch. */
  setCurrentKey(key: unknown, knownKeyGroup = -1): void {
    this.core.setCurrentKey(key, knownKeyGroup);
  }

  /** Copy-on-write work counters (monotonic). */
  get counters(): Readonly<CopyOnWriteCounters> {
    return this.core.counters;
  }

  /** Number of snapshots not yet released. */
  get liveSnapshots(): number {
    return this.core.live.length;
  }

  /** O(number of state names): opens a copy-on-write epoch. */
  protected takeSnapshot(checkpointId: number, timestamp: number): HeapKeyedStateSnapshot {
    const begun = this.core.beginSnapshot(checkpointId);
    const snap = new HeapKeyedStateSnapshot(
      this.core,
      this.packr,
      this.strategy,
      checkpointId,
      timestamp,
      begun,
    );
    this.core.addLive(snap);
    return snap;
  }

  /** Restored entries belong to a closed epoch, so the next touch of each is a first touch. */
  protected applyChunk(kg: number, g: number, decoded: DecodedChunk, now: number): void {
    const core = this.core;
    const version = core.epoch;
    if (decoded.kind === 'full') {
      for (const t of core.tables.values()) {
        t.groups[g] = undefined;
        if (t.slots !== undefined) clearSlotGroup(t.slots, g);
      }
    }
    for (const [name, kind, upserts, tombstones] of decoded.sections) {
      const table = this.restoredTable(kg, name, kind);
      if (table.slots !== undefined) {
        this.#applyToSlots(kg, g, table, upserts, tombstones, now);
        continue;
      }
      let m = table.groups[g];
      if (m === undefined) table.groups[g] = m = new Map<unknown, StateEntry>();
      for (const key of tombstones) m.delete(internalKeyOf(key));
      for (let i = 0; i < upserts.length; i += 3) {
        const key = upserts[i];
        const exp = upserts[i + 2];
        const expiresAt = exp === 0 ? Number.POSITIVE_INFINITY : (exp as number);
        const ik = internalKeyOf(key);
        if (expiresAt <= now) {
          m.delete(ik);
          continue;
        }
        const value = this.restoredValue(kg, table, upserts[i + 1]);
        m.set(ik, { key, value, version, expiresAt });
      }
      if (m.size === 0) table.groups[g] = undefined;
    }
  }

  /**
   * A section restored into a state already declared `{ type: 'number' }` (restore after the
   * declaration): into its slots. A non-number value is refused naming key group and state.
   */
  #applyToSlots(
    kg: number,
    g: number,
    table: StateTable,
    upserts: readonly unknown[],
    tombstones: readonly unknown[],
    now: number,
  ): void {
    const slots = table.slots!;
    for (let i = 1; i < upserts.length; i += 3) {
      if (typeof upserts[i] !== 'number') {
        throw new StateAccessError(
          `restore of key group ${kg}, state '${table.name}': it is declared { type: 'number' } but the checkpoint holds a ${typeof upserts[i]} value`,
        );
      }
    }
    const epoch = this.core.epoch;
    const grp = slots.group(g, epoch);
    const free = (ik: unknown): void => {
      const s = slots.index.get(ik);
      if (s === undefined) return;
      slots.index.delete(ik);
      grp.freeSlot(s);
    };
    for (const key of tombstones) free(internalKeyOf(key));
    for (let i = 0; i < upserts.length; i += 3) {
      const key = upserts[i];
      const exp = upserts[i + 2] as number;
      const expiresAt = exp === 0 ? Number.POSITIVE_INFINITY : exp;
      const ik = internalKeyOf(key);
      if (expiresAt <= now) {
        free(ik);
        continue;
      }
      let s = slots.index.get(ik);
      if (s === undefined) {
        s = grp.allocate();
        grp.setKey(s, key, ik);
        slots.index.set(ik, s);
      }
      grp.values[s] = upserts[i + 1] as number;
      if (grp.expires !== undefined) grp.expires[s] = expiresAt;
    }
    grp.version = epoch;
  }

  protected endRestore(): void {
    // applyChunk changed `groups` only: one O(entries) rebuild of each table's lookup index.
    for (const t of this.core.tables.values()) t.rebuildIndex();
    this.core.epoch++;
    this.core.invalidateKeyCache();
  }

  /**
   * Keys that have a (non-expired) entry in state `name`, in no particular order. O(keys); for
   * tests, tools and operators that must visit all keys. Does not change the current key.
   */
  *keys(name: string): IterableIterator<unknown> {
    const table = this.core.tables.get(name);
    if (table === undefined) return;
    const now = this.core.clock();
    for (const m of table.groups) {
      if (m === undefined) continue;
      for (const e of m.values()) if (e.expiresAt > now) yield e.key;
    }
    if (table.slots === undefined) return;
    for (const grp of table.slots.groups) {
      if (grp === undefined) continue;
      for (let s = 0; s < grp.count; s++) {
        if (grp.keys[s] !== undefined && (grp.expires === undefined || grp.expires[s] > now))
          yield grp.keys[s];
      }
    }
  }

  /** Nothing to release: state lives in JS memory. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Empties group index `g` of `slots` (a full chunk replaces the group). Restore only: no snapshot is live. */
function clearSlotGroup(slots: NumberSlotTable, g: number): void {
  const grp = slots.groups[g];
  if (grp === undefined) return;
  for (let s = 0; s < grp.count; s++) if (grp.keys[s] !== undefined) slots.index.delete(grp.internalKeys[s]);
  slots.groups[g] = undefined;
}
