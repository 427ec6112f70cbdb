/**
 * The heap backend's layout for keyed state declared `{ type: 'number' }` (value and reducing
 * state): per key group, the keys in one array and the values in one `Float64Array` (slots), one
 * map over all groups from internal key to slot. No object per entry.
 *
 * Why: a full snapshot of the object layout walks one entry object, one key string and often one
 * heap number per key, scattered over the heap (~280–360 ns per entry at 1 M keys, most of it
 * cache misses and msgpackr's generic walk). A slot group is written by a direct msgpack writer
 * from contiguous arrays (`number-section-writer.ts`), and copy-on-write copies whole arrays.
 *
 * ## Copy-on-write per key group (same epochs as `heap-state-core.ts`)
 *
 * Each group records in `version` the epoch of its last change. A snapshot S (version v) reads
 * group g as: the copy it was given, if any; else the live arrays if `g.version <= v` (unchanged
 * since the barrier); else nothing (the group was created after the barrier). The first change of
 * a group in an epoch (`group.version !== epoch`) gives every live snapshot that still reads the
 * group and has `version >= group.version` one shared copy of its arrays (`copyForSnapshot`),
 * then sets `version = epoch`. So a group costs one array copy per epoch while a snapshot needs
 * it, and every later change in the epoch costs one comparison.
 *
 * ## Incremental tracking
 *
 * A slot changed in an epoch is listed once (`slotEpochs[s] !== epoch` → push) in the group's
 * `dirtySlots`; a removed key is listed in `removedKeys`. A delta writes each listed slot as the
 * snapshot sees it (an upsert if it holds a key then) and every removed key as a tombstone:
 * restore applies a section's tombstones before its upserts, so a key removed and inserted again
 * ends as an upsert, and a slot re-used by another key writes that key.
 */

import { ByteWriter } from '../msgpack-writer.js';

/** One key group of a number table. Slots `[0, count)`; a free slot has `keys[s] === undefined`. */
export class NumberSlotGroup {
  /** User key per slot (serialized as is). */
  keys: unknown[];
  /** Internal key per slot (the lookup map's key; see `internal-key.ts`). */
  internalKeys: unknown[];
  values: Float64Array;
  /** Expiry time per slot (tables with a TTL only). */
  expires: Float64Array | undefined;
  /** Epoch of each slot's last change (incremental tables only): one dirty push per slot and epoch. */
  slotEpochs: Uint32Array | undefined;
  /** High-water mark of used slots. */
  count = 0;
  /** Live keys. */
  size = 0;
  /** Freed slots, re-used by inserts. */
  readonly free: number[] = [];
  /** Epoch of the group's last change (see the module comment). */
  version: number;
  /**
   * Each slot's key as msgpack bytes, encoded once at insert (string and number keys; other keys
   * have `keyStart` −1 and are packed when written): bytes `[keyStart[s], keyEnd[s])` of
   * `keyArena.buf`. Append-only — a freed key's bytes stay until the arena is compacted into a new
   * buffer — so a snapshot's copy can share the buffer it saw. Why: the chunk writer then copies
   * contiguous bytes instead of reading one scattered key string per entry (~60 → ~20 ns per
   * entry at 1 M keys, bench/README.md "Number state").
   */
  keyArena = new ByteWriter(256);
  keyStart: Int32Array;
  keyEnd: Int32Array;
  /** Arena bytes of freed keys (compacted when more than half). */
  keyGarbage = 0;

  constructor(capacity: number, ttl: boolean, incremental: boolean, version: number) {
    this.keys = new Array(capacity);
    this.internalKeys = new Array(capacity);
    this.keyStart = new Int32Array(capacity);
    this.keyEnd = new Int32Array(capacity);
    this.values = new Float64Array(capacity);
    this.expires = ttl ? new Float64Array(capacity) : undefined;
    this.slotEpochs = incremental ? new Uint32Array(capacity) : undefined;
    this.version = version;
  }

  /** A free slot (re-used or appended; the arrays double when full). */
  allocate(): number {
    if (this.free.length > 0) return this.free.pop()!;
    const s = this.count;
    if (s === this.values.length) this.#grow(Math.max(16, s * 2));
    this.count = s + 1;
    return s;
  }

  /** The arena's current buffer (a snapshot reading the live group reads this). */
  get keyBytes(): Uint8Array {
    return this.keyArena.buf;
  }

  /** Stores `key` (internal key `ik`) in slot `s` and encodes its bytes into the arena. */
  setKey(s: number, key: unknown, ik: unknown): void {
    this.keys[s] = key;
    this.internalKeys[s] = ik;
    if (typeof key === 'string' || typeof key === 'number') {
      const a = this.keyArena;
      const start = a.p;
      if (typeof key === 'string') a.string(key);
      else a.number(key);
      this.keyStart[s] = start;
      this.keyEnd[s] = a.p;
    } else {
      this.keyStart[s] = -1;
    }
    this.size++;
  }

  /** Frees slot `s` (its key bytes become garbage); returns its user key. */
  freeSlot(s: number): unknown {
    const key = this.keys[s];
    this.keys[s] = undefined;
    this.internalKeys[s] = undefined;
    this.size--;
    this.free.push(s);
    if (this.keyStart[s] >= 0) {
      this.keyGarbage += this.keyEnd[s] - this.keyStart[s];
      if (this.keyGarbage > 4096 && this.keyGarbage * 2 > this.keyArena.p) this.#compactKeys();
    }
    return key;
  }

  /** Rewrites the live keys' bytes into a new arena (the old buffer stays as snapshots saw it). O(live keys). */
  #compactKeys(): void {
    const old = this.keyArena.buf;
    const next = new ByteWriter(Math.max(256, (this.keyArena.p - this.keyGarbage) * 2));
    for (let s = 0; s < this.count; s++) {
      if (this.keys[s] === undefined || this.keyStart[s] < 0) continue;
      const start = next.p;
      next.bytes(old.subarray(this.keyStart[s], this.keyEnd[s]));
      this.keyStart[s] = start;
      this.keyEnd[s] = next.p;
    }
    this.keyArena = next;
    this.keyGarbage = 0;
  }

  #grow(capacity: number): void {
    const keyStart = new Int32Array(capacity);
    keyStart.set(this.keyStart);
    this.keyStart = keyStart;
    const keyEnd = new Int32Array(capacity);
    keyEnd.set(this.keyEnd);
    this.keyEnd = keyEnd;
    const values = new Float64Array(capacity);
    values.set(this.values);
    this.values = values;
    if (this.expires !== undefined) {
      const expires = new Float64Array(capacity);
      expires.set(this.expires);
      this.expires = expires;
    }
    if (this.slotEpochs !== undefined) {
      const epochs = new Uint32Array(capacity);
      epochs.set(this.slotEpochs);
      this.slotEpochs = epochs;
    }
  }
}

/** What a snapshot reads of a group: a copy made at the first change after its barrier, or the live group. */
export interface NumberSlotView {
  readonly keys: readonly unknown[];
  /** Key bytes (see `NumberSlotGroup.keyArena`): `[keyStart[s], keyEnd[s])`, or packed when `keyStart[s] < 0`. */
  readonly keyBytes: Uint8Array;
  readonly keyStart: Int32Array;
  readonly keyEnd: Int32Array;
  readonly values: Float64Array;
  readonly expires: Float64Array | undefined;
  readonly count: number;
  /** Slots in `[0, count)` that hold a key. */
  readonly size: number;
}

/** An immutable copy of `g`'s slots (keys, values, expiry), for snapshots that still read it. O(count). */
export function copyForSnapshot(g: NumberSlotGroup): NumberSlotView {
  const n = g.count;
  return {
    keys: g.keys.slice(0, n),
    keyBytes: g.keyBytes,
    keyStart: g.keyStart.slice(0, n),
    keyEnd: g.keyEnd.slice(0, n),
    values: g.values.slice(0, n),
    expires: g.expires?.slice(0, n),
    count: n,
    size: g.size,
  };
}

/** One epoch's changes of one group (incremental). */
export interface SlotDirt {
  readonly slots: number[];
  readonly removedKeys: unknown[];
}

/** The slot storage of one state table declared `{ type: 'number' }` (heap backend). */
export class NumberSlotTable {
  /** Index = key group − range start. */
  readonly groups: (NumberSlotGroup | undefined)[];
  /** Internal key → slot in its group (the key's group is the current key's, known). */
  readonly index = new Map<unknown, number>();
  readonly ttl: boolean;
  readonly incremental: boolean;
  /** Changes of the current epoch by group index (incremental only); swapped out by each snapshot. */
  dirty: (SlotDirt | undefined)[];
  /** Σ of the current epoch's dirty slots and removed keys. */
  dirtyCount = 0;
  /** The current key's slot (−1: none), valid while `cachedStamp` equals the core's `keyStamp`. */
  cachedSlot = -1;
  cachedStamp = -1;

  constructor(groupCount: number, ttl: boolean, incremental: boolean) {
    this.groups = new Array(groupCount);
    this.dirty = new Array(groupCount);
    this.ttl = ttl;
    this.incremental = incremental;
  }

  /** Live keys over all groups. */
  get size(): number {
    return this.index.size;
  }

  /** The group at index `g`, created (empty, changed in `epoch`) on first use. */
  group(g: number, epoch: number): NumberSlotGroup {
    let grp = this.groups[g];
    if (grp === undefined) this.groups[g] = grp = new NumberSlotGroup(16, this.ttl, this.incremental, epoch);
    return grp;
  }

  /** Records that slot `s` of group `g` changed in `epoch` (once per slot and epoch). */
  markDirty(g: number, grp: NumberSlotGroup, s: number, epoch: number): void {
    const epochs = grp.slotEpochs!;
    if (epochs[s] === epoch) return;
    epochs[s] = epoch;
    const d = this.dirty[g];
    if (d === undefined) this.dirty[g] = { slots: [s], removedKeys: [] };
    else d.slots.push(s);
    this.dirtyCount++;
  }

  /** Records that `key` was removed from group `g` in the current epoch. */
  markRemoved(g: number, key: unknown): void {
    const d = this.dirty[g];
    if (d === undefined) this.dirty[g] = { slots: [], removedKeys: [key] };
    else d.removedKeys.push(key);
    this.dirtyCount++;
  }
}
