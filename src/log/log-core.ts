/**
 * One thread's handle on a log directory: the LMDB environment, its sub-databases (layout in
 * `log-layout.ts`), the record codec, and the open/closed state shared by the {@link Log} and
 * every {@link Topic} opened from it.
 *
 * Thread safety. A handle belongs to the thread that opened it. Any number of handles, in any
 * threads of any processes, may have the same directory open at once: LMDB serialises write
 * transactions with a process-shared robust mutex and gives readers MVCC snapshots; lmdb-js shares
 * one native environment per path within a process, reference-counted, so closing one thread's
 * handle leaves the others usable. Within a process, one elected handle (any thread's) also commits
 * the asynchronous writes of the others (`thread-relay.ts`).
 */

import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { type Database, open, type RootDatabase } from 'lmdb';
import { InvalidOptionError, LogClosedError, LogStorageError } from '../errors.js';
import { asStorageError, GroupCommit, type PlanFunction } from './group-commit.js';
import {
  DATA_FILE,
  DB_INFO,
  DB_PARTITIONS,
  DB_RECORDS,
  DB_RELAY,
  DB_TOPICS,
  DB_TX_MARKERS,
  DB_TX_ORDER,
  DB_TX_WRITERS,
  INFO_FORMAT,
  LOG_FORMAT_VERSION,
  logEnvironmentOptions,
  type PartitionMeta,
  READABLE_LOG_FORMATS,
  type TopicMeta,
  type WriterMeta,
} from './log-layout.js';
import type { Durability } from './log-options.js';
import { LogRecordCodec } from './log-record-codec.js';
import { LogWakeup } from './log-wakeup.js';
import type { WireOp, WireOutcome } from './relay-wire.js';
import { RELAY_WORDS_BYTES, type RelayAck, type RelayUnit, ThreadRelay } from './thread-relay.js';
import { Topic } from './topic.js';

/** How a handle writes (see `LogOptions`); validated by `openLog`. */
export interface LogCoreSettings {
  readonly clock: () => number;
  readonly durability: Durability;
  readonly lingerMs: number;
  readonly maxBatchRecords: number;
  readonly pollMs: number;
  readonly committerTimeoutMs: number;
}

type Key = (string | number)[];

export class LogCore {
  readonly dir: string;
  readonly clock: () => number;
  readonly codec = new LogRecordCodec();
  readonly root: RootDatabase;
  readonly info: Database<number, string>;
  readonly topics: Database<TopicMeta, string>;
  readonly partitions: Database<PartitionMeta, Key>;
  readonly records: Database<Buffer, Key>;
  readonly txWriters: Database<WriterMeta, Key>;
  readonly txMarkers: Database<number, Key>;
  readonly txOrder: Database<string, Key>;
  /** Cross-thread committer bookkeeping: acknowledgements and fences (`thread-relay.ts`). */
  readonly relayDb: Database<unknown, Key>;
  readonly durability: Durability;
  /** Wakes readers waiting for new records (`tail`, `sources.log`). */
  readonly wakeup: LogWakeup;
  /** Every asynchronous write of this handle goes through it, in call order. */
  readonly #group: GroupCommit;
  /** Cross-thread group commit (`thread-relay.ts`): the process's committer, or a follower. */
  readonly #relay: ThreadRelay;

  /** @internal For tests (counters, fault injection). */
  get relay(): ThreadRelay {
    return this.#relay;
  }
  /** Committer side: topics of the operations other threads sent, by name and id. */
  readonly #wireTopics = new Map<string, Topic>();
  /** Set once by `close()`; every operation checks it first. */
  #closing: Promise<void> | undefined;

  private constructor(dir: string, root: RootDatabase, settings: LogCoreSettings) {
    this.dir = dir;
    this.root = root;
    this.clock = settings.clock;
    this.durability = settings.durability;
    this.wakeup = new LogWakeup(realpathSync(dir), settings.pollMs);
    this.#group = new GroupCommit({
      dir,
      lingerMs: settings.lingerMs,
      maxBatchRecords: settings.maxBatchRecords,
      renewSnapshot: () => this.root.resetReadTxn(),
      onCommit: () => this.wakeup.committed(),
      stampUnit: (view, unit, outcomes) => {
        view.require(this.relayDb, fenceKey(this.#relay.generation, unit.epoch), null);
        view.putUnread(this.relayDb, ackKey(unit.from), { id: unit.id, outcomes } satisfies RelayAck);
      },
      isFenced: (epoch) => this.relayDb.doesExist(fenceKey(this.#relay.generation, epoch)),
      onFenced: (epoch) => this.#relay.fenced(epoch),
    });
    this.#relay = new ThreadRelay({
      dir,
      realDir: realpathSync(dir),
      committerTimeoutMs: settings.committerTimeoutMs,
      word: new Int32Array(userSharedBuffer(root, 'weir-log-relay-v2', RELAY_WORDS_BYTES)),
      submitUnit: (unit, ops) => this.#submitUnit(unit, ops),
      fence: async (generation, epoch) => {
        await this.relayDb.put(fenceKey(generation, epoch), 1);
      },
      isFenced: (generation, epoch) => {
        this.root.resetReadTxn();
        return this.relayDb.doesExist(fenceKey(generation, epoch));
      },
      readAck: (from) => {
        this.root.resetReadTxn();
        return this.relayDb.get(ackKey(from)) as RelayAck | undefined;
      },
      clearAck: async (from) => {
        await this.relayDb.remove(ackKey(from));
      },
    });
    this.#group.useRelay(this.#relay);
    this.info = root.openDB<number, string>({ name: DB_INFO });
    // Versioned: asynchronous appends are conditional on the versions of the entries they read.
    this.topics = root.openDB<TopicMeta, string>({ name: DB_TOPICS, useVersions: true });
    this.partitions = root.openDB<PartitionMeta, Key>({ name: DB_PARTITIONS, useVersions: true });
    this.records = root.openDB<Buffer, Key>({ name: DB_RECORDS, encoding: 'binary' });
    this.txWriters = root.openDB<WriterMeta, Key>({ name: DB_TX_WRITERS, useVersions: true });
    this.txMarkers = root.openDB<number, Key>({ name: DB_TX_MARKERS });
    this.txOrder = root.openDB<string, Key>({ name: DB_TX_ORDER });
    this.relayDb = root.openDB<unknown, Key>({ name: DB_RELAY });
  }

  /**
   * Opens (creating when missing) the log in `dir`. Synchronous; the first open of a new
   * directory performs one small durable write (the format marker).
   * @throws LogStorageError when the directory cannot be opened or holds another format.
   */
  static open(dir: string, settings: LogCoreSettings): LogCore {
    if (!existsSync(join(dir, DATA_FILE))) {
      try {
        mkdirSync(dir, { recursive: true });
      } catch (cause) {
        throw new LogStorageError(`cannot create log directory ${dir}`, { cause });
      }
    }
    let root: RootDatabase;
    try {
      root = open(logEnvironmentOptions(dir, settings.durability));
    } catch (cause) {
      throw new LogStorageError(`cannot open log ${dir}`, { cause });
    }
    try {
      checkSameDurability(root, dir, settings.durability);
      const core = new LogCore(dir, root, settings);
      const format = core.info.get(INFO_FORMAT);
      if (format === undefined || (format !== LOG_FORMAT_VERSION && READABLE_LOG_FORMATS.includes(format))) {
        // Racing first opens from several threads or processes write the same value; harmless.
        // A format-1 directory is read as it is and marked format 2: this handle writes batches.
        core.info.putSync(INFO_FORMAT, LOG_FORMAT_VERSION);
      } else if (format !== LOG_FORMAT_VERSION) {
        throw new LogStorageError(
          `${dir} has log format ${format}; this weir reads formats ${READABLE_LOG_FORMATS.join(', ')}`,
        );
      }
      return core;
    } catch (error) {
      // Close before rethrowing, or this thread keeps a reference on the shared environment.
      void root.close();
      if (error instanceof LogStorageError || error instanceof InvalidOptionError) throw error;
      throw new LogStorageError(`cannot open log ${dir}`, { cause: error });
    }
  }

  get closed(): boolean {
    return this.#closing !== undefined;
  }

  /** @throws LogClosedError after `close()`. */
  checkOpen(): void {
    if (this.#closing !== undefined) throw new LogClosedError(this.dir);
  }

  /**
   * Makes this thread's next read see every commit so far, including other threads' and
   * processes' (lmdb-js otherwise renews its read snapshot only once per event-loop turn). Cheap:
   * the snapshot is renewed lazily by the next read.
   */
  freshSnapshot(): void {
    this.checkOpen();
    this.root.resetReadTxn();
  }

  /**
   * Runs `action` in a synchronous write transaction, durable when it returns. The write lock is
   * held while `action` runs: a thread terminated meanwhile never releases it (see `topic.ts`).
   */
  writeSync<T>(action: () => T): T {
    this.checkOpen();
    try {
      return this.root.transactionSync(action);
    } catch (error) {
      throw asStorageError(error, this.dir);
    }
  }

  /**
   * Queues an asynchronous write (`group-commit.ts`): it is planned with every other write queued
   * meanwhile on this handle and committed in one transaction; one handle's writes land in call
   * order. `close()` waits for every queued write; LMDB failures become LogStorageError.
   */
  submit<R>(records: number, plan: PlanFunction<R>, wire: WireOp): Promise<R> {
    return this.#group.submit(records, plan, wire);
  }

  /** Operations this handle committed for other threads' handles (`thread-relay.ts`). */
  get relayedOps(): number {
    return this.#relay.relayedOps;
  }

  /** Committer side: queues a request another thread's handle sent, as one unit (`thread-relay.ts`). */
  #submitUnit(unit: RelayUnit, ops: WireOp[]): Promise<WireOutcome[] | null> {
    const items = ops.map((op) => {
      const records = op.kind === 'append' ? op.prepared.values.length : 1;
      let topic = this.#wireTopics.get(`${op.topicId}:${op.topic}`);
      if (topic === undefined) {
        this.root.resetReadTxn();
        const meta = this.topics.get(op.topic);
        if (meta === undefined || meta.id !== op.topicId) {
          const gone = new InvalidOptionError('topic', `topic "${op.topic}" no longer exists in ${this.dir}`);
          return {
            records,
            plan: () => {
              throw gone;
            },
          };
        }
        topic = new Topic(this, op.topic, meta);
        this.#wireTopics.set(`${op.topicId}:${op.topic}`, topic);
      }
      return { records, plan: topic.planWire(op) };
    });
    return this.#group.submitUnit(unit, items);
  }

  /**
   * Waits for queued appends, then releases this thread's handle. Idempotent. Readers waiting in
   * `tail` are woken and end.
   */
  close(): Promise<void> {
    if (this.#closing === undefined) {
      this.wakeup.close();
      const finish = (): Promise<void> => {
        const cleared = this.#relay.close();
        return cleared === undefined ? this.root.close() : cleared.finally(() => this.root.close());
      };
      if (this.#relay.committer) {
        // Other threads' requests already sent are received and queued first, then drained.
        this.#closing = this.#relay.retire(() => this.#group.idle()).then(finish);
      } else {
        // Without appends in flight, close now: lmdb-js releases this handle's reader slot
        // synchronously, so a thread that opens and closes many handles never runs out of them.
        this.#closing = this.#group.busy ? this.#group.idle().then(finish) : finish();
      }
    }
    return this.#closing;
  }
}

/** Codes of the durabilities in the environment's shared word (0: not claimed yet). */
const DURABILITY_CODES: Readonly<Record<Durability, number>> = { fsync: 1, os: 2 };

/**
 * lmdb-js shares one native environment per path and process, opened with the FIRST opener's
 * flags, and silently ignores a later opener's `noSync`: a handle asking for fsync durability
 * would get none. So the first handle claims its durability in a word shared by every thread's
 * handle on the environment (an lmdb-js user shared buffer), and a handle asking otherwise fails.
 * @throws InvalidOptionError on a mismatch.
 */
function checkSameDurability(root: RootDatabase, dir: string, durability: Durability): void {
  const word = new Int32Array(userSharedBuffer(root, 'weir-log-durability'));
  const code = DURABILITY_CODES[durability];
  const claimed = Atomics.compareExchange(word, 0, 0, code);
  if (claimed !== 0 && claimed !== code) {
    const other = claimed === DURABILITY_CODES.os ? 'os' : 'fsync';
    throw new InvalidOptionError(
      'openLog(options.durability)',
      `this process has ${dir} open with durability '${other}'; every handle on one directory within a process must use the same durability, got '${durability}'`,
    );
  }
}

/** A buffer shared by every thread's handle on the environment (lmdb-js user shared buffer). */
function userSharedBuffer(root: RootDatabase, id: string, bytes = 4): ArrayBuffer {
  return (
    root as unknown as {
      getUserSharedBuffer(id: string, init: ArrayBuffer, options: { envKey: boolean }): ArrayBuffer;
    }
  ).getUserSharedBuffer(id, new ArrayBuffer(bytes), { envKey: true });
}

/** `relay` database: a follower's acknowledgement (`thread-relay.ts`). */
function ackKey(from: string): Key {
  return ['a', from];
}

/** `relay` database: the fence of a committer epoch of one environment lifetime. */
function fenceKey(generation: string, epoch: number): Key {
  return ['f', generation, epoch];
}
