/**
 * A StateTable holds every key's entry of one named keyed state, partitioned by key group:
 * the heap backend's storage is key group → state name → key → entry, and a table is the
 * "state name" level seen from the side of its handle (a handle reaches its entries with one
 * array index and one `Map` lookup).
 */

import { copyValue } from './copy-value.js';
import { MapStateValue } from './handles/map-state-value.js';
import type { NumberSlotTable } from './heap/number-slots.js';
import type { StateEntry, StateKind } from './state-entry.js';

export class StateTable {
  readonly name: string;
  readonly kind: StateKind;
  /** TTL of this state in ms, or undefined. Set by the handle that registers the state. */
  ttlMs: number | undefined;
  /** Live entries: index = key group − range start, then internal key → entry. */
  readonly groups: (Map<unknown, StateEntry> | undefined)[];
  /**
   * Heap backend only: the same entries as `groups`, all groups in one map, internal key → entry.
   * The per-record lookup probes this one map; `groups` stays the per-group view that snapshots,
   * restore and `keys()` walk. Invariant (heap core): `index` holds exactly the entries of
   * `groups` — insert and remove update both, restore rebuilds it (`rebuildIndex`). Why: probing
   * one map over all groups cost ~0.6× the CPU of probing 128 per-group maps in the keyed task's
   * loop (bench/pipeline/keyed-path.ts; a key's group is known, but 128 small tables spread the
   * probes over more cache lines). Costs one more map entry per key and a second `set`/`delete`
   * on insert and remove.
   */
  readonly index = new Map<unknown, StateEntry>();
  /**
   * lmdb backend, incremental only: keys first touched in the current epoch, group index →
   * internal key → user key. Swapped out, O(1), by each snapshot (`dirty-epochs.ts`).
   */
  dirty: Map<number, Map<unknown, unknown>> = new Map();
  /**
   * Heap backend, incremental only: the entries first touched in the current epoch, by group
   * index (one push per entry per epoch, `markDirtyEntry`). Swapped out by each snapshot.
   */
  dirtyEntries: (StateEntry[] | undefined)[];
  /** Σ of `dirtyEntries`' lengths. */
  dirtyEntryCount = 0;
  /**
   * The current key's entry (undefined: none), valid while `cachedStamp` equals the owning core's
   * `keyStamp`: a record's second and later accesses to this state skip the `Map` lookup. The
   * core keeps it right on insert and remove of the current key, and bumps its stamp on every key
   * switch and bulk change (restore), which invalidates every table's cache at once.
   */
  cachedEntry: StateEntry | undefined = undefined;
  cachedStamp = -1;
  /**
   * Heap backend, state declared `{ type: 'number' }`: its keys and values live in number slots
   * (`heap/number-slots.ts`) instead of entries. Entries of such a table exist only as restored
   * before the declaration (moved into slots by it) and as their tombstones.
   */
  slots: NumberSlotTable | undefined = undefined;

  constructor(name: string, kind: StateKind, groupCount: number) {
    this.name = name;
    this.kind = kind;
    this.groups = new Array(groupCount);
    this.dirtyEntries = new Array(groupCount);
  }

  /** Rebuilds `index` from `groups`. O(entries); after a bulk change of `groups` (restore). */
  rebuildIndex(): void {
    this.index.clear();
    for (const m of this.groups) {
      if (m === undefined) continue;
      for (const [internalKey, e] of m) this.index.set(internalKey, e);
    }
  }

  /** Deep copy of a value in this kind's in-memory form. Cost: O(size of the value). */
  copyValue(value: unknown): unknown {
    return this.kind === 'map' ? (value as MapStateValue).copy() : copyValue(value);
  }

  /** Plain-data form of a value for msgpack. Cost: O(1), except map state: O(entries). */
  toWire(value: unknown): unknown {
    return this.kind === 'map' ? (value as MapStateValue).toWire() : value;
  }

  fromWire(wire: unknown): unknown {
    if (this.kind === 'map') {
      if (!Array.isArray(wire)) throw new TypeError('map state value is not an array');
      return MapStateValue.fromWire(wire);
    }
    if (this.kind === 'list' && !Array.isArray(wire)) throw new TypeError('list state value is not an array');
    return wire;
  }
}
