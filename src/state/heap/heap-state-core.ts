/**
 * The mutable core of the heap keyed state backend: the current key, the state tables, and the
 * copy-on-write bookkeeping that lets a snapshot be taken in O(1) at the barrier.
 *
 * ## Copy-on-write by write epochs (after Flink's CopyOnWriteStateMap, without its table copy)
 *
 * - `epoch` counts snapshots: taking a snapshot gives it `version = epoch` and increments
 *   `epoch`. Every entry records in `version` the epoch of its last *touch*.
 * - A snapshot S sees an entry as it was at the end of epoch `S.version`. It never copies the
 *   tables: at serialization time it reads the live tables, and takes any entry whose
 *   `version <= S.version` as it is (untouched since the barrier, hence unchanged).
 * - The first touch of an entry in an epoch (`entry.version !== epoch`) checks whether a live
 *   snapshot still needs the entry's current value (`entry.version <= maxLiveVersion`). If so it
 *   makes a *preimage* (the value as it was at those barriers) and gives it to every live
 *   snapshot with `version >= entry.version` that still reads the entry's key group (a snapshot
 *   whose last serialization has encoded the group already does not), newest first. All later
 *   touches in the same epoch cost one integer comparison.
 * - A live entry with `version > S.version` was touched after S's barrier: S uses its preimage,
 *   or, if it has none, the entry did not exist at the barrier (inserted later) and is skipped.
 *   Entries deleted after the barrier survive as preimages.
 *
 * ## What counts as a touch (the mutation rule)
 *
 * User code may mutate any object it got from state (`const o = s.value(); o.n++`, with or
 * without `update(o)`), and reduce/aggregate functions may mutate and return their accumulator.
 * So a touch happens on every write AND on every read that hands a mutable object (anything
 * `typeof 'object'`) to user code. Reads of primitives are free.
 * - In-place touches (reads of objects, list `add`, map `put`, reduce/aggregate `add`) give the
 *   snapshot a deep copy (`copyValue`): O(size of that key's value), once per key per epoch,
 *   and only while a snapshot is live.
 * - Overwrites and removals (value `update`, list `update`, `clear`) move the old value into the
 *   preimage without copying: user code has had no reference to it since the barrier (any read
 *   would have been a touch).
 * Out of contract (the same as Flink's heap backend with object reuse): keeping an object read
 * from state across records and mutating it later, and storing one object under two keys.
 *
 * Costs: `snapshot()` is O(number of state names + pending incremental epochs), independent of
 * the number of keys; the hot path pays one `Map` lookup (in the table's all-groups `index`) per
 * state and key switch (later accesses
 * hit the table's cached entry) and one comparison per access, plus, per key and epoch while
 * a snapshot is live, one preimage (a copy for in-place touches) and, with incremental
 * snapshots, one push of the entry onto its group's dirty list (`markDirtyEntry`).
 */

import { StateAccessError } from '../../errors.js';
import { type DirtyEpoch, DirtyEpochs, dirtyEntryCount, markDirtyEntry } from '../dirty-epochs.js';
import type { DeltaWork } from '../incremental-chain.js';
import { describeKey, setCurrentKeyFields } from '../internal-key.js';
import type { KeyGroupRange } from '../key-groups.js';
import type { KeyedStateCore } from '../keyed-state-core.js';
import type { StateEntry, StateKind } from '../state-entry.js';
import { StateTable } from '../state-table.js';
import {
  copyForSnapshot,
  type NumberSlotGroup,
  NumberSlotTable,
  type NumberSlotView,
} from './number-slots.js';

/**
 * `expiresAt` of a removed entry: it is no longer in its table, but may still be in a dirty list
 * (incremental), where it stands for its key's tombstone. Expired at every time, so any reader
 * that meets it treats the key as absent.
 */
export const REMOVED = Number.NEGATIVE_INFINITY;

/** What the core needs from a snapshot to hand it preimages. */
export interface CopyOnWriteSnapshot {
  /** The epoch whose end this snapshot captures. */
  readonly version: number;
  /**
   * False once the snapshot no longer reads group `groupIndex` (its last serialization encoded
   * it already, or does not visit it): no preimage is made for it then.
   */
  needsPreimage(groupIndex: number): boolean;
  /**
   * Called at most once per (group, table, key) for this snapshot: `entry` is the live entry
   * (the preimage's key in the snapshot), `preimage` its value at the barrier.
   */
  addPreimage(groupIndex: number, table: StateTable, entry: StateEntry, preimage: StateEntry): void;
  /**
   * Number slots: called at most once per (group, table) for this snapshot, at the group's first
   * change after the barrier: `copy` is the group as the snapshot sees it.
   */
  addGroupCopy(groupIndex: number, table: StateTable, copy: NumberSlotView): void;
}

/** Work counters, for tests and metrics. Monotonic. */
export interface CopyOnWriteCounters {
  /** Preimages made (one per key per epoch while a snapshot needed it). */
  preimages: number;
  /** Preimages that needed a deep copy (in-place touches). */
  valuesCopied: number;
  /** Units of work done by synchronous snapshot parts (tables swapped + epochs listed), summed. */
  snapshotSyncWork: number;
  /** Entries visited while serializing snapshots (async part). */
  entriesSerialized: number;
  /** Number-slot groups copied for live snapshots (one per group and epoch while needed). */
  groupCopies: number;
  /** Slots in those copies. */
  slotsCopied: number;
}

export interface HeapStateCoreOptions {
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  readonly clock: () => number;
  readonly incremental: boolean;
  readonly operatorName: string;
}

export class HeapStateCore implements KeyedStateCore {
  readonly maxParallelism: number;
  readonly range: KeyGroupRange;
  /** `range.start` and `range.end` as own fields: the per-record ownership check reads them. */
  readonly rangeStart: number;
  readonly rangeEnd: number;
  readonly clock: () => number;
  /** When false no dirty keys are tracked and every snapshot is full. */
  readonly incremental: boolean;
  readonly operatorName: string;
  /** Number of key groups in the range (0 for an empty range). */
  readonly groupCount: number;
  readonly tables = new Map<string, StateTable>();

  /** The current user key; meaningful only when `groupIndex >= 0`. */
  currentKey: unknown = undefined;
  /** The current key's internal key (see `internal-key.ts`). */
  internalKey: unknown = undefined;
  /** The current key's group index (key group − range start); −1 before the first `setCurrentKey`. */
  groupIndex = -1;
  /**
   * Bumped on every key switch and bulk table change: a table's `cachedEntry` is the current key's
   * only while its `cachedStamp` equals this (see StateTable).
   */
  keyStamp = 0;

  /** Current write epoch. Invariant: every entry's `version <= epoch`. */
  epoch = 1;
  /** Live snapshots, ascending by version (snapshots are taken in epoch order). */
  readonly live: CopyOnWriteSnapshot[] = [];
  /** Version of the newest live snapshot, 0 when none: entries with `version <= maxLiveVersion` may be needed. */
  maxLiveVersion = 0;
  /** Dirty epochs since the last confirmed checkpoint and the delta base (incremental only). */
  readonly dirtyEpochs = new DirtyEpochs();

  readonly counters: CopyOnWriteCounters = {
    preimages: 0,
    valuesCopied: 0,
    snapshotSyncWork: 0,
    entriesSerialized: 0,
    groupCopies: 0,
    slotsCopied: 0,
  };

  constructor(options: HeapStateCoreOptions) {
    this.maxParallelism = options.maxParallelism;
    this.range = options.keyGroupRange;
    this.rangeStart = options.keyGroupRange.start;
    this.rangeEnd = options.keyGroupRange.end;
    this.clock = options.clock;
    this.incremental = options.incremental;
    this.operatorName = options.operatorName;
    this.groupCount = Math.max(0, options.keyGroupRange.end - options.keyGroupRange.start + 1);
  }

  /**
   * Sets the key that state handles read and write. Computes the key's group once per key
   * switch. Cost: a string/number hash (none when `knownKeyGroup`, the producer's partitioner's
   * group, is given: see `setCurrentKeyFields`); composite keys build their canonical string twice.
   * Throws KeyNotSerializableError or KeyGroupOutOfRangeError (the key is left unset then).
   */
  setCurrentKey(key: unknown, knownKeyGroup = -1): void {
    // Primitives compare by value; objects are re-hashed every time (they may have been mutated).
    // A known group other than the current one means another key: the string comparison, which
    // V8 does byte by byte for two distinct strings of one length, is skipped then (at 10 k keys
    // nearly every record switches key).
    if (
      this.groupIndex >= 0 &&
      (knownKeyGroup < 0 || knownKeyGroup - this.rangeStart === this.groupIndex) &&
      key === this.currentKey &&
      typeof key !== 'object'
    )
      return;
    this.keyStamp++;
    // The keyed task's common case, inline: a plain string key (its own internal key, see
    // internal-key.ts) whose group the producer's partitioner carried, owned by this subtask.
    // With the compare above: −3 to −6 ns per key switch (in-process A/B, bench/README.md,
    // "The state path step by step"); setCurrentKeyFields
    // keeps every other case and the error paths.
    if (
      knownKeyGroup >= this.rangeStart &&
      knownKeyGroup <= this.rangeEnd &&
      typeof key === 'string' &&
      (key.length === 0 || key.charCodeAt(0) !== 0)
    ) {
      this.currentKey = key;
      this.internalKey = key;
      this.groupIndex = knownKeyGroup - this.rangeStart;
      return;
    }
    setCurrentKeyFields(this, key, this.maxParallelism, this.range, this.operatorName, knownKeyGroup);
  }

  /** Forgets every table's cached entry; call after changing tables other than through this core. */
  invalidateKeyCache(): void {
    this.keyStamp++;
  }

  /** The table of `name`, created on first use; throws if `name` is registered with another kind. */
  table(name: string, kind: StateKind): StateTable {
    let t = this.tables.get(name);
    if (t === undefined) {
      t = new StateTable(name, kind, this.groupCount);
      this.tables.set(name, t);
    } else if (t.kind !== kind) {
      throw new StateAccessError(
        `state '${name}' is ${t.kind} state; it cannot also be used as ${kind} state`,
      );
    }
    return t;
  }

  /**
   * The current key's entry in `table`, or undefined. An expired entry is removed (a write, so it
   * is preserved for live snapshots) and not returned. Cost: one Map lookup on
   * the first access per key switch, one comparison after (the table caches the entry), plus a
   * clock read when the state has a TTL. The lookup goes to the table's `index` (one map over
   * all groups); the group index is only checked to be set.
   */
  find(table: StateTable): StateEntry | undefined {
    const g = this.groupIndex;
    if (g < 0) throw new StateAccessError(`keyed state '${table.name}' accessed with no current key`);
    let e: StateEntry | undefined;
    if (table.cachedStamp === this.keyStamp) {
      e = table.cachedEntry;
    } else {
      e = table.index.get(this.internalKey);
      table.cachedEntry = e;
      table.cachedStamp = this.keyStamp;
    }
    if (e === undefined) return undefined;
    if (e.expiresAt !== Number.POSITIVE_INFINITY && e.expiresAt <= this.clock()) {
      this.removeAt(table, g, this.internalKey, e);
      return undefined;
    }
    return e;
  }

  /** Call before user code may mutate `e.value` in place or receive it. Keeps `e.value`'s identity. */
  touchForMutation(table: StateTable, e: StateEntry): void {
    if (e.version !== this.epoch) this.#firstTouch(table, this.groupIndex, e, true);
  }

  /** Call before replacing `e.value` entirely: the old value moves to live snapshots uncopied. */
  touchForOverwrite(table: StateTable, e: StateEntry): void {
    if (e.version !== this.epoch) this.#firstTouch(table, this.groupIndex, e, false);
  }

  /** Expiry time for an entry written now. */
  expiresAt(table: StateTable): number {
    return table.ttlMs === undefined ? Number.POSITIVE_INFINITY : this.clock() + table.ttlMs;
  }

  /** Creates the current key's entry (the caller checked that there is none). */
  insert(table: StateTable, value: unknown): StateEntry {
    const g = this.groupIndex;
    let m = table.groups[g];
    if (m === undefined) table.groups[g] = m = new Map();
    const e: StateEntry = {
      key: this.currentKey,
      value,
      version: this.epoch,
      expiresAt: this.expiresAt(table),
    };
    m.set(this.internalKey, e);
    table.index.set(this.internalKey, e);
    table.cachedEntry = e;
    table.cachedStamp = this.keyStamp;
    if (this.incremental) markDirtyEntry(table, g, e);
    return e;
  }

  /** Removes the current key's entry `e`. */
  remove(table: StateTable, e: StateEntry): void {
    this.removeAt(table, this.groupIndex, this.internalKey, e);
  }

  /** Removes entry `e` stored under (group, internal key); used for any key (TTL clean-up). */
  removeAt(table: StateTable, groupIndex: number, internalKey: unknown, e: StateEntry): void {
    if (e.version !== this.epoch) this.#firstTouch(table, groupIndex, e, false);
    table.groups[groupIndex]?.delete(internalKey);
    table.index.delete(internalKey);
    if (table.cachedEntry === e) table.cachedEntry = undefined;
    // The removed entry is its own tombstone in the dirty lists (incremental deltas).
    e.expiresAt = REMOVED;
  }

  #firstTouch(table: StateTable, g: number, e: StateEntry, copy: boolean): void {
    if (e.version <= this.maxLiveVersion) {
      let preimage: StateEntry | undefined;
      // Newest first; snapshots older than the entry's last touch already hold their preimage.
      for (let i = this.live.length - 1; i >= 0; i--) {
        const s = this.live[i];
        if (s.version < e.version) break;
        if (!s.needsPreimage(g)) continue;
        if (preimage === undefined) {
          preimage = {
            key: e.key,
            value: copy ? table.copyValue(e.value) : e.value,
            version: e.version,
            expiresAt: e.expiresAt,
          };
          this.counters.preimages++;
          if (copy) this.counters.valuesCopied++;
        }
        s.addPreimage(g, table, e, preimage);
      }
    }
    if (this.incremental) markDirtyEntry(table, g, e);
    e.version = this.epoch;
  }

  // ---- Number slots (state declared `{ type: 'number' }`, see number-slots.ts) ----

  /**
   * The number slots of `table`, made on the declaration: entries it holds (restored before the
   * declaration) move into slots — each is removed as a write (preimage for live snapshots, a
   * tombstone in the dirty lists) and inserted as a change of the current epoch. Throws
   * StateAccessError, changing nothing, if one of them is not a number. O(entries), once.
   */
  numberSlots(table: StateTable): NumberSlotTable {
    if (table.slots !== undefined) return table.slots;
    for (const m of table.groups) {
      if (m === undefined) continue;
      for (const e of m.values()) {
        if (typeof e.value !== 'number') {
          throw new StateAccessError(
            `state '${table.name}' of ${this.operatorName} is declared { type: 'number' } but holds a ${describeType(e.value)} value for key ${describeKey(e.key)} (restored from a checkpoint written without the declaration?)`,
          );
        }
      }
    }
    const slots = new NumberSlotTable(this.groupCount, table.ttlMs !== undefined, this.incremental);
    const now = this.clock();
    for (let g = 0; g < table.groups.length; g++) {
      const m = table.groups[g];
      if (m === undefined) continue;
      for (const [ik, e] of [...m]) {
        const expiresAt = e.expiresAt;
        this.removeAt(table, g, ik, e);
        if (expiresAt <= now) continue;
        const grp = slots.group(g, this.epoch);
        const s = grp.allocate();
        grp.setKey(s, e.key, ik);
        grp.values[s] = e.value as number;
        if (grp.expires !== undefined) grp.expires[s] = expiresAt;
        slots.index.set(ik, s);
        if (slots.incremental) slots.markDirty(g, grp, s, this.epoch);
      }
    }
    this.keyStamp++;
    table.slots = slots;
    return slots;
  }

  /**
   * The current key's slot in `slots` (−1: none). An expired value is removed (a write) and not
   * returned. Cost: one Map lookup on the first access per key switch, one comparison after.
   */
  findSlot(table: StateTable, slots: NumberSlotTable): number {
    const g = this.groupIndex;
    if (g < 0) throw new StateAccessError(`keyed state '${table.name}' accessed with no current key`);
    let s: number;
    if (slots.cachedStamp === this.keyStamp) {
      s = slots.cachedSlot;
    } else {
      s = slots.index.get(this.internalKey) ?? -1;
      slots.cachedSlot = s;
      slots.cachedStamp = this.keyStamp;
    }
    if (s >= 0 && slots.ttl && slots.groups[g]!.expires![s] <= this.clock()) {
      this.removeSlot(table, slots, g, s);
      return -1;
    }
    return s;
  }

  /** Overwrites the current key's slot `s` with `value` (refreshing its TTL). */
  writeSlot(table: StateTable, slots: NumberSlotTable, s: number, value: number): void {
    const g = this.groupIndex;
    const grp = slots.groups[g]!;
    if (grp.version !== this.epoch) this.#firstGroupTouch(table, g, grp);
    if (slots.incremental) slots.markDirty(g, grp, s, this.epoch);
    grp.values[s] = value;
    if (grp.expires !== undefined) grp.expires[s] = this.expiresAt(table);
  }

  /** Gives the current key (which has no slot) a slot holding `value`. */
  insertSlot(table: StateTable, slots: NumberSlotTable, value: number): void {
    const g = this.groupIndex;
    const grp = slots.group(g, this.epoch);
    if (grp.version !== this.epoch) this.#firstGroupTouch(table, g, grp);
    const s = grp.allocate();
    grp.setKey(s, this.currentKey, this.internalKey);
    grp.values[s] = value;
    if (grp.expires !== undefined) grp.expires[s] = this.expiresAt(table);
    slots.index.set(this.internalKey, s);
    slots.cachedSlot = s;
    slots.cachedStamp = this.keyStamp;
    if (slots.incremental) slots.markDirty(g, grp, s, this.epoch);
  }

  /** Frees slot `s` of group index `g` (any key: also TTL clean-up). */
  removeSlot(table: StateTable, slots: NumberSlotTable, g: number, s: number): void {
    const grp = slots.groups[g]!;
    if (grp.version !== this.epoch) this.#firstGroupTouch(table, g, grp);
    slots.index.delete(grp.internalKeys[s]);
    const key = grp.freeSlot(s);
    if (slots.cachedSlot === s && slots.cachedStamp === this.keyStamp && g === this.groupIndex)
      slots.cachedSlot = -1;
    if (slots.incremental) slots.markRemoved(g, key);
  }

  /**
   * The first change of slot group `grp` (index `g`) in this epoch: every live snapshot that still
   * reads the group and saw it as it is now (`version >= grp.version`) gets one shared copy.
   */
  #firstGroupTouch(table: StateTable, g: number, grp: NumberSlotGroup): void {
    if (grp.version <= this.maxLiveVersion) {
      let copy: NumberSlotView | undefined;
      for (let i = this.live.length - 1; i >= 0; i--) {
        const s = this.live[i];
        if (s.version < grp.version) break;
        if (!s.needsPreimage(g)) continue;
        if (copy === undefined) {
          copy = copyForSnapshot(grp);
          this.counters.groupCopies++;
          this.counters.slotsCopied += copy.count;
        }
        s.addGroupCopy(g, table, copy);
      }
    }
    grp.version = this.epoch;
  }

  /**
   * The synchronous part of a snapshot: closes the current epoch. Returns the snapshot's version,
   * the delta base and the dirty epochs the delta must cover. O(tables + pending epochs).
   */
  beginSnapshot(checkpointId: number): {
    version: number;
    baseCheckpointId: number | undefined;
    epochs: readonly DirtyEpoch[];
    work: DeltaWork | undefined;
  } {
    const version = this.epoch;
    this.epoch = version + 1;
    if (!this.incremental) {
      this.counters.snapshotSyncWork += 1;
      return { version, baseCheckpointId: undefined, epochs: [], work: undefined };
    }
    const closed = this.dirtyEpochs.close(checkpointId, version, this.tables.values());
    let live = 0;
    for (const t of this.tables.values()) live += t.index.size + (t.slots?.size ?? 0);
    this.counters.snapshotSyncWork += 1 + 2 * this.tables.size + closed.epochs.length;
    return { version, ...closed, work: { dirty: dirtyEntryCount(closed.epochs), live } };
  }

  /** Registers a snapshot for copy-on-write. Must be called right after `beginSnapshot`. */
  addLive(s: CopyOnWriteSnapshot): void {
    this.live.push(s);
    this.maxLiveVersion = s.version;
  }

  /** Stops copy-on-write for `s`. Idempotent. */
  removeLive(s: CopyOnWriteSnapshot): void {
    const i = this.live.indexOf(s);
    if (i < 0) return;
    this.live.splice(i, 1);
    this.maxLiveVersion = this.live.length > 0 ? this.live[this.live.length - 1].version : 0;
  }
}

/** `typeof`, with null and arrays named, for error messages. */
function describeType(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}
