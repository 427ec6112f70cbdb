/**
 * What the heap and lmdb backends share, written once: option checks, the state codec, the
 * handles (`ctx.state`) and the current key, the snapshot strategy (full or delta, decided at the
 * barrier: `incremental-chain.ts`), confirmation, and the restore loop over key-group chunks
 * (range filter, checkpoint order, summary). A backend supplies its core (where entries live),
 * how it takes a snapshot, and how it applies one decoded chunk.
 *
 * Used by one operator subtask on one thread: nothing here is thread-safe. `setCurrentKey` stays
 * in each backend: it is the per-record hot path, one direct call into the core.
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
} from '../api/functions.js';
import { msgpackValueOptions } from '../channels/msgpack-values.js';
import { StateAccessError } from '../errors.js';
import type { DirtyEpochs } from './dirty-epochs.js';
import type { StateHandles } from './handles/state-handles.js';
import { FULL_SNAPSHOTS, IncrementalChain, type SnapshotStrategy } from './incremental-chain.js';
import { type DecodedChunk, decodeKeyGroupChunk, type KeyGroupChunk } from './key-group-chunk.js';
import { type KeyGroupRange, UPPER_BOUND_MAX_PARALLELISM } from './key-groups.js';
import type {
  KeyedStateBackend,
  KeyedStateBackendOptions,
  KeyedStateRestoreSummary,
  KeyedStateSnapshot,
} from './keyed-state-backend.js';
import type { StateKind } from './state-entry.js';
import type { StateTable } from './state-table.js';

/** What the shared backend code reads of a backend's core. */
export interface BackendCore {
  readonly clock: () => number;
  readonly tables: Map<string, StateTable>;
  readonly dirtyEpochs: DirtyEpochs;
  /** The current key; meaningful only when `groupIndex >= 0`. */
  readonly currentKey: unknown;
  /** The current key's group index; −1 before the first `setCurrentKey`. */
  readonly groupIndex: number;
  table(name: string, kind: StateKind): StateTable;
}

export abstract class AbstractKeyedStateBackend<S extends KeyedStateSnapshot> implements KeyedStateBackend {
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  /** This backend's own codec (no shared module-level Packr). Plain msgpack, big bigints as an extension. */
  /** Sets stay Sets, functions are rejected (msgpack-values.ts; key-group-chunk names the state). */
  protected readonly packr = new Packr({
    useRecords: false,
    useBigIntExtension: true,
    ...msgpackValueOptions('a state value'),
  });
  /** Full or delta at each barrier; owns the chain of chunks a delta builds on. */
  protected readonly strategy: SnapshotStrategy;
  protected abstract readonly core: BackendCore;
  /** `ctx.state`: the handles by state name, scoped to the current key. */
  abstract readonly store: StateHandles;

  protected constructor(options: KeyedStateBackendOptions) {
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
    this.strategy = options.incremental ? new IncrementalChain(options.fullEvery) : FULL_SNAPSHOTS;
  }

  abstract setCurrentKey(key: unknown, knownKeyGroup?: number): void;

  /** The current key (undefined before the first `setCurrentKey`). */
  get currentKey(): unknown {
    return this.core.groupIndex < 0 ? undefined : this.core.currentKey;
  }

  /** The current key's key group, or −1 before the first `setCurrentKey`. */
  get currentKeyGroup(): number {
    return this.core.groupIndex < 0 ? -1 : this.core.groupIndex + this.keyGroupRange.start;
  }

  abstract get liveSnapshots(): number;

  value<T>(name: string, options?: StateOptions): ValueState<T> {
    return this.store.value<T>(name, options);
  }

  list<T>(name: string, options?: StateOptions): ListState<T> {
    return this.store.list<T>(name, options);
  }

  map<K, V>(name: string, options?: StateOptions): MapState<K, V> {
    return this.store.map<K, V>(name, options);
  }

  /** The reduce function of the first call for `name` is the one used. */
  reducing<T>(name: string, reduceFn: ReduceFunction<T>, options?: StateOptions): ReducingState<T> {
    return this.store.reducing(name, reduceFn, options);
  }

  /** The aggregate function of the first call for `name` is the one used. */
  aggregating<IN, ACC, OUT>(
    name: string,
    aggregateFunction: AggregateFunction<IN, ACC, OUT>,
    options?: StateOptions,
  ): AggregatingState<IN, OUT> {
    return this.store.aggregating(name, aggregateFunction, options);
  }

  /**
   * Synchronous part of a checkpoint, to run at the barrier, never O(keys). The returned snapshot
   * stays consistent with the state at this instant while records keep updating state; the
   * strategy has decided whether it is full or a delta.
   */
  snapshot(checkpointId: number): S {
    this.checkOpen();
    if (!Number.isFinite(checkpointId))
      throw new RangeError(`checkpointId must be a number, got ${checkpointId}`);
    return this.takeSnapshot(checkpointId, this.core.clock());
  }

  /** The backend's snapshot at `timestamp` (the backend clock at the barrier). */
  protected abstract takeSnapshot(checkpointId: number, timestamp: number): S;

  /**
   * Checkpoint `checkpointId` completed: a snapshot of it that was persisted becomes the base of
   * the next delta. Only needed for incremental snapshots; harmless otherwise.
   */
  notifyCheckpointComplete(checkpointId: number): void {
    this.strategy.confirm(checkpointId);
    this.core.dirtyEpochs.confirm(checkpointId);
  }

  /** The next snapshot is full (the snapshot strategy drops its base; `KeyedStateBackend.rebase`). */
  rebase(): void {
    this.strategy.rebase();
  }

  /**
   * Restores state from chunks of any number of old subtasks (any old parallelism with the same
   * maxParallelism), keeping only this backend's key groups. Order: for each key group, its full
   * chunk first, then its delta chunks in checkpoint order (e.g. every old subtask's full
   * snapshot, then every old subtask's first delta, ...). A full chunk replaces its key group; a
   * delta applies tombstones then upserts. Checksums are verified
   * (KeyGroupCorruptError/CorruptStateError naming the key group). Entries already expired by
   * the clock are dropped. Must run before any snapshot is taken; the next snapshot is full.
   *
   * `options.checkpointId` (default: the newest checkpoint applied) becomes the base of the next
   * delta.
   */
  restore(chunks: Iterable<KeyGroupChunk>, options?: { checkpointId?: number }): KeyedStateRestoreSummary {
    this.checkOpen();
    const core = this.core;
    if (this.liveSnapshots > 0)
      throw new StateAccessError('cannot restore keyed state while snapshots are live');
    this.beginRestore();
    const lastApplied = new Map<number, number>();
    let applied = 0;
    let skipped = 0;
    let newest: number | undefined;
    const now = core.clock();
    for (const chunk of chunks) {
      const kg = chunk.keyGroup;
      if (!(kg >= this.keyGroupRange.start && kg <= this.keyGroupRange.end)) {
        skipped++;
        continue;
      }
      const decoded = decodeKeyGroupChunk(this.packr, chunk);
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
      this.applyChunk(kg, kg - this.keyGroupRange.start, decoded, now);
    }
    this.endRestore();
    core.dirtyEpochs.reset(core.tables.values(), options?.checkpointId ?? newest);
    this.strategy.reset();
    return {
      appliedChunks: applied,
      skippedChunks: skipped,
      keyGroups: [...lastApplied.keys()].sort((a, b) => a - b),
      checkpointId: core.dirtyEpochs.lastConfirmedCheckpointId,
    };
  }

  /** Before the first chunk is applied. */
  protected beginRestore(): void {}

  /** Applies chunk `decoded` of key group `kg` (group index `g`); `now`: the clock at restore. */
  protected abstract applyChunk(kg: number, g: number, decoded: DecodedChunk, now: number): void;

  /** After the last chunk, before the dirty-key tracking is reset. */
  protected abstract endRestore(): void;

  /** The table of a restored section; a kind mismatch names the key group. */
  protected restoredTable(kg: number, name: string, kind: StateKind): StateTable {
    try {
      return this.core.table(name, kind);
    } catch (err) {
      throw new StateAccessError(`restore of key group ${kg}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** A restored value in its in-memory form; an undecodable one names key group and state. */
  protected restoredValue(kg: number, table: StateTable, wire: unknown): unknown {
    try {
      return table.fromWire(wire);
    } catch (err) {
      throw new StateAccessError(
        `restore of key group ${kg}, state '${table.name}': ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  }

  abstract keys(name: string): Iterable<unknown>;

  /** Names of all states registered or restored. */
  stateNames(): string[] {
    return [...this.core.tables.keys()];
  }

  abstract close(): Promise<void>;

  /** Throws once the backend is closed (backends whose close ends anything). */
  protected checkOpen(): void {}
}
