/**
 * The heap keyed state backend: keyed state in JS maps, organised key group → state name → key,
 * snapshotted copy-on-write (see `heap-state-core.ts` for the design and its costs).
 *
 * Used by one operator subtask on one thread: nothing here is thread-safe, and the runtime calls
 * `setCurrentKey` before running user code for a record, `snapshot` at the barrier, and
 * `serialize`/`release` on the snapshot afterwards (asynchronously, interleaved with records).
 */

import { Packr } from 'msgpackr';
import type {
  AggregateFunction,
  AggregatingState,
  ListState,
  MapState,
  ReduceFunction,
  ReducingState,
  StateOptions,
  ValueState,
} from '../../api/functions.js';
import { msgpackValueOptions } from '../../channels/msgpack-values.js';
import { StateAccessError } from '../../errors.js';
import { StateHandles } from '../handles/state-handles.js';
import { internalKeyOf } from '../internal-key.js';
import { decodeKeyGroupChunk, type KeyGroupChunk } from '../key-group-chunk.js';
import { type KeyGroupRange, UPPER_BOUND_MAX_PARALLELISM } from '../key-groups.js';
import type { KeyedStateBackend, KeyedStateRestoreSummary } from '../keyed-state-backend.js';
import type { StateEntry } from '../state-entry.js';
import type { StateTable } from '../state-table.js';
import { HeapKeyedStateSnapshot } from './heap-keyed-state-snapshot.js';
import { type CopyOnWriteCounters, HeapStateCore } from './heap-state-core.js';

export interface HeapKeyedStateBackendOptions {
  /** Number of key groups; must match the partitioner's. 1..32768. */
  readonly maxParallelism: number;
  /** The key groups this subtask owns (inclusive bounds; `end < start` is an empty range). */
  readonly keyGroupRange: KeyGroupRange;
  /** Clock for TTL, ms. Default `Date.now`. Expiry times are absolute and survive restore. */
  readonly clock?: () => number;
  /**
   * Track changed keys so snapshots can serialize a delta. Costs one set insertion per key and
   * epoch on the hot path, and memory for the keys changed since the last confirmed checkpoint
   * (`notifyCheckpointComplete`). Default false.
   */
  readonly incremental?: boolean;
  /** Operator name for error messages. */
  readonly operatorName?: string;
}

export type { KeyedStateRestoreSummary } from '../keyed-state-backend.js';

export class HeapKeyedStateBackend implements KeyedStateBackend {
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  readonly #core: HeapStateCore;
  /** This backend's own codec (no shared module-level Packr). Plain msgpack, big bigints as an extension. */
  /** Sets stay Sets, functions are rejected (msgpack-values.ts; key-group-chunk names the state). */
  readonly #packr = new Packr({
    useRecords: false,
    useBigIntExtension: true,
    ...msgpackValueOptions('a state value'),
  });
  /** `ctx.state`: the handles by state name. */
  readonly #handles: StateHandles;

  constructor(options: HeapKeyedStateBackendOptions) {
    const { maxParallelism, keyGroupRange } = options;
    if (
      !Number.isInteger(maxParallelism) ||
      maxParallelism < 1 ||
      maxParallelism > UPPER_BOUND_MAX_PARALLELISM
    ) {
      throw new RangeError(
        `maxParallelism must be an integer in [1, ${UPPER_BOUND_MAX_PARALLELISM}], got ${maxParallelism}`,
      );
    }
    if (
      !Number.isInteger(keyGroupRange?.start) ||
      !Number.isInteger(keyGroupRange?.end) ||
      keyGroupRange.start < 0 ||
      (keyGroupRange.end >= keyGroupRange.start && keyGroupRange.end >= maxParallelism)
    ) {
      throw new RangeError(
        `keyGroupRange must lie within [0, ${maxParallelism - 1}], got ${JSON.stringify(keyGroupRange)}`,
      );
    }
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw new TypeError('clock must be a function returning ms');
    }
    this.maxParallelism = maxParallelism;
    this.keyGroupRange = { start: keyGroupRange.start, end: keyGroupRange.end };
    this.#core = new HeapStateCore({
      maxParallelism,
      keyGroupRange: this.keyGroupRange,
      clock: options.clock ?? Date.now,
      incremental: options.incremental ?? false,
      operatorName: options.operatorName ?? 'keyed operator',
    });
    const core = this.#core;
    this.#handles = new StateHandles(core, (name, kind) => core.table(name, kind));
  }

  /** Sets the key every handle reads and writes; computes its key group once per key switch. */
  setCurrentKey(key: unknown, knownKeyGroup = -1): void {
    this.#core.setCurrentKey(key, knownKeyGroup);
  }

  /** The current key (undefined before the first `setCurrentKey`). */
  get currentKey(): unknown {
    return this.#core.groupIndex < 0 ? undefined : this.#core.currentKey;
  }

  /** The current key's key group, or −1 before the first `setCurrentKey`. */
  get currentKeyGroup(): number {
    return this.#core.groupIndex < 0 ? -1 : this.#core.groupIndex + this.keyGroupRange.start;
  }

  /** Copy-on-write work counters (monotonic). */
  get counters(): Readonly<CopyOnWriteCounters> {
    return this.#core.counters;
  }

  /** Number of snapshots not yet released. */
  get liveSnapshots(): number {
    return this.#core.live.length;
  }

  value<T>(name: string, options?: StateOptions): ValueState<T> {
    return this.#handles.value<T>(name, options);
  }

  list<T>(name: string, options?: StateOptions): ListState<T> {
    return this.#handles.list<T>(name, options);
  }

  map<K, V>(name: string, options?: StateOptions): MapState<K, V> {
    return this.#handles.map<K, V>(name, options);
  }

  /** The reduce function of the first call for `name` is the one used. */
  reducing<T>(name: string, reduceFn: ReduceFunction<T>, options?: StateOptions): ReducingState<T> {
    return this.#handles.reducing(name, reduceFn, options);
  }

  /** The aggregate function of the first call for `name` is the one used. */
  aggregating<IN, ACC, OUT>(
    name: string,
    aggregateFunction: AggregateFunction<IN, ACC, OUT>,
    options?: StateOptions,
  ): AggregatingState<IN, OUT> {
    return this.#handles.aggregating(name, aggregateFunction, options);
  }

  /**
   * Synchronous part of a checkpoint, to run at the barrier: O(number of state names), never
   * O(keys). The returned snapshot stays consistent with the state at this instant while records
   * keep updating state; serialize it, then release it.
   */
  snapshot(checkpointId: number): HeapKeyedStateSnapshot {
    if (!Number.isFinite(checkpointId))
      throw new RangeError(`checkpointId must be a number, got ${checkpointId}`);
    const timestamp = this.#core.clock();
    const begun = this.#core.beginSnapshot(checkpointId);
    const snap = new HeapKeyedStateSnapshot(this.#core, this.#packr, checkpointId, timestamp, begun);
    this.#core.addLive(snap);
    return snap;
  }

  /**
   * Checkpoint `checkpointId` completed: the next deltas are relative to it. Only needed for
   * incremental snapshots; harmless otherwise.
   */
  notifyCheckpointComplete(checkpointId: number): void {
    this.#core.dirtyEpochs.confirm(checkpointId);
  }

  /**
   * Restores state from chunks of any number of old subtasks (any old parallelism with the same
   * maxParallelism), keeping only this backend's key groups. Order: for each key group, its full
   * chunk first, then its delta chunks in checkpoint order (e.g. every old subtask's full
   * snapshot, then every old subtask's first delta, ...). A full chunk replaces its key group; a
   * delta applies tombstones then upserts. Checksums are verified
   * (KeyGroupCorruptError/CorruptStateError naming the key group). Entries already expired by
   * the clock are dropped. Must run before any snapshot is taken.
   *
   * `options.checkpointId` (default: the newest checkpoint applied) becomes the base of the next
   * delta.
   */
  restore(chunks: Iterable<KeyGroupChunk>, options?: { checkpointId?: number }): KeyedStateRestoreSummary {
    const core = this.#core;
    if (core.live.length > 0)
      throw new StateAccessError('cannot restore keyed state while snapshots are live');
    const lastApplied = new Map<number, number>();
    let applied = 0;
    let skipped = 0;
    let newest: number | undefined;
    const now = core.clock();
    // Restored entries belong to a closed epoch, so the next touch of each is a first touch.
    const version = core.epoch;
    for (const chunk of chunks) {
      const kg = chunk.keyGroup;
      if (!(kg >= this.keyGroupRange.start && kg <= this.keyGroupRange.end)) {
        skipped++;
        continue;
      }
      const decoded = decodeKeyGroupChunk(this.#packr, chunk);
      const prev = lastApplied.get(kg);
      if (prev !== undefined && decoded.checkpointId <= prev) {
        throw new StateAccessError(
          `restore of key group ${kg}: chunk of checkpoint ${decoded.checkpointId} after checkpoint ${prev}; ` +
            'chunks must come in checkpoint order',
        );
      }
      lastApplied.set(kg, decoded.checkpointId);
      newest = newest === undefined ? decoded.checkpointId : Math.max(newest, decoded.checkpointId);
      applied++;
      const g = kg - this.keyGroupRange.start;
      if (decoded.kind === 'full') for (const t of core.tables.values()) t.groups[g] = undefined;
      for (const [name, kind, upserts, tombstones] of decoded.sections) {
        let table: StateTable;
        try {
          table = core.table(name, kind);
        } catch (err) {
          throw new StateAccessError(`restore of key group ${kg}: ${(err as Error).message}`, { cause: err });
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
          let value: unknown;
          try {
            value = table.fromWire(upserts[i + 1]);
          } catch (err) {
            throw new StateAccessError(
              `restore of key group ${kg}, state '${name}': ${(err as Error).message}`,
              {
                cause: err,
              },
            );
          }
          m.set(ik, { key, value, version, expiresAt });
        }
        if (m.size === 0) table.groups[g] = undefined;
      }
    }
    core.epoch = version + 1;
    core.invalidateKeyCache();
    core.dirtyEpochs.reset(core.tables.values(), options?.checkpointId ?? newest);
    return {
      appliedChunks: applied,
      skippedChunks: skipped,
      keyGroups: [...lastApplied.keys()].sort((a, b) => a - b),
      checkpointId: core.dirtyEpochs.lastConfirmedCheckpointId,
    };
  }

  /**
   * Keys that have a (non-expired) entry in state `name`, in no particular order. O(keys); for
   * tests, tools and operators that must visit all keys. Does not change the current key.
   */
  *keys(name: string): IterableIterator<unknown> {
    const table = this.#core.tables.get(name);
    if (table === undefined) return;
    const now = this.#core.clock();
    for (const m of table.groups) {
      if (m === undefined) continue;
      for (const e of m.values()) if (e.expiresAt > now) yield e.key;
    }
  }

  /** Names of all states registered or restored. */
  stateNames(): string[] {
    return [...this.#core.tables.keys()];
  }

  /** Nothing to release: state lives in JS memory. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
