/**
 * The lmdb keyed state backend (`stateBackend: 'lmdb'`): keyed state lives in a private LMDB
 * environment, so it may exceed the JS heap; a bounded write-back cache keeps hot keys as JS
 * values (design and costs in `lmdb-state-core.ts`, snapshots in `lmdb-keyed-state-snapshot.ts`).
 *
 * Environment: one per backend instance (one keyed operator of one subtask), in a fresh
 * directory under `options.dir` (default: the OS temp dir), opened without fsync (working state
 * is rebuilt from checkpoints after a failure, never read back from this directory). `close()`
 * ends live snapshots, closes the environment and deletes the directory; the runtime awaits it
 * when the task ends, so no handle or file outlives the job.
 *
 * Same API and per-type semantics as {@link HeapKeyedStateBackend} (the state handles are
 * shared), same snapshot chunk format, so a checkpoint written with one backend restores into
 * the other. Single-threaded, like the heap backend.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
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
import { encodeValue, msgpackValueOptions } from '../../channels/msgpack-values.js';
import { StateAccessError } from '../../errors.js';
import { StateHandles } from '../handles/state-handles.js';
import { internalKeyOf } from '../internal-key.js';
import { decodeKeyGroupChunk, type KeyGroupChunk } from '../key-group-chunk.js';
import { type KeyGroupRange, UPPER_BOUND_MAX_PARALLELISM } from '../key-groups.js';
import type { KeyedStateBackend, KeyedStateRestoreSummary } from '../keyed-state-backend.js';
import type { StateTable } from '../state-table.js';
import { groupPrefix, statePrefix } from './lmdb-key-codec.js';
import { LmdbKeyedStateSnapshot } from './lmdb-keyed-state-snapshot.js';
import { LmdbStateCore, type LmdbStateCounters } from './lmdb-state-core.js';

export interface LmdbKeyedStateBackendOptions {
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  readonly clock?: () => number;
  /** Track changed keys for delta snapshots. Default false. */
  readonly incremental?: boolean;
  readonly operatorName?: string;
  /** Parent directory of the environment's directory. Default: the OS temp dir. */
  readonly dir?: string;
  /** Dirty entries that force a write-back at the next record (bounds the barrier's write-back, ~5–8 µs each: 128 keeps it under ~1 ms at 1 M keys). Default 128. */
  readonly maxPendingWrites?: number;
  /** Cached entries beyond which the cache is dropped (after a write-back) at the next record. Default 65 536. */
  readonly maxCachedEntries?: number;
}

/** lmdb-js's default maximum key size (bytes) when the store does not report one. */
const DEFAULT_MAX_KEY_SIZE = 1978;

export class LmdbKeyedStateBackend implements KeyedStateBackend {
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  /** The environment's directory (removed by `close`). */
  readonly path: string;
  readonly #root: RootDatabase<Buffer, Buffer>;
  readonly #core: LmdbStateCore;
  /** `ctx.state`: the handles by state name. */
  readonly #handles: StateHandles;
  readonly #live = new Set<LmdbKeyedStateSnapshot>();
  #closing: Promise<void> | undefined;

  constructor(options: LmdbKeyedStateBackendOptions) {
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
    const maxPendingWrites = positive(options.maxPendingWrites, 128, 'maxPendingWrites');
    const maxCachedEntries = positive(options.maxCachedEntries, 65_536, 'maxCachedEntries');
    this.maxParallelism = maxParallelism;
    this.keyGroupRange = { start: keyGroupRange.start, end: keyGroupRange.end };
    this.path = mkdtempSync(join(options.dir ?? tmpdir(), 'weir-state-'));
    try {
      this.#root = open<Buffer, Buffer>({
        path: this.path,
        encoding: 'binary',
        keyEncoding: 'binary',
        noSync: true,
        noMetaSync: true,
        overlappingSync: false,
        compression: false,
        cache: false,
      });
    } catch (error) {
      rmSync(this.path, { recursive: true, force: true });
      throw new StateAccessError(`cannot open the lmdb state backend in ${this.path}`, { cause: error });
    }
    const maxKeySize = (this.#root as unknown as { maxKeySize?: number }).maxKeySize ?? DEFAULT_MAX_KEY_SIZE;
    this.#core = new LmdbStateCore(
      this.#root,
      // Sets stay Sets, functions are rejected (msgpack-values.ts; key-group-chunk names the state).
      new Packr({ useRecords: false, useBigIntExtension: true, ...msgpackValueOptions('a state value') }),
      maxKeySize,
      {
        maxParallelism,
        keyGroupRange: this.keyGroupRange,
        clock: options.clock ?? Date.now,
        incremental: options.incremental ?? false,
        operatorName: options.operatorName ?? 'keyed operator',
        maxPendingWrites,
        maxCachedEntries,
      },
    );
    const core = this.#core;
    this.#handles = new StateHandles(
      core,
      (name, kind) => core.table(name, kind),
      () => this.#checkOpen(),
    );
  }

  setCurrentKey(key: unknown, knownKeyGroup = -1): void {
    this.#checkOpen();
    this.#core.setCurrentKey(key, knownKeyGroup);
  }

  get currentKey(): unknown {
    return this.#core.groupIndex < 0 ? undefined : this.#core.currentKey;
  }

  get currentKeyGroup(): number {
    return this.#core.groupIndex < 0 ? -1 : this.#core.groupIndex + this.keyGroupRange.start;
  }

  /** Write-back counters (monotonic), plus the current backlog and cache size. */
  get counters(): Readonly<LmdbStateCounters & { pendingWrites: number; cachedEntries: number }> {
    return {
      ...this.#core.counters,
      pendingWrites: this.#core.pendingWrites,
      cachedEntries: this.#core.cachedEntries,
    };
  }

  get liveSnapshots(): number {
    return this.#live.size;
  }

  get closed(): boolean {
    return this.#closing !== undefined;
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
   * Synchronous part of a checkpoint: writes back pending writes (O(pending writes), bounded by
   * `maxPendingWrites`) and opens a read transaction on the result. Never O(state).
   */
  snapshot(checkpointId: number): LmdbKeyedStateSnapshot {
    this.#checkOpen();
    if (!Number.isFinite(checkpointId))
      throw new RangeError(`checkpointId must be a number, got ${checkpointId}`);
    const timestamp = this.#core.clock();
    this.#core.flush();
    const begun = this.#core.beginSnapshot(checkpointId);
    const snap = new LmdbKeyedStateSnapshot(this.#core, checkpointId, timestamp, begun, (s) =>
      this.#live.delete(s),
    );
    this.#live.add(snap);
    return snap;
  }

  notifyCheckpointComplete(checkpointId: number): void {
    this.#core.dirtyEpochs.confirm(checkpointId);
  }

  /** As {@link HeapKeyedStateBackend.restore}; writes LMDB in one transaction per chunk. */
  restore(chunks: Iterable<KeyGroupChunk>, options?: { checkpointId?: number }): KeyedStateRestoreSummary {
    this.#checkOpen();
    const core = this.#core;
    if (this.#live.size > 0)
      throw new StateAccessError('cannot restore keyed state while snapshots are live');
    core.flush();
    core.resetCache();
    const lastApplied = new Map<number, number>();
    let applied = 0;
    let skipped = 0;
    let newest: number | undefined;
    const now = core.clock();
    const db = this.#root;
    for (const chunk of chunks) {
      const kg = chunk.keyGroup;
      if (!(kg >= this.keyGroupRange.start && kg <= this.keyGroupRange.end)) {
        skipped++;
        continue;
      }
      const decoded = decodeKeyGroupChunk(core.packr, chunk);
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
      // Check every section before writing, so a bad chunk leaves its key group untouched.
      const tables = decoded.sections.map(([name, kind, upserts]) => {
        let table: StateTable;
        try {
          table = core.table(name, kind);
        } catch (err) {
          throw new StateAccessError(`restore of key group ${kg}: ${(err as Error).message}`, { cause: err });
        }
        for (let i = 1; i < upserts.length; i += 3) {
          try {
            table.fromWire(upserts[i]);
          } catch (err) {
            throw new StateAccessError(
              `restore of key group ${kg}, state '${name}': ${(err as Error).message}`,
              {
                cause: err,
              },
            );
          }
        }
        return table;
      });
      db.transactionSync(() => {
        if (decoded.kind === 'full') {
          for (const key of db.getKeys({ start: groupPrefix(kg), end: groupPrefix(kg + 1) }))
            db.removeSync(key);
        }
        decoded.sections.forEach(([, , upserts, tombstones], s) => {
          const table = tables[s];
          for (const key of tombstones) db.removeSync(core.keyOf(table, g, internalKeyOf(key)));
          for (let i = 0; i < upserts.length; i += 3) {
            const key = upserts[i];
            const exp = upserts[i + 2] as number;
            const lmdbKey = core.keyOf(table, g, internalKeyOf(key));
            if (exp !== 0 && exp <= now) db.removeSync(lmdbKey);
            else db.putSync(lmdbKey, core.packr.pack(encodeValue([key, upserts[i + 1], exp], true)));
          }
        });
      });
    }
    core.epoch++;
    core.dirtyEpochs.reset(core.tables.values(), options?.checkpointId ?? newest);
    return {
      appliedChunks: applied,
      skippedChunks: skipped,
      keyGroups: [...lastApplied.keys()].sort((a, b) => a - b),
      checkpointId: core.dirtyEpochs.lastConfirmedCheckpointId,
    };
  }

  /**
   * Keys with an unexpired entry in state `name`. Writes back pending writes first, then scans
   * one key group's range of that state at a time. O(keys of the state) plus O(key groups).
   */
  *keys(name: string): IterableIterator<unknown> {
    this.#checkOpen();
    const core = this.#core;
    const table = core.tables.get(name);
    if (table === undefined) return;
    core.flush();
    const id = core.stateIds.get(table)!;
    const now = core.clock();
    for (let kg = this.keyGroupRange.start; kg <= this.keyGroupRange.end; kg++) {
      const keys: unknown[] = [];
      for (const { value } of this.#root.getRange({
        start: statePrefix(kg, id),
        end: statePrefix(kg, id + 1),
      })) {
        const [key, , exp] = core.packr.unpack(value) as [unknown, unknown, number];
        if (exp === 0 || exp > now) keys.push(key);
      }
      yield* keys;
    }
  }

  stateNames(): string[] {
    return [...this.#core.tables.keys()];
  }

  /**
   * Ends live snapshots, closes the environment and deletes its directory. Idempotent; the
   * backend throws StateAccessError on any use afterwards.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const s of [...this.#live]) s.release();
      try {
        await this.#root.close();
      } finally {
        rmSync(this.path, { recursive: true, force: true });
      }
    })();
    return this.#closing;
  }

  #checkOpen(): void {
    if (this.#closing !== undefined) throw new StateAccessError('the lmdb state backend is closed');
  }
}

function positive(value: number | undefined, fallback: number, option: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${option} must be a positive integer, got ${String(value)}`);
  }
  return value;
}
