/**
 * CheckpointStorage: one job's checkpoint directory on LMDB (layout and invariants in
 * `storage-layout.ts`). Content-agnostic: state backends hand it opaque byte chunks.
 *
 * One file of ~600 lines on purpose: every method is a transaction over the same four
 * sub-databases, and the refcount invariant is kept by commit, discard and cleanup together;
 * splitting them would spread one invariant over several files. Pure parts live elsewhere
 * (metadata codec, verification types, restore selection, CLI description, byte budget).
 *
 * Roles. Every task (worker thread) opens its own handle and writes its chunks with
 * {@link CheckpointStorage.writeChunks}; the coordinator (main thread) opens another and commits
 * metadata with {@link CheckpointStorage.commitCheckpoint} once every task acknowledged; restore
 * (possibly in a later process) opens one and calls {@link CheckpointStorage.findRestorable}.
 *
 * Thread safety. A handle belongs to the thread that opened it (it is not transferable and not
 * meant to be shared through `SharedArrayBuffer` tricks). Any number of handles, in any threads
 * of any processes, may have the same directory open at once: LMDB serialises write
 * transactions with a process-shared robust mutex (a process killed while holding it does not
 * wedge the others) and gives readers MVCC snapshots. Within one process lmdb-js shares one
 * native environment per path between threads and reference-counts it, so `close()` in one
 * thread releases only that thread's handle.
 *
 * Durability. Every write promise resolves only after its LMDB transaction is fsynced
 * (`overlappingSync: false`), so a resolved `writeChunks` means the chunks survive a crash and
 * a resolved `commitCheckpoint` means the checkpoint exists.
 *
 * Crash safety. A checkpoint becomes visible in exactly one transaction, the one that writes
 * its metadata together with the refcounts of the chunks it references, and only after every
 * chunk it references is durable (commit checks that they exist inside that transaction). A
 * process killed at any point therefore leaves either no metadata (chunks written so far are
 * orphans, invisible to every listing and removed by `cleanup`) or the whole checkpoint. LMDB
 * itself never exposes a half-committed transaction.
 *
 * Reads are synchronous (LMDB reads are memory-mapped and never block on a lock); each public
 * read first renews the thread's read snapshot so it sees commits made by other threads.
 */

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Database, type Key, open, type RootDatabase, type Transaction } from 'lmdb';
import { CheckpointDeclinedError, CheckpointStorageError, CorruptStateError } from '../../errors.js';
import { ByteBudget } from './byte-budget.js';
import {
  type CheckpointMetadata,
  checkMetadata,
  decodeMetadata,
  encodeMetadata,
  referencedChunks,
} from './checkpoint-metadata.js';
import type { CheckpointVerification, ChunkVerification } from './checkpoint-verification.js';
import { checksumOf } from './checksum.js';
import {
  type ChunkHandle,
  type ChunkInput,
  type ChunkOwner,
  checkCheckpointId,
  checkChunkInput,
  checkOwner,
  checkpointIdOfChunk,
  chunkIdFor,
  chunkIdPrefix,
} from './chunk-handle.js';
import { type CheckpointDescription, describeCheckpoint } from './describe-checkpoint.js';
import { checkLmdbDataFile } from './lmdb-data-file.js';
import { type RestoreSelection, selectRestorable } from './select-restorable.js';
import {
  DATA_FILE,
  DB_CHUNKS,
  DB_INFO,
  DB_METADATA,
  DB_REFCOUNTS,
  environmentOptions,
  INFO_FORMAT,
  INFO_HIGHEST_CHECKPOINT_ID,
  STORAGE_FORMAT_VERSION,
} from './storage-layout.js';

export interface CheckpointStorageOptions {
  /** Create the directory and an empty store when there is none (default `true`); tools pass `false`. */
  readonly create?: boolean;
  /**
   * Check `data.mdb` against its meta pages before mapping it (`lmdb-data-file.ts`), so that a
   * truncated file is a CheckpointFileDamagedError instead of a SIGBUS. Default `true`; tasks pass
   * `false` for a directory their job's coordinator already checked (a check concurrent with
   * commits of other threads could only cost, never find more).
   */
  readonly validateDataFile?: boolean;
  /** Chunks are written in LMDB transactions of at most this many bytes (one oversized chunk goes alone). Default 4 MiB. */
  readonly maxBatchBytes?: number;
  /** Bytes this handle may have queued and not yet durable; `writeChunks` waits beyond it. Default 32 MiB. */
  readonly maxInFlightBytes?: number;
}

export type CommitOutcome =
  | { readonly state: 'committed'; readonly checkpointId: number }
  /** Metadata for this id was already committed; nothing was written. */
  | { readonly state: 'duplicate'; readonly checkpointId: number }
  /** Some referenced chunks do not exist (never written, or discarded); nothing was written. Decline the checkpoint. */
  | { readonly state: 'missing-chunks'; readonly checkpointId: number; readonly missing: readonly string[] };

export type DiscardOutcome =
  | {
      readonly state: 'discarded';
      readonly checkpointId: number;
      /** Chunks no other committed checkpoint referenced, deleted with it. */
      readonly deletedChunks: number;
      readonly freedBytes: number;
      /**
       * The metadata was corrupt, so its references were unknown: the refcounts were rebuilt
       * from the remaining readable metadata and its chunks became orphans for `cleanup`.
       */
      readonly refcountsRebuilt: boolean;
    }
  | { readonly state: 'unknown'; readonly checkpointId: number };

export interface CleanupResult {
  readonly deletedChunks: number;
  readonly freedBytes: number;
}

/** One row of `weir checkpoints DIR`. */
export type CheckpointListing =
  | ({ readonly state: 'readable' } & CheckpointDescription)
  | { readonly state: 'metadata-corrupt'; readonly checkpointId: number; readonly reason: string };

const DEFAULT_MAX_BATCH_BYTES = 4 * 1024 * 1024;
const DEFAULT_MAX_IN_FLIGHT_BYTES = 32 * 1024 * 1024;
/** Chunks deleted per transaction in `cleanup`, so one cleanup never holds the write lock for long. */
const CLEANUP_BATCH = 512;

export class CheckpointStorage {
  readonly dir: string;
  readonly #root: RootDatabase;
  readonly #chunks: Database<Buffer, string>;
  readonly #metadata: Database<Buffer, number>;
  readonly #refcounts: Database<number, string>;
  readonly #info: Database<number, string>;
  readonly #maxBatchBytes: number;
  /** Bounds this handle's queued-but-not-durable chunk bytes (see `writeChunks`). */
  readonly #budget: ByteBudget;
  /** Set once by `close()`; every operation checks it first. */
  #closing: Promise<void> | undefined;
  /**
   * This handle's LMDB writes not yet settled; `close()` waits for them. lmdb-js refuses writes
   * after `close()` only on the root database: a put on a sub-database queued later would run
   * against the closed environment (an uncaught error from lmdb-js's commit timer, and a fatal
   * process abort if the thread is being terminated then).
   */
  readonly #writes = new Set<Promise<unknown>>();

  private constructor(dir: string, root: RootDatabase, maxBatchBytes: number, maxInFlightBytes: number) {
    this.dir = dir;
    this.#root = root;
    this.#chunks = root.openDB<Buffer, string>({ name: DB_CHUNKS, encoding: 'binary' });
    this.#metadata = root.openDB<Buffer, number>({ name: DB_METADATA, encoding: 'binary' });
    this.#refcounts = root.openDB<number, string>({ name: DB_REFCOUNTS, encoding: 'ordered-binary' });
    this.#info = root.openDB<number, string>({ name: DB_INFO, encoding: 'ordered-binary' });
    this.#maxBatchBytes = maxBatchBytes;
    this.#budget = new ByteBudget(maxInFlightBytes);
  }

  /**
   * Opens (creating unless `create: false`) the store in `dir`. Synchronous; the first open of
   * a new directory performs one small durable write (the format marker).
   * @throws CheckpointStorageError when the directory cannot be opened or has another format;
   *   CheckpointFileDamagedError when `data.mdb` is shorter than its meta page says (checked before
   *   the file is mapped).
   */
  static open(dir: string, options: CheckpointStorageOptions = {}): CheckpointStorage {
    if (typeof dir !== 'string' || dir.length === 0) throw new TypeError('dir must be a non-empty string');
    const create = options.create ?? true;
    const maxBatchBytes = positiveInteger(options.maxBatchBytes, DEFAULT_MAX_BATCH_BYTES, 'maxBatchBytes');
    const maxInFlightBytes = positiveInteger(
      options.maxInFlightBytes,
      DEFAULT_MAX_IN_FLIGHT_BYTES,
      'maxInFlightBytes',
    );
    const dataFile = join(dir, DATA_FILE);
    if (!existsSync(dataFile)) {
      if (!create) throw new CheckpointStorageError(`no checkpoint storage in ${dir}`);
      mkdirSync(dir, { recursive: true });
    } else if (options.validateDataFile ?? true) {
      // Before lmdb maps it: a truncated file would be a SIGBUS, not an error.
      checkLmdbDataFile(dataFile);
    }
    let root: RootDatabase;
    try {
      root = open(environmentOptions(dir));
    } catch (cause) {
      throw new CheckpointStorageError(`cannot open checkpoint storage in ${dir}`, { cause });
    }
    try {
      const storage = new CheckpointStorage(dir, root, maxBatchBytes, maxInFlightBytes);
      storage.#checkFormat(create);
      return storage;
    } catch (error) {
      // Close before rethrowing, or this thread keeps a reference on the shared environment.
      void root.close();
      if (error instanceof CheckpointStorageError) throw error;
      throw new CheckpointStorageError(`cannot open checkpoint storage in ${dir}`, { cause: error });
    }
  }

  #checkFormat(create: boolean): void {
    const format = this.#info.get(INFO_FORMAT);
    if (format === undefined) {
      if (!create) throw new CheckpointStorageError(`${this.dir} is not a weir checkpoint directory`);
      // Racing first opens from several threads write the same value; harmless.
      this.#info.putSync(INFO_FORMAT, STORAGE_FORMAT_VERSION);
    } else if (format !== STORAGE_FORMAT_VERSION) {
      throw new CheckpointStorageError(
        `${this.dir} has checkpoint storage format ${format}; this weir reads format ${STORAGE_FORMAT_VERSION}`,
      );
    }
  }

  /**
   * Releases this thread's handle after its queued writes finish. Idempotent. Other handles on
   * the same directory (other threads) stay usable.
   */
  close(): Promise<void> {
    this.#closing ??= Promise.allSettled([...this.#writes]).then(() => this.#root.close());
    return this.#closing;
  }

  get closed(): boolean {
    return this.#closing !== undefined;
  }

  // ---------- task side ----------

  /**
   * Writes `chunks` for `checkpointId` and resolves with their handles, in input order, once
   * every chunk is durable. Checksums are computed on the calling thread (~40 µs per 64 KiB).
   *
   * Backlog: chunks go out in transactions of ≤ `maxBatchBytes`; a batch is queued only when it
   * fits this handle's `maxInFlightBytes` budget, so the call waits for earlier batches (its own
   * or concurrent calls') to become durable rather than piling work into lmdb-js. It waits only
   * for its own transactions, never for everything queued (`db.committed`).
   *
   * Until the checkpoint is committed the chunks are invisible orphans; a crash leaves them for
   * `cleanup`.
   * @throws CheckpointDeclinedError (`storage-failed`) when LMDB rejects a write; some chunks may
   *   be durable, as orphans.
   */
  async writeChunks(
    checkpointId: number,
    owner: ChunkOwner,
    chunks: readonly ChunkInput[],
  ): Promise<ChunkHandle[]> {
    this.#checkOpen();
    checkCheckpointId(checkpointId);
    checkOwner(owner);
    if (!Array.isArray(chunks)) throw new TypeError('chunks must be an array');
    chunks.forEach(checkChunkInput);

    const nonce = randomBytes(6).toString('hex');
    const handles: ChunkHandle[] = chunks.map((chunk, i) => ({
      chunkId: chunkIdFor(checkpointId, nonce, i),
      checkpointId,
      name: chunk.name,
      size: chunk.bytes.byteLength,
      checksum: checksumOf(chunk.bytes),
      ...(chunk.keyGroup === undefined ? {} : { keyGroup: chunk.keyGroup }),
    }));

    // Each batch settles to its error (or undefined) instead of rejecting, so a failure while a
    // later batch still waits for budget is not an unhandled rejection.
    const batches: Promise<unknown>[] = [];
    let start = 0;
    while (start < chunks.length) {
      let end = start;
      let bytes = 0;
      while (
        end < chunks.length &&
        (end === start || bytes + chunks[end].bytes.byteLength <= this.#maxBatchBytes)
      ) {
        bytes += chunks[end].bytes.byteLength;
        end++;
      }
      await this.#budget.acquire(bytes);
      if (this.#closing !== undefined) {
        // Closed while this call waited for budget: queue nothing more on the environment.
        this.#budget.release(bytes);
        await Promise.all(batches);
        throw new CheckpointDeclinedError(
          checkpointId,
          'storage-failed',
          `checkpoint storage ${this.dir} was closed while writing the state chunks of ${owner.operatorUid}#${owner.subtaskIndex}`,
        );
      }
      batches.push(this.#writeBatch(handles, chunks, start, end, bytes));
      start = end;
    }
    const failure = (await Promise.all(batches)).find((error) => error !== undefined);
    if (failure !== undefined) {
      throw new CheckpointDeclinedError(
        checkpointId,
        'storage-failed',
        `writing ${chunks.length} state chunks of ${owner.operatorUid}#${owner.subtaskIndex} failed`,
        { cause: failure },
      );
    }
    return handles;
  }

  /** Puts issued in one synchronous loop land in one lmdb-js transaction (event-turn batching). */
  async #writeBatch(
    handles: readonly ChunkHandle[],
    chunks: readonly ChunkInput[],
    start: number,
    end: number,
    bytes: number,
  ): Promise<unknown> {
    try {
      const puts: Promise<boolean>[] = [];
      for (let i = start; i < end; i++)
        puts.push(this.#chunks.put(handles[i].chunkId, chunks[i].bytes as Buffer));
      await this.#track(Promise.all(puts));
      return undefined;
    } catch (error) {
      return error ?? new Error('lmdb write failed');
    } finally {
      this.#budget.release(bytes);
    }
  }

  // ---------- coordinator side ----------

  /**
   * The commit point. In one durable transaction: checks that the id is new and that every
   * referenced chunk exists, then writes the metadata and increments the refcount of each
   * referenced chunk (once per checkpoint). When the promise resolves with `committed`, the
   * checkpoint exists for every reader, in this and any later process.
   *
   * Contract with retention: an incremental checkpoint may share chunks only from checkpoints
   * still committed when it commits; discarding the base of an in-flight incremental checkpoint
   * makes this return `missing-chunks` (decline it), never a checkpoint with holes.
   * @throws TypeError/RangeError for malformed metadata; CheckpointDeclinedError (`storage-failed`)
   *   when LMDB fails, in which case nothing was committed.
   */
  async commitCheckpoint(metadata: CheckpointMetadata): Promise<CommitOutcome> {
    this.#checkOpen();
    checkMetadata(metadata);
    const checkpointId = metadata.checkpointId;
    const record = encodeMetadata(metadata);
    const referenced = referencedChunks(metadata).map((handle) => handle.chunkId);
    try {
      return await this.#track(
        this.#root.transaction((): CommitOutcome => {
          if (this.#metadata.doesExist(checkpointId)) return { state: 'duplicate', checkpointId };
          const missing = this.#missing(referenced);
          if (missing.length > 0) return { state: 'missing-chunks', checkpointId, missing };
          for (const chunkId of referenced)
            this.#refcounts.put(chunkId, (this.#refcounts.get(chunkId) ?? 0) + 1);
          if (checkpointId > (this.#info.get(INFO_HIGHEST_CHECKPOINT_ID) ?? 0)) {
            this.#info.put(INFO_HIGHEST_CHECKPOINT_ID, checkpointId);
          }
          this.#metadata.put(checkpointId, record);
          return { state: 'committed', checkpointId };
        }),
      );
    } catch (cause) {
      throw new CheckpointDeclinedError(
        checkpointId,
        'storage-failed',
        'committing checkpoint metadata failed',
        {
          cause,
        },
      );
    }
  }

  /**
   * The chunks `metadata` references (its own and those a delta shares with earlier checkpoints)
   * that do not exist here, as `commitCheckpoint` would find them now; empty when all exist. For a
   * caller whose commit point is elsewhere (a cluster job's NATS record, shared-dir-retention.ts):
   * it checks here first and must keep discards out until its own commit. Cost: one key lookup
   * per referenced chunk; no chunk is read.
   */
  missingChunks(metadata: CheckpointMetadata): string[] {
    this.#checkOpen();
    this.#freshSnapshot();
    return this.#missing(referencedChunks(metadata).map((handle) => handle.chunkId));
  }

  #missing(chunkIds: readonly string[]): string[] {
    return chunkIds.filter((chunkId) => !this.#hasChunk(chunkId));
  }

  /**
   * Whether chunk `chunkId` exists, from its key alone: lmdb-js's `doesExist` copies the value
   * (`getBinaryFast`), which on the coordinator's commit read every page of every referenced
   * chunk through the map — each checkpoint's bytes became resident file pages of this process
   * (issue 14: ~560 MiB at 5 M keys after 16 full checkpoints). A key cursor touches at most the
   * first page of a large value.
   */
  #hasChunk(chunkId: string): boolean {
    for (const key of this.#chunks.getKeys({ start: chunkId, limit: 1 })) return key === chunkId;
    return false;
  }

  /**
   * Records in committed checkpoint `checkpointId`'s metadata that its sinks' commits completed
   * (`CheckpointMetadata.sinksCommitted`), in one durable transaction that rewrites the record.
   * @returns false when the checkpoint is not (any more) committed here.
   * @throws CorruptStateError when its stored metadata is damaged; CheckpointStorageError when
   *   LMDB fails.
   */
  async markSinksCommitted(checkpointId: number): Promise<boolean> {
    this.#checkOpen();
    checkCheckpointId(checkpointId);
    try {
      return await this.#track(
        this.#root.transaction((): boolean => {
          const record = this.#metadata.getBinary(checkpointId);
          if (record === undefined) return false;
          const metadata = decodeMetadata(checkpointId, record);
          this.#metadata.put(checkpointId, encodeMetadata({ ...metadata, sinksCommitted: true }));
          return true;
        }),
      );
    } catch (cause) {
      if (cause instanceof CorruptStateError) throw cause;
      throw new CheckpointStorageError(`marking the commits of checkpoint ${checkpointId} done failed`, {
        cause,
      });
    }
  }

  /** Ids of committed checkpoints, ascending. Cost: one key scan of the metadata database. */
  listCompleted(): number[] {
    this.#freshSnapshot();
    return [...this.#metadata.getKeys()];
  }

  /**
   * Metadata of the newest committed checkpoint, or `undefined` when there is none.
   * @throws CorruptStateError when that metadata is corrupt (restore should use `findRestorable`).
   */
  latestCompleted(): CheckpointMetadata | undefined {
    this.#freshSnapshot();
    for (const checkpointId of this.#metadata.getKeys({ reverse: true, limit: 1 })) {
      return this.loadMetadata(checkpointId);
    }
    return undefined;
  }

  /**
   * Metadata of committed checkpoint `checkpointId`, or `undefined` when it is not committed.
   * @throws CorruptStateError when the stored record fails its checksum or cannot be decoded.
   */
  loadMetadata(checkpointId: number): CheckpointMetadata | undefined {
    this.#checkOpen();
    checkCheckpointId(checkpointId);
    this.#freshSnapshot();
    const record = this.#metadata.getBinary(checkpointId);
    return record === undefined ? undefined : decodeMetadata(checkpointId, record);
  }

  /**
   * The chunk's bytes (a fresh copy), after checking its size and checksum against the handle.
   * @throws CorruptStateError naming the chunk and its checkpoint when it is missing or damaged.
   */
  readChunk(handle: ChunkHandle): Uint8Array {
    this.#checkOpen();
    this.#freshSnapshot();
    const bytes = this.#chunks.getBinary(handle.chunkId);
    const problem = bytes === undefined ? 'missing' : chunkDamage(handle, bytes);
    if (problem !== undefined) {
      throw new CorruptStateError(
        `state chunk ${handle.chunkId} (${handle.name}) of checkpoint ${handle.checkpointId} is ${problem}`,
      );
    }
    return bytes!;
  }

  /**
   * Checks a committed checkpoint against stored bytes, within one read snapshot (a concurrent
   * discard cannot make chunks look missing half-way). Cost: reads and hashes every referenced
   * chunk, O(checkpoint size).
   */
  verifyCheckpoint(checkpointId: number): CheckpointVerification {
    this.#checkOpen();
    checkCheckpointId(checkpointId);
    this.#freshSnapshot();
    const transaction = this.#root.useReadTransaction();
    try {
      return this.#verify(checkpointId, transaction);
    } finally {
      transaction.done();
    }
  }

  #verify(checkpointId: number, transaction: Transaction): CheckpointVerification {
    const record = binaryIn(this.#metadata, checkpointId, transaction);
    if (record === undefined) return { state: 'not-found', checkpointId };
    let metadata: CheckpointMetadata;
    try {
      metadata = decodeMetadata(checkpointId, record);
    } catch (error) {
      if (!(error instanceof CorruptStateError)) throw error;
      return { state: 'metadata-corrupt', checkpointId, reason: error.message };
    }
    const chunks: ChunkVerification[] = referencedChunks(metadata).map((handle) => {
      // A copy: getBinaryFast's reusable buffer may be larger than the value (byteLength ≠ length).
      const bytes = binaryIn(this.#chunks, handle.chunkId, transaction);
      if (bytes === undefined) return { state: 'missing', handle };
      const damage = chunkDamage(handle, bytes);
      return damage === undefined ? { state: 'ok', handle } : { state: 'corrupt', handle, reason: damage };
    });
    const state = chunks.every((chunk) => chunk.state === 'ok') ? 'ok' : 'damaged';
    return { state, checkpointId, metadata, chunks };
  }

  /**
   * Restore selection: the newest committed checkpoint whose metadata and chunks all verify,
   * falling back to older ones; `skipped` says what was passed over and why. Never a partial
   * restore. Cost: verifies checkpoints newest-first until one passes.
   */
  findRestorable(): RestoreSelection {
    this.#checkOpen();
    this.#freshSnapshot();
    return selectRestorable(this.#verificationsNewestFirst());
  }

  *#verificationsNewestFirst(): Generator<CheckpointVerification> {
    const transaction = this.#root.useReadTransaction();
    try {
      for (const checkpointId of [...this.#metadata.getKeys({ reverse: true, transaction })]) {
        yield this.#verify(checkpointId, transaction);
      }
    } finally {
      // Runs when selectRestorable stops early too (for-of calls return()).
      transaction.done();
    }
  }

  /**
   * An id greater than every checkpoint id this directory has seen: committed, discarded (the
   * stored high-water mark) or only partially written (orphan chunks). Ids therefore increase
   * across process restarts.
   */
  nextCheckpointId(): number {
    this.#checkOpen();
    this.#freshSnapshot();
    let highest = this.#info.get(INFO_HIGHEST_CHECKPOINT_ID) ?? 0;
    for (const id of this.#metadata.getKeys({ reverse: true, limit: 1 })) highest = Math.max(highest, id);
    for (const chunkId of this.#chunks.getKeys({ reverse: true, limit: 1 })) {
      highest = Math.max(highest, checkpointIdOfChunk(chunkId) ?? 0);
    }
    return highest + 1;
  }

  /** Rows for `weir checkpoints DIR`, ascending by id; unreadable metadata is a row, not an error. */
  describe(): CheckpointListing[] {
    return this.listCompleted().map((checkpointId): CheckpointListing => {
      try {
        const metadata = this.loadMetadata(checkpointId);
        if (metadata !== undefined) return { state: 'readable', ...describeCheckpoint(metadata) };
        return { state: 'metadata-corrupt', checkpointId, reason: 'discarded while listing' };
      } catch (error) {
        if (!(error instanceof CorruptStateError)) throw error;
        return { state: 'metadata-corrupt', checkpointId, reason: error.message };
      }
    });
  }

  // ---------- retention and garbage collection ----------

  /**
   * Removes a committed checkpoint, in one durable transaction: its metadata goes, each chunk it
   * references loses one reference, and chunks left with none are deleted. Chunks shared with a
   * retained checkpoint stay. Discard a checkpoint only once a newer one is committed (see
   * `commitCheckpoint`).
   */
  async discardCheckpoint(checkpointId: number): Promise<DiscardOutcome> {
    this.#checkOpen();
    checkCheckpointId(checkpointId);
    return this.#track(
      this.#root.transaction((): DiscardOutcome => {
        const record = this.#metadata.getBinary(checkpointId);
        if (record === undefined) return { state: 'unknown', checkpointId };
        let metadata: CheckpointMetadata;
        try {
          metadata = decodeMetadata(checkpointId, record);
        } catch (error) {
          if (!(error instanceof CorruptStateError)) throw error;
          this.#metadata.remove(checkpointId);
          this.#rebuildRefcounts();
          return {
            state: 'discarded',
            checkpointId,
            deletedChunks: 0,
            freedBytes: 0,
            refcountsRebuilt: true,
          };
        }
        let deletedChunks = 0;
        let freedBytes = 0;
        for (const handle of referencedChunks(metadata)) {
          const references = this.#refcounts.get(handle.chunkId) ?? 0;
          if (references > 1) {
            this.#refcounts.put(handle.chunkId, references - 1);
            continue;
          }
          this.#refcounts.remove(handle.chunkId);
          // By key, its size from the handle: reading the value (even `getBinaryFast`) maps every
          // page of the chunk in, as the commit's check did (see #hasChunk).
          if (this.#hasChunk(handle.chunkId)) {
            freedBytes += handle.size;
            deletedChunks++;
            this.#chunks.remove(handle.chunkId);
          }
        }
        this.#metadata.remove(checkpointId);
        return { state: 'discarded', checkpointId, deletedChunks, freedBytes, refcountsRebuilt: false };
      }),
    );
  }

  /** Inside a write transaction: sets every refcount from the readable metadata. O(all metadata). */
  #rebuildRefcounts(): void {
    const counts = new Map<string, number>();
    for (const checkpointId of [...this.#metadata.getKeys()]) {
      let metadata: CheckpointMetadata;
      try {
        metadata = decodeMetadata(checkpointId, this.#metadata.getBinary(checkpointId)!);
      } catch (error) {
        if (!(error instanceof CorruptStateError)) throw error;
        continue; // unrestorable anyway; its chunks become orphans
      }
      for (const handle of referencedChunks(metadata))
        counts.set(handle.chunkId, (counts.get(handle.chunkId) ?? 0) + 1);
    }
    for (const chunkId of [...this.#refcounts.getKeys()])
      if (!counts.has(chunkId)) this.#refcounts.remove(chunkId);
    for (const [chunkId, count] of counts) this.#refcounts.put(chunkId, count);
  }

  /**
   * Deletes orphan chunks (referenced by no committed checkpoint) written by checkpoints with
   * id < `keepFromCheckpointId`. Pass the smallest in-flight checkpoint id, or
   * `nextCheckpointId()` when none is in flight: chunks of in-flight checkpoints are orphans
   * until their commit and must survive. Chunks an aborted checkpoint's tasks write after this
   * call are collected by a later one.
   *
   * Deletes in transactions of ≤ 512 chunks, re-checking inside each that the chunk is still
   * unreferenced; a crash between transactions leaves fewer orphans, never a broken checkpoint.
   */
  async cleanup(options: { readonly keepFromCheckpointId: number }): Promise<CleanupResult> {
    this.#checkOpen();
    const keepFrom = checkCheckpointId(options?.keepFromCheckpointId, 'keepFromCheckpointId');
    this.#freshSnapshot();
    const candidates: string[] = [];
    for (const chunkId of this.#chunks.getKeys({ end: chunkIdPrefix(keepFrom) })) {
      if (!this.#refcounts.doesExist(chunkId)) candidates.push(chunkId);
    }
    let deletedChunks = 0;
    let freedBytes = 0;
    for (let i = 0; i < candidates.length; i += CLEANUP_BATCH) {
      this.#checkOpen(); // closed between two batches: stop; the rest stays for a later cleanup
      const batch = candidates.slice(i, i + CLEANUP_BATCH);
      await this.#track(
        this.#root.transaction(() => {
          for (const chunkId of batch) {
            if (this.#refcounts.doesExist(chunkId)) continue;
            const bytes = this.#chunks.getBinaryFast(chunkId);
            if (bytes === undefined) continue;
            freedBytes += bytes.length;
            deletedChunks++;
            this.#chunks.remove(chunkId);
          }
        }),
      );
    }
    return { deletedChunks, freedBytes };
  }

  // ---------- internals ----------

  #track<T>(write: Promise<T>): Promise<T> {
    this.#writes.add(write);
    const forget = () => this.#writes.delete(write);
    write.then(forget, forget);
    return write;
  }

  #checkOpen(): void {
    if (this.#closing !== undefined)
      throw new CheckpointStorageError(`checkpoint storage ${this.dir} is closed`);
  }

  /** lmdb-js renews the read snapshot per event turn; other threads' commits need an explicit renewal. */
  #freshSnapshot(): void {
    this.#checkOpen();
    this.#root.resetReadTxn();
  }
}

/** Why `bytes` does not match `handle`, or `undefined` when it does. */
function chunkDamage(handle: ChunkHandle, bytes: Uint8Array): string | undefined {
  if (bytes.length !== handle.size) return `corrupt (size ${bytes.length}, expected ${handle.size})`;
  if (checksumOf(bytes) !== handle.checksum) return 'corrupt (checksum mismatch)';
  return undefined;
}

/**
 * `getBinary` within an explicit read transaction. lmdb-js accepts the options argument at
 * runtime (read.js: `getBinary(id, options)`) but its typings omit it.
 */
function binaryIn<K extends Key>(
  db: Database<Buffer, K>,
  key: K,
  transaction: Transaction,
): Buffer | undefined {
  const getBinary = db.getBinary as (id: K, options: { transaction: Transaction }) => Buffer | undefined;
  return getBinary.call(db, key, { transaction });
}

function positiveInteger(value: number | undefined, fallback: number, option: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${option} must be a positive integer, got ${String(value)}`);
  }
  return value;
}
