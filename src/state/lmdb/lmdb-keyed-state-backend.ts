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
 * Same API and per-type semantics as the heap backend (the state handles, options, snapshot
 * strategy and restore loop are shared: `abstract-keyed-state-backend.ts`), same chunk format, so a checkpoint written with one backend restores into
 * the other. Single-threaded, like the heap backend.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { encodeValue } from '../../channels/msgpack-values.js';
import { StateAccessError } from '../../errors.js';
import { AbstractKeyedStateBackend } from '../abstract-keyed-state-backend.js';
import { StateHandles } from '../handles/state-handles.js';
import { internalKeyOf } from '../internal-key.js';
import type { DecodedChunk } from '../key-group-chunk.js';
import type { KeyedStateBackendOptions } from '../keyed-state-backend.js';
import { groupPrefix, statePrefix } from './lmdb-key-codec.js';
import { LmdbKeyedStateSnapshot } from './lmdb-keyed-state-snapshot.js';
import { LmdbStateCore, type LmdbStateCounters } from './lmdb-state-core.js';

export interface LmdbKeyedStateBackendOptions extends KeyedStateBackendOptions {
  /** Parent directory of the environment's directory. Default: the OS temp dir. */
  readonly dir?: string;
  /** Dirty entries that force a write-back at the next record (each write-back is one LMDB write transaction; the barrier packs at most this many entries instead of writing them). Default 128. */
  readonly maxPendingWrites?: number;
  /** Cached entries beyond which the cache is dropped (after a write-back) at the next record. Default 65 536. */
  readonly maxCachedEntries?: number;
}

/** lmdb-js's default maximum key size (bytes) when the store does not report one. */
const DEFAULT_MAX_KEY_SIZE = 1978;

export class LmdbKeyedStateBackend extends AbstractKeyedStateBackend<LmdbKeyedStateSnapshot> {
  /** The environment's directory (removed by `close`). */
  readonly path: string;
  readonly #root: RootDatabase<Buffer, Buffer>;
  protected readonly core: LmdbStateCore;
  readonly store: StateHandles;
  #closing: Promise<void> | undefined;

  constructor(options: LmdbKeyedStateBackendOptions) {
    super(options);
    const maxPendingWrites = positive(options.maxPendingWrites, 128, 'maxPendingWrites');
    const maxCachedEntries = positive(options.maxCachedEntries, 65_536, 'maxCachedEntries');
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
        // Not useWritemap (1.10-1.74x the records/s in bench/README.md "lmdb state with
        // useWritemap"): lmdb-js 3.5.6's LMDB aborts the whole process with
        // `mdb.c:4146: Assertion 'x <= dl[0].mid' failed in mdb_freelist_save()` when a write
        // transaction commits "loose" pages (pages it dirtied, then freed: a tree emptied or
        // merged by removes, e.g. put then remove a key, or clearing many keys) and has not read
        // the freelist. With WRITEMAP this LMDB keeps no dirty list (a dummy), yet the commit
        // still looks each loose page up in it. A state backend must never take the process down
        // (issue lmdbcrash14; also lmdb-js issue 212, ModSecurity PR 3639).
        useWritemap: false,
      });
    } catch (error) {
      rmSync(this.path, { recursive: true, force: true });
      throw new StateAccessError(`cannot open the lmdb state backend in ${this.path}`, { cause: error });
    }
    const maxKeySize = (this.#root as unknown as { maxKeySize?: number }).maxKeySize ?? DEFAULT_MAX_KEY_SIZE;
    this.core = new LmdbStateCore(this.#root, this.packr, maxKeySize, {
      maxParallelism: this.maxParallelism,
      keyGroupRange: this.keyGroupRange,
      clock: options.clock ?? Date.now,
      incremental: options.incremental ?? false,
      operatorName: options.operatorName ?? 'keyed operator',
      maxPendingWrites,
      maxCachedEntries,
    });
    const core = this.core;
    this.store = new StateHandles(
      core,
      (name, kind) => core.table(name, kind),
      () => this.checkOpen(),
    );
  }

  setCurrentKey(key: unknown, knownKeyGroup = -1): void {
    this.checkOpen();
    this.core.setCurrentKey(key, knownKeyGroup);
  }

  /** Write-back counters (monotonic), plus the current backlog and cache size. */
  get counters(): Readonly<LmdbStateCounters & { pendingWrites: number; cachedEntries: number }> {
    return {
      ...this.core.counters,
      pendingWrites: this.core.pendingWrites,
      cachedEntries: this.core.cachedEntries,
    };
  }

  get liveSnapshots(): number {
    return this.core.live.size;
  }

  get closed(): boolean {
    return this.#closing !== undefined;
  }

  /**
   * Packs the pending writes (O(pending writes), bounded by `maxPendingWrites`); from then on
   * write-backs preserve the bytes they overwrite for the snapshot until it is released (or reads
   * their group): that image over LMDB is the state at the barrier. No write transaction at the
   * barrier; never O(state).
   */
  protected takeSnapshot(checkpointId: number, timestamp: number): LmdbKeyedStateSnapshot {
    const image = this.core.pendingImage();
    const begun = this.core.beginSnapshot(checkpointId);
    const snap = new LmdbKeyedStateSnapshot(
      this.core,
      this.strategy,
      checkpointId,
      timestamp,
      begun,
      image,
      (s) => this.core.live.delete(s),
    );
    this.core.live.add(snap);
    return snap;
  }

  protected override beginRestore(): void {
    this.core.flush();
    this.core.resetCache();
  }

  /** One LMDB write transaction per chunk; every section is checked first, so a bad chunk leaves its key group untouched. */
  protected applyChunk(kg: number, g: number, decoded: DecodedChunk, now: number): void {
    const core = this.core;
    const db = this.#root;
    const tables = decoded.sections.map(([name, kind, upserts]) => {
      const table = this.restoredTable(kg, name, kind);
      for (let i = 1; i < upserts.length; i += 3) this.restoredValue(kg, table, upserts[i]);
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

  protected endRestore(): void {
    this.core.epoch++;
  }

  /**
   * Keys with an unexpired entry in state `name`. Writes back pending writes first, then scans
   * one key group's range of that state at a time. O(keys of the state) plus O(key groups).
   */
  *keys(name: string): IterableIterator<unknown> {
    this.checkOpen();
    const core = this.core;
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

  /**
   * Ends live snapshots, closes the environment and deletes its directory. Idempotent; the
   * backend throws StateAccessError on any use afterwards.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const s of [...this.core.live]) s.release();
      try {
        await this.#root.close();
      } finally {
        rmSync(this.path, { recursive: true, force: true });
      }
    })();
    return this.#closing;
  }

  protected override checkOpen(): void {
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
