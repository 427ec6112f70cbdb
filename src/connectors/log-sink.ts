/**
 * `sinks.log({ dir, topic, key?, partitions?, writer? })`: appends records to a topic of the
 * embedded log (`openLog`). Creates the topic when it does not exist.
 *
 A committing sink (`src/api/committing-sink.ts`, the interface of `sinks.custom`).
 *
 * Under exactly-once checkpointing it is transactional (two-phase commit): records written since
 * the last barrier form the open transaction; `preCommit` at the barrier encodes and routes them
 * (a record that cannot be encoded fails the task there, before it can enter a snapshot) and
 * returns them as the committable; the committer appends it, once its checkpoint completed, with
 * `topic.appendPreparedTransaction`, whose marker is written in the same LMDB transaction as the
 * records, so a repeated commit (after a restore) appends nothing: the marker-row pattern. The
 * log then holds exactly the output of completed checkpoints (plus the final one), never a
 * duplicate.
 *
 * Transaction ids are unique per (writer instance, subtask, attempt, checkpoint): a random nonce
 * per writer instance keeps two jobs, or two runs of one job, from colliding on ids like
 * `0@0:1`. A sealed transaction keeps its id and writer name in the snapshot, so its commit after
 * a restore (at any parallelism) is recognised. Markers are kept for the newest
 * `transactionMarkers` (default 1000) transactions per (topic, writer); give each job its own
 * `writer` when several busy jobs write one topic.
 *
 * Without exactly-once (at-least-once or no checkpointing) the writer appends in batches as
 * records arrive (every 4096 records, and at every barrier and at end of input): at-least-once by
 * nature, after a restart it may append records again. Its `preCommit` resolves once every
 * append issued so far is durable, so a checkpoint's acknowledgement (and, at the end, the task)
 * waits for the appends it covers; it returns no committable.
 *
 * Appends are asynchronous conditional writes (`topic.ts`): the runtime may terminate a worker at
 * any moment, and a thread terminated inside a synchronous LMDB transaction would leave the write
 * lock held for the whole process. A failed write-through append fails the task at the writer's
 * next call (or its pre-commit); a failed commit is retried, then fails the task.
 */

import { randomBytes } from 'node:crypto';
import type {
  Committer,
  CommittingSink,
  CommittingSinkWriter,
  SinkWriterContext,
} from '../api/committing-sink.js';
import { InvalidOptionError, LogTopicNotFoundError } from '../errors.js';
import { type Log, openLog } from '../log/log.js';
import type { AppendOptions } from '../log/log-options.js';
import type { PreparedAppend, Topic } from '../log/topic.js';
import { readCommittedLogTopic } from './committed-output.js';
import { custom } from './custom-sink.js';
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

export function log<T = unknown>(options: LogSinkOptions<T>): CommittingSink<T, LogSinkTransaction> {
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
  const sink = custom<T, LogSinkTransaction>({
    name: 'log',
    createWriter(ctx: SinkWriterContext): CommittingSinkWriter<T, LogSinkTransaction> {
      const handle = openLog(dir);
      try {
        const t = openOrCreate<T>(handle, topic, partitions);
        const routing: AppendOptions<T> = key ? { key } : {};
        const name = writer ?? `sinks.log:${ctx.operatorName}`;
        return ctx.checkpointingMode === 'exactly-once'
          ? new TransactionalLogWriter<T>(handle, t, routing, name, ctx)
          : new DirectLogWriter<T>(handle, t, routing, name, ctx);
      } catch (error) {
        closeLog(handle, 'sinks.log');
        throw error;
      }
    },
    createCommitter(): Committer<LogSinkTransaction> {
      // Opened lazily: under at-least-once (and without checkpointing) nothing is ever committed.
      let handle: Log | null = null;
      let t: Topic<unknown> | null = null;
      return {
        async commit(entry) {
          if (handle === null) handle = openLog(dir);
          t ??= handle.topic(topic);
          await t.appendPreparedTransaction(entry.batch, {
            transactionId: entry.transactionId,
            writer: entry.writer,
          });
        },
        close() {
          if (handle !== null) closeLog(handle, 'sinks.log');
        },
      };
    },
    readCommitted: () => readCommittedLogTopic(dir, topic),
  });
  return { ...sink, type: 'log' };
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

/** Appends batches asynchronously and in order (write-through); a failure surfaces at the next call. */
class DirectLogWriter<T> implements CommittingSinkWriter<T, LogSinkTransaction> {
  #buffer: T[] = [];
  #batches = 0;
  readonly #nonce = randomBytes(6).toString('hex');
  /** The chain of appends in flight, in issue order. */
  #chain: Promise<void> = Promise.resolve();
  #failure: unknown;

  constructor(
    readonly handle: Log,
    readonly topic: Topic<T>,
    readonly routing: AppendOptions<T>,
    readonly writer: string,
    readonly ctx: SinkWriterContext,
  ) {}

  write(value: T): void {
    this.#buffer.push(value);
    if (this.#buffer.length >= CHUNK) this.#flush();
  }

  /** Appends what is buffered and resolves once every append so far is durable: nothing to commit. */
  async preCommit(): Promise<undefined> {
    this.#flush();
    await this.#chain;
    this.#check();
    return undefined;
  }

  finish(): void {
    this.#flush();
  }

  close(): void {
    closeLog(this.handle, 'sinks.log');
  }

  #check(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }

  #flush(): void {
    this.#check();
    if (this.#buffer.length === 0) return;
    const records = this.#buffer;
    this.#buffer = [];
    const batch = this.topic.prepareAppend(records, this.routing);
    // Batches are transactions too, so that a retried append is idempotent.
    const transaction = {
      transactionId: `${this.#nonce}/${this.ctx.subtaskIndex}@${this.ctx.attempt}#${this.#batches++}`,
      writer: this.writer,
    };
    this.#chain = this.#chain.then(async () => {
      if (this.#failure !== undefined) return;
      try {
        await this.topic.appendPreparedTransaction(batch, transaction);
      } catch (error) {
        this.#failure = error;
      }
    });
  }
}

class TransactionalLogWriter<T> implements CommittingSinkWriter<T, LogSinkTransaction> {
  /** The open transaction: records since the last barrier. */
  #open: T[] = [];
  /** Distinguishes this writer instance's transaction ids from every other run's. */
  readonly #nonce = randomBytes(6).toString('hex');

  constructor(
    readonly handle: Log,
    readonly topic: Topic<T>,
    readonly routing: AppendOptions<T>,
    readonly writer: string,
    readonly ctx: SinkWriterContext,
  ) {}

  write(value: T): void {
    this.#open.push(value);
  }

  preCommit(checkpointId: number): LogSinkTransaction | undefined {
    if (this.#open.length === 0) return undefined;
    const records = this.#open;
    this.#open = [];
    // Encoding here (not at commit) makes a bad record fail this checkpoint's task, before it
    // could enter a snapshot whose commit would fail after every restore.
    return {
      transactionId: `${this.#nonce}/${this.ctx.subtaskIndex}@${this.ctx.attempt}:${checkpointId}`,
      writer: this.writer,
      checkpointId,
      batch: this.topic.prepareAppend(records, this.routing),
    };
  }

  close(): void {
    closeLog(this.handle, 'sinks.log');
  }
}
