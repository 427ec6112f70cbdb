/**
 * `sinks.log({ dir, topic, key?, partitions?, writer? })`: appends records to a topic of the
 * embedded log (`openLog`). Creates the topic when it does not exist.
 *
 * Under exactly-once checkpointing it is transactional (two-phase commit, like `sinks.collect`):
 * records written since the last barrier form the open transaction; `preCommit` at the barrier
 * encodes and routes them (a record that cannot be encoded fails the task there) and seals them
 * into the snapshot; `notifyCheckpointComplete(id)` appends every sealed transaction `<= id` with
 * `topic.appendTransaction`, whose marker is written in the same LMDB transaction as the records,
 * so a repeated commit appends nothing. On restore the sealed transactions of the restored
 * checkpoint are committed again (a no-op for those already appended) and everything after it is
 * discarded by the rewind. The log then holds exactly the output of completed checkpoints (plus
 * the final one), never a duplicate.
 *
 * Transaction ids are unique per (writer instance, subtask, attempt, checkpoint): a random nonce
 * per writer instance keeps two jobs, or two runs of one job, from colliding on ids like
 * `0@0:1`. A sealed transaction keeps its id and writer name in the snapshot, so its commit after
 * a restore (at any parallelism) is recognised. Markers are kept for the newest
 * `transactionMarkers` (default 1000) transactions per (topic, writer); give each job its own
 * `writer` when several busy jobs write one topic.
 *
 * Without exactly-once (at-least-once or no checkpointing) it appends in batches as records
 * arrive (every 4096 records, at every barrier and at end of input): at-least-once by nature,
 * after a restart it may append records again.
 *
 * Appends are asynchronous conditional writes (`topic.ts`): the runtime may terminate a worker at
 * any moment, and a thread terminated inside a synchronous LMDB transaction would leave the write
 * lock held for the whole process. They are issued in order and are durable within a few
 * milliseconds; a failed one fails the task at the writer's next call. At the end of a finished
 * task, appends still in flight are repeated synchronously in `close()` (idempotent), because
 * the worker may be terminated as soon as the task returns. Known limits: under at-least-once,
 * an append issued at a barrier may still be in flight when that checkpoint completes, so a
 * process crash in those milliseconds can lose records the checkpoint covers; the synchronous
 * repeat in `close()` runs while the task is still alive, but a concurrent failure elsewhere
 * that terminates the worker exactly then would leave the write lock held.
 */

import { randomBytes } from 'node:crypto';
import type { Sink, SinkContext, SinkWriter } from '../api/source.js';
import { InvalidOptionError, LogTopicNotFoundError } from '../errors.js';
import { type Log, openLog } from '../log/log.js';
import type { AppendOptions } from '../log/log-options.js';
import type { PreparedAppend, Topic } from '../log/topic.js';
import { closeLog } from './log-source.js';

export interface LogSinkOptions<T> {
  /** The log's directory (as given to `openLog`). */
  readonly dir: string;
  readonly topic: string;
  /** Partition by this key of each record (a stable hash); round-robin without it. */
  readonly key?: (record: T) => unknown;
  /**
   * Partition count when the topic has to be created (default 1). When the topic exists it must
   * match (LogPartitionCountMismatchError otherwise); omit it to accept the existing count.
   */
  readonly partitions?: number;
  /** Writer name for transaction markers (default `sinks.log:<operator name>`). */
  readonly writer?: string;
}

/** Records per non-transactional append (bounds the transaction size and the latency). */
const CHUNK = 4096;

/** Snapshot entry of a sealed, not yet committed transaction. */
export interface LogSinkTransaction {
  /** Unique per (writer instance, subtask, attempt, checkpoint). */
  readonly transactionId: string;
  readonly writer: string;
  readonly checkpointId: number;
  /** The records, encoded and routed at the barrier. */
  readonly batch: PreparedAppend;
}

export function log<T = unknown>(options: LogSinkOptions<T>): Sink<T> {
  const { dir, topic, key, partitions, writer } = options ?? ({} as LogSinkOptions<T>);
  if (typeof dir !== 'string' || dir.length === 0) {
    throw new InvalidOptionError('sinks.log.dir', `must be a non-empty path, got ${String(dir)}`);
  }
  if (typeof topic !== 'string' || topic.length === 0) {
    throw new InvalidOptionError('sinks.log.topic', `must be a non-empty string, got ${String(topic)}`);
  }
  if (key !== undefined && typeof key !== 'function') {
    throw new InvalidOptionError('sinks.log.key', 'must be a function of the record');
  }
  if (partitions !== undefined && !(Number.isSafeInteger(partitions) && partitions >= 1)) {
    throw new InvalidOptionError(
      'sinks.log.partitions',
      `must be a positive integer, got ${String(partitions)}`,
    );
  }
  if (writer !== undefined && (typeof writer !== 'string' || writer.length === 0)) {
    throw new InvalidOptionError('sinks.log.writer', 'must be a non-empty string');
  }
  return {
    type: 'log',
    name: 'log',
    createWriter(ctx: SinkContext): SinkWriter<T> {
      const handle = openLog(dir);
      try {
        const t = openOrCreate<T>(handle, topic, partitions);
        const routing: AppendOptions<T> = key ? { key } : {};
        return ctx.checkpointingMode === 'exactly-once'
          ? new TransactionalLogWriter<T>(handle, t, routing, writer ?? `sinks.log:${ctx.operatorName}`, ctx)
          : new DirectLogWriter<T>(handle, t, routing, writer ?? `sinks.log:${ctx.operatorName}`, ctx);
      } catch (error) {
        closeLog(handle, 'sinks.log');
        throw error;
      }
    },
  };
}

/**
 * Opens the topic, creating it when missing (with `partitions`, default 1). Every subtask may
 * race to create it; the creation's write transaction makes that safe.
 */
function openOrCreate<T>(handle: Log, topic: string, partitions: number | undefined): Topic<T> {
  if (partitions !== undefined) return handle.topic<T>(topic, { partitions });
  try {
    return handle.topic<T>(topic);
  } catch (error) {
    if (!(error instanceof LogTopicNotFoundError)) throw error;
    return handle.topic<T>(topic, { partitions: 1 });
  }
}

/**
 * Commits batches to the topic as idempotent transactions, asynchronously and in order, with
 * conditional writes (no JavaScript runs while this thread would hold the write lock, so the
 * runtime may terminate the worker at any time; see `topic.ts`).
 *
 * A commit that fails is remembered and thrown from the writer's next call (the task fails and
 * restarts). At the end of a finished task (`close()` after `finish()`), commits still in
 * flight are repeated synchronously: the runtime may terminate the worker as soon as the task
 * returns, and the repeats are idempotent (a commit that already landed is a duplicate).
 */
class LogCommitter {
  /** The chain of commits in flight, in issue order. */
  #chain: Promise<void> = Promise.resolve();
  /** Issued and not yet known to be durable, by transaction id. */
  readonly #pending = new Map<string, LogSinkTransaction>();
  #failure: unknown;
  #inputEnded = false;

  constructor(
    readonly handle: Log,
    readonly topic: Topic<unknown>,
  ) {}

  commit(entry: LogSinkTransaction): void {
    this.#pending.set(entry.transactionId, entry);
    this.#chain = this.#chain.then(async () => {
      if (this.#failure !== undefined) return;
      try {
        await this.topic.appendPreparedTransaction(entry.batch, {
          transactionId: entry.transactionId,
          writer: entry.writer,
        });
        this.#pending.delete(entry.transactionId);
      } catch (error) {
        this.#failure = error;
      }
    });
  }

  /** Resolves once every commit issued so far has settled. */
  settled(): Promise<void> {
    return this.#chain;
  }

  /** Throws the failure of an earlier asynchronous commit (a task failure). */
  check(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }

  inputEnded(): void {
    this.#inputEnded = true;
  }

  close(): void {
    try {
      if (this.#inputEnded) {
        for (const entry of this.#pending.values()) {
          this.topic.appendPreparedTransactionSync(entry.batch, {
            transactionId: entry.transactionId,
            writer: entry.writer,
          });
        }
        this.#pending.clear();
      }
    } finally {
      closeLog(this.handle, 'sinks.log');
    }
  }
}

class DirectLogWriter<T> implements SinkWriter<T> {
  #buffer: T[] = [];
  #batches = 0;
  readonly #nonce = randomBytes(6).toString('hex');
  readonly #committer: LogCommitter;

  constructor(
    handle: Log,
    readonly topic: Topic<T>,
    readonly routing: AppendOptions<T>,
    readonly writer: string,
    readonly ctx: SinkContext,
  ) {
    this.#committer = new LogCommitter(handle, topic as Topic<unknown>);
  }

  write(value: T): void {
    this.#buffer.push(value);
    if (this.#buffer.length >= CHUNK) this.#flush();
  }

  /** Append at every barrier too, so that at-least-once output keeps pace with checkpoints. */
  preCommit(): unknown[] {
    this.#flush();
    return [];
  }

  notifyCheckpointComplete(): void {
    this.#committer.check();
  }

  finish(): void {
    this.#flush();
    this.#committer.inputEnded();
  }

  close(): void {
    this.#committer.close();
  }

  /** @internal Resolves once every append issued so far has settled (tests). */
  whenCommitted(): Promise<void> {
    return this.#committer.settled();
  }

  #flush(): void {
    this.#committer.check();
    if (this.#buffer.length === 0) return;
    const records = this.#buffer;
    this.#buffer = [];
    // Batches are transactions too, only so that the synchronous repeat in close() is idempotent.
    this.#committer.commit({
      transactionId: `${this.#nonce}/${this.ctx.subtaskIndex}@${this.ctx.attempt}#${this.#batches++}`,
      writer: this.writer,
      checkpointId: 0,
      batch: this.topic.prepareAppend(records, this.routing),
    });
  }
}

class TransactionalLogWriter<T> implements SinkWriter<T> {
  /** The open transaction: records since the last barrier. */
  #open: T[] = [];
  /** Sealed transactions by checkpoint id (ascending: barriers come in id order), awaiting commit. */
  readonly #sealed = new Map<number, LogSinkTransaction>();
  /** Distinguishes this writer instance's transaction ids from every other run's. */
  readonly #nonce = randomBytes(6).toString('hex');
  readonly #committer: LogCommitter;

  constructor(
    handle: Log,
    readonly topic: Topic<T>,
    readonly routing: AppendOptions<T>,
    readonly writer: string,
    readonly ctx: SinkContext,
  ) {
    this.#committer = new LogCommitter(handle, topic as Topic<unknown>);
    // Commit-on-restore: the restored checkpoint completed, so its sealed transactions are
    // committed now; the markers make this a no-op for those already appended.
    const restored = [...((ctx.restoredState ?? []) as LogSinkTransaction[])];
    restored.sort((a, b) => a.checkpointId - b.checkpointId);
    for (const entry of restored) this.#committer.commit(entry);
  }

  write(value: T): void {
    this.#open.push(value);
  }

  preCommit(checkpointId: number): unknown[] {
    this.#committer.check();
    if (this.#open.length > 0) {
      // Encoding here (not at commit) makes a bad record fail this checkpoint's task, before it
      // could enter a snapshot whose commit would fail after every restore.
      const batch = this.topic.prepareAppend(this.#open, this.routing);
      this.#sealed.set(checkpointId, {
        transactionId: `${this.#nonce}/${this.ctx.subtaskIndex}@${this.ctx.attempt}:${checkpointId}`,
        writer: this.writer,
        checkpointId,
        batch,
      });
    }
    this.#open = [];
    return [...this.#sealed.values()];
  }

  notifyCheckpointComplete(checkpointId: number): void {
    this.#committer.check();
    // A completed checkpoint also commits every older sealed transaction (their own notification
    // may have been lost or subsumed, as in Flink's TwoPhaseCommitSinkFunction).
    for (const [id, entry] of this.#sealed) {
      if (id > checkpointId) continue;
      this.#committer.commit(entry);
      this.#sealed.delete(id);
    }
  }

  notifyCheckpointAborted(): void {
    // The sealed records stay sealed: a later checkpoint's completion commits them.
  }

  finish(): void {
    // The final checkpoint seals and commits what is open.
    this.#committer.inputEnded();
  }

  close(): void {
    this.#committer.close();
  }

  /** @internal Resolves once every commit issued so far has settled (tests). */
  whenCommitted(): Promise<void> {
    return this.#committer.settled();
  }
}
