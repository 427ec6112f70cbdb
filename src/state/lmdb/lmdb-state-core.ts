/**
 * The mutable core of the lmdb keyed state backend: the current key, the state tables, and a
 * bounded write-back cache over one private LMDB environment.
 *
 * ## Write-back cache
 * - `table.groups[g]` (the same `StateTable` the heap backend uses) holds *cached* entries:
 *   loaded from LMDB on first access, negative entries (`removed`) for keys known to be absent,
 *   and entries written since the last flush (`dirty`). A touch (see `keyed-state-core.ts`)
 *   marks an entry dirty, so values that user code mutates in place are written back exactly as
 *   the heap backend would keep them (same handles, same touch rules).
 * - `flush()` writes every dirty entry in one synchronous LMDB write transaction: O(pending
 *   writes), no fsync (working state is not durable; checkpoints are). It never awaits anything,
 *   so the write backlog is bounded by `maxPendingWrites`, not by a queue in lmdb-js.
 * - The cache is dropped (after a flush) only in `setCurrentKey`, i.e. between records, when it
 *   holds more than `maxCachedEntries`: an object handed to user code for the current record is
 *   never evicted while that record may still mutate it.
 *
 * ## Snapshots
 * The barrier packs the pending writes without writing them (`pendingImage`, O(pending writes)):
 * no write transaction at the barrier (its commit was the largest step of the barrier's pause,
 * issue 14). While a snapshot is live, each write-back first hands it the stored bytes it is about
 * to overwrite (copy-on-write, `live`), so that image over LMDB stays exactly the state at the
 * barrier without a long-lived read transaction (which made every write-back allocate fresh pages,
 * see `lmdb-keyed-state-snapshot.ts`). Serialization reads one key group at a time, each in its
 * own short read transaction (key-group-prefixed keys, see `lmdb-key-codec.ts`).
 *
 * Incremental: like the heap core, keys touched per epoch are tracked in `table.dirty` and kept
 * until a later checkpoint is confirmed; a delta reads those keys from the snapshot's view.
 *
 * TTL: an expired entry is removed when the current key reads it; snapshots and `keys()` skip
 * expired entries without removing them (the view is read-only), so an expired entry of a key
 * that is never read again stays in LMDB, invisible, until the backend closes.
 */

import type { RootDatabase } from 'lmdb';
import type { Packr } from 'msgpackr';
import { encodeValue } from '../../channels/msgpack-values.js';
import { StateAccessError } from '../../errors.js';
import { type DirtyEpoch, DirtyEpochs, markDirty } from '../dirty-epochs.js';
import { setCurrentKeyFields } from '../internal-key.js';
import { stateNotSerializable } from '../key-group-chunk.js';
import type { KeyGroupRange } from '../key-groups.js';
import type { KeyedStateCore } from '../keyed-state-core.js';
import type { StateEntry, StateKind } from '../state-entry.js';
import { StateTable } from '../state-table.js';
import { encodeStateKey } from './lmdb-key-codec.js';

/** Pending writes as stored bytes (`undefined`: removed): group index → table → internal key → bytes. */
export type PendingImage = Map<number, Map<StateTable, Map<unknown, Buffer | undefined>>>;

/** A cached entry. */
export interface CachedEntry extends StateEntry {
  /** Changed since the last flush: written back by the next one. */
  dirty: boolean;
  /** Known absent (a negative cache entry, or removed since the last flush). */
  removed: boolean;
}

/** A live snapshot: keeps a key's barrier bytes before a write-back overwrites them (`LmdbKeyedStateSnapshot.preserve`). */
export interface BarrierPreserver {
  preserve(groupIndex: number, table: StateTable, internalKey: unknown, key: Buffer): void;
  /** Stops preserving (and leaves `live`). */
  release(): void;
}

interface PendingWrite {
  readonly table: StateTable;
  readonly groupIndex: number;
  readonly internalKey: unknown;
  readonly entry: CachedEntry;
}

export interface LmdbStateCoreOptions {
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  readonly clock: () => number;
  readonly incremental: boolean;
  readonly operatorName: string;
  readonly maxPendingWrites: number;
  readonly maxCachedEntries: number;
}

/** Counters for tests and the bench. Monotonic. */
export interface LmdbStateCounters {
  flushes: number;
  entriesFlushed: number;
  cacheMisses: number;
  cacheDrops: number;
}

export class LmdbStateCore implements KeyedStateCore {
  readonly maxParallelism: number;
  readonly range: KeyGroupRange;
  readonly clock: () => number;
  readonly incremental: boolean;
  readonly operatorName: string;
  readonly groupCount: number;
  readonly db: RootDatabase<Buffer, Buffer>;
  readonly packr: Packr;
  readonly maxKeySize: number;
  readonly maxPendingWrites: number;
  readonly maxCachedEntries: number;
  readonly tables = new Map<string, StateTable>();
  /** Table → state id in LMDB keys; `tablesById[id]` is the reverse. */
  readonly stateIds = new Map<StateTable, number>();
  readonly tablesById: StateTable[] = [];

  currentKey: unknown = undefined;
  internalKey: unknown = undefined;
  groupIndex = -1;

  /** Snapshot epoch (incremental change tracking: a key is marked once per epoch). */
  epoch = 1;
  /** Dirty epochs since the last confirmed checkpoint and the delta base (incremental only). */
  readonly dirtyEpochs = new DirtyEpochs();

  /** Live snapshots (the backend's only list of them): each write-back lets them keep the barrier bytes of what it overwrites. */
  readonly live = new Set<BarrierPreserver>();

  /** Entries to write back, in first-touch order. Invariant: exactly the cached entries with `dirty`. */
  #pending: PendingWrite[] = [];
  /** Entries in `table.groups` across all tables. */
  #cached = 0;
  readonly counters: LmdbStateCounters = { flushes: 0, entriesFlushed: 0, cacheMisses: 0, cacheDrops: 0 };

  constructor(db: RootDatabase<Buffer, Buffer>, packr: Packr, maxKeySize: number, o: LmdbStateCoreOptions) {
    this.db = db;
    this.packr = packr;
    this.maxKeySize = maxKeySize;
    this.maxParallelism = o.maxParallelism;
    this.range = o.keyGroupRange;
    this.clock = o.clock;
    this.incremental = o.incremental;
    this.operatorName = o.operatorName;
    this.maxPendingWrites = o.maxPendingWrites;
    this.maxCachedEntries = o.maxCachedEntries;
    this.groupCount = Math.max(0, o.keyGroupRange.end - o.keyGroupRange.start + 1);
  }

  get pendingWrites(): number {
    return this.#pending.length;
  }

  get cachedEntries(): number {
    return this.#cached;
  }

  /** As the heap core's; between records it also bounds the cache and the write backlog. */
  setCurrentKey(key: unknown, knownKeyGroup = -1): void {
    if (this.#pending.length >= this.maxPendingWrites || this.#cached >= this.maxCachedEntries) {
      this.flush();
      if (this.#cached >= this.maxCachedEntries) this.#dropCache();
    }
    if (this.groupIndex >= 0 && key === this.currentKey && typeof key !== 'object') return;
    setCurrentKeyFields(this, key, this.maxParallelism, this.range, this.operatorName, knownKeyGroup);
  }

  table(name: string, kind: StateKind): StateTable {
    let t = this.tables.get(name);
    if (t === undefined) {
      if (this.tablesById.length >= 0xffff) throw new StateAccessError('too many keyed states (65535)');
      t = new StateTable(name, kind, this.groupCount);
      this.tables.set(name, t);
      this.stateIds.set(t, this.tablesById.length);
      this.tablesById.push(t);
    } else if (t.kind !== kind) {
      throw new StateAccessError(
        `state '${name}' is ${t.kind} state; it cannot also be used as ${kind} state`,
      );
    }
    return t;
  }

  keyOf(table: StateTable, groupIndex: number, internalKey: unknown): Buffer {
    return encodeStateKey(
      this.range.start + groupIndex,
      this.stateIds.get(table)!,
      internalKey,
      this.maxKeySize,
      table.name,
    );
  }

  /** Decodes a stored value into `[userKey, value in memory form, expiresAt]`. */
  decode(table: StateTable, bytes: Uint8Array): [unknown, unknown, number] {
    const [key, wire, exp] = this.packr.unpack(bytes) as [unknown, unknown, number];
    return [key, table.fromWire(wire), exp === 0 ? Number.POSITIVE_INFINITY : exp];
  }

  find(table: StateTable): StateEntry | undefined {
    const g = this.groupIndex;
    if (g < 0) throw new StateAccessError(`keyed state '${table.name}' accessed with no current key`);
    let m = table.groups[g] as Map<unknown, CachedEntry> | undefined;
    let e = m?.get(this.internalKey);
    if (e === undefined) {
      this.counters.cacheMisses++;
      const bytes = this.db.getBinaryFast(this.keyOf(table, g, this.internalKey));
      if (m === undefined) table.groups[g] = m = new Map();
      if (bytes === undefined) {
        e = { key: this.currentKey, value: undefined, version: 0, expiresAt: 0, dirty: false, removed: true };
      } else {
        const [key, value, expiresAt] = this.decode(table, bytes);
        e = { key, value, version: 0, expiresAt, dirty: false, removed: false };
      }
      m.set(this.internalKey, e);
      this.#cached++;
    }
    if (e.removed) return undefined;
    if (e.expiresAt !== Number.POSITIVE_INFINITY && e.expiresAt <= this.clock()) {
      this.remove(table, e);
      return undefined;
    }
    return e;
  }

  touchForMutation(table: StateTable, e: StateEntry): void {
    this.#touch(table, e as CachedEntry);
  }

  touchForOverwrite(table: StateTable, e: StateEntry): void {
    this.#touch(table, e as CachedEntry);
  }

  expiresAt(table: StateTable): number {
    return table.ttlMs === undefined ? Number.POSITIVE_INFINITY : this.clock() + table.ttlMs;
  }

  insert(table: StateTable, value: unknown): StateEntry {
    const g = this.groupIndex;
    let m = table.groups[g] as Map<unknown, CachedEntry> | undefined;
    if (m === undefined) table.groups[g] = m = new Map();
    let e = m.get(this.internalKey);
    if (e === undefined) {
      e = { key: this.currentKey, value, version: 0, expiresAt: 0, dirty: false, removed: false };
      m.set(this.internalKey, e);
      this.#cached++;
    }
    // A negative entry is revived; its key becomes the current (equivalent) user key.
    (e as { key: unknown }).key = this.currentKey;
    e.value = value;
    e.removed = false;
    e.expiresAt = this.expiresAt(table);
    this.#touch(table, e);
    return e;
  }

  remove(table: StateTable, e: StateEntry): void {
    const c = e as CachedEntry;
    this.#touch(table, c);
    c.removed = true;
    c.value = undefined;
  }

  #touch(table: StateTable, e: CachedEntry): void {
    if (!e.dirty) {
      e.dirty = true;
      this.#pending.push({ table, groupIndex: this.groupIndex, internalKey: this.internalKey, entry: e });
    }
    if (this.incremental && e.version !== this.epoch) {
      e.version = this.epoch;
      markDirty(table, this.groupIndex, this.internalKey, e.key);
    }
  }

  /** Packs one stored entry keeping -0 and Maps (msgpack-values.ts); names the state if it cannot. */
  #packEntry(table: StateTable, entry: CachedEntry): Buffer {
    const exp = entry.expiresAt === Number.POSITIVE_INFINITY ? 0 : entry.expiresAt;
    try {
      return this.packr.pack(encodeValue([entry.key, table.toWire(entry.value), exp], true));
    } catch (e) {
      throw stateNotSerializable(table.name, this.operatorName, e);
    }
  }

  /**
   * Writes every dirty entry back in one synchronous write transaction (no fsync). Cached
   * entries stay cached (and clean), so objects user code holds remain the stored ones.
   * Cost: O(pending writes).
   */
  flush(): void {
    const pending = this.#pending;
    if (pending.length === 0) return;
    this.#pending = [];
    const live = this.live;
    this.db.transactionSync(() => {
      for (const { table, groupIndex, internalKey, entry } of pending) {
        entry.dirty = false;
        const key = this.keyOf(table, groupIndex, internalKey);
        if (live.size > 0) for (const s of live) s.preserve(groupIndex, table, internalKey, key);
        if (entry.removed) this.db.removeSync(key);
        // putSync inside transactionSync copies the bytes before the Packr buffer is reused.
        else this.db.putSync(key, this.#packEntry(table, entry));
      }
    });
    this.counters.flushes++;
    this.counters.entriesFlushed += pending.length;
  }

  /**
   * What a flush would write now, without writing it: each pending entry's stored bytes
   * (`undefined`: removed), by group index, table and internal key. The barrier takes this
   * instead of flushing, so its pause holds no LMDB write transaction (at 5 M keys that
   * write-back was the largest step of the pause, 0.5 ms median and up to 12 ms under load,
   * issue 14); the entries stay pending and the next write-back writes them as usual. O(pending writes), bounded by `maxPendingWrites`.
   */
  pendingImage(): PendingImage {
    const image: PendingImage = new Map();
    for (const { table, groupIndex, internalKey, entry } of this.#pending) {
      let byTable = image.get(groupIndex);
      if (byTable === undefined) image.set(groupIndex, (byTable = new Map()));
      let bytes = byTable.get(table);
      if (bytes === undefined) byTable.set(table, (bytes = new Map()));
      // A copy: the Packr reuses its buffer, and the entry may change after the barrier.
      bytes.set(internalKey, entry.removed ? undefined : Buffer.from(this.#packEntry(table, entry)));
    }
    return image;
  }

  #dropCache(): void {
    for (const t of this.tables.values()) t.groups.fill(undefined);
    this.#cached = 0;
    this.counters.cacheDrops++;
  }

  /** Drops the cache (restore writes LMDB directly). The caller flushed or discards pending writes. */
  resetCache(): void {
    this.#pending = [];
    this.#dropCache();
  }

  /** As the heap core's `beginSnapshot`, for incremental tracking. O(tables + pending epochs). */
  beginSnapshot(checkpointId: number): {
    baseCheckpointId: number | undefined;
    epochs: readonly DirtyEpoch[];
  } {
    const version = this.epoch;
    this.epoch = version + 1;
    if (!this.incremental) return { baseCheckpointId: undefined, epochs: [] };
    return this.dirtyEpochs.close(checkpointId, version, this.tables.values());
  }
}
