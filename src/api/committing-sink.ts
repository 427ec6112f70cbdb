/**
 * The public two-phase-commit sink interface (Flink's `TwoPhaseCommittingSink`: a `SinkWriter`
 * plus a `Committer`, FLIP-143/FLIP-191), with asynchronous hooks. Build one with
 * `sinks.custom({ ... })`; the built-in file and log sinks are built on it too.
 *
 * Life of a record under exactly-once checkpointing (see docs/architecture.md, "Sinks"):
 * 1. `writer.write(record)` on the task thread, synchronously.
 * 2. At checkpoint `n`'s barrier the task calls `writer.preCommit(n)` synchronously: every record
 *    written before the call belongs to checkpoint `n`, every later one to a later checkpoint.
 *    The returned promise may take its time (flush, upload, stage): records keep flowing through
 *    the task meanwhile; only the task's acknowledgement of `n` waits for it. The resolved
 *    committable is stored in checkpoint `n`.
 * 3. When checkpoint `n` is complete (every task acknowledged, its metadata is durable) the
 *    committer's `commit(committable)` runs, asynchronously, one commit at a time per subtask, in
 *    checkpoint order, retried with backoff.
 * 4. After a failure the job restores its latest completed checkpoint `r` and commits every
 *    committable stored in `r` again, before any committable of the new attempt: a commit that
 *    had already succeeded (or half-succeeded) runs a second time with the same committable. So
 *    `commit` MUST be idempotent.
 *
 * Making `commit` idempotent (pick what fits the target system):
 * - **Marker row** (databases): commit the checkpoint's rows and an upsert of a marker row keyed
 *   by `(job, sink, ctx.subtaskIndex)` holding `ctx.checkpointId` in ONE transaction, and skip the
 *   rows when the stored marker is already `>= ctx.checkpointId`. Checkpoint ids only grow over
 *   a job's life (also across restarts and `--restore`), and commits of one writer subtask run in
 *   checkpoint order, so the marker is a high-water mark.
 * - **Deterministic ids** (brokers with deduplication, e.g. JetStream `Nats-Msg-Id`, Kafka-style
 *   idempotent producers, HTTP APIs with idempotency keys): derive each message's id from
 *   `(sink, ctx.subtaskIndex, ctx.checkpointId, index in the committable)`; a repeat is dropped
 *   by the target.
 * - **Rename-if-exists** (files, object stores): stage under a name carrying the checkpoint id in
 *   `preCommit`, and commit by renaming to the final name; a commit that finds the final name
 *   already there (and the staged one gone) has nothing to do.
 *
 * Aborting: committables of aborted (declined, expired) checkpoints are NOT thrown away while the
 * job runs: their records are not replayed, so the committable rolls forward and is committed
 * with the next completed checkpoint. What a failure abandons is (a) what the writer holds and
 * has not pre-committed, for which `writer.abort()` is called when the task fails or is cancelled
 * (best effort: a crashed process calls nothing), and (b) committables of checkpoints after the
 * restored one, which the runtime no longer knows; a sink whose `preCommit` stages data outside
 * the committable (staged files, prepared transactions) removes those lingering stages when the
 * next attempt starts, recognising them by name: their checkpoint id is greater than
 * `ctx.restoredCheckpointId` (see the file sink's sweep).
 */

import type { RuntimeContext } from './functions.js';
import type { CheckpointingMode } from './source.js';

/** What a writer or committer learns about its subtask and the attempt it runs in. */
export interface SinkWriterContext extends RuntimeContext {
  /** The job's checkpointing mode: decides when commits run (see {@link CommittingSinkOptions}). */
  readonly checkpointingMode: CheckpointingMode;
  /**
   * Id of the checkpoint this attempt restored (the same for every subtask); `undefined` on a
   * fresh start. Staged data of checkpoints with a greater id belongs to no completed checkpoint
   * and will never be committed: the place to remove it is `createWriter`.
   */
  readonly restoredCheckpointId: number | undefined;
  /** The sink's name (`sinks.custom({ name })`). */
  readonly sinkName: string;
}

/** What one `commit` call learns besides the committable. */
export interface CommitContext {
  /** The checkpoint whose committable this is (the checkpoint that was pre-committed). */
  readonly checkpointId: number;
  /**
   * Index of the writer subtask that produced the committable. After a restore at another
   * parallelism a committable may be committed by another subtask: key markers and ids by this
   * index, never by the committing subtask's own.
   */
  readonly subtaskIndex: number;
  /** 0 for the first try of this commit in this attempt, +1 for every retry after a failure. */
  readonly retry: number;
  /** True when the committable comes from a restored checkpoint (it may have been committed before). */
  readonly restored: boolean;
  /** The sink's name. */
  readonly sinkName: string;
}

/**
 * Writes records of one subtask and seals them at every barrier. All methods run on the task
 * thread; `write` must not block (buffer, or start I/O without awaiting it and await it in
 * `preCommit`).
 */
export interface CommittingSinkWriter<T, C> {
  /**
   * One record. Synchronous: returning a promise is an error (the task fails with a
   * {@link import('../errors.js').SinkProtocolError}). A throw fails the task.
   */
  write(record: T): void;
  /**
   * Checkpoint `checkpointId`'s barrier: seal everything written so far and return its
   * committable (`undefined` when there is nothing to commit), or a promise of it.
   *
   * Called synchronously at the barrier, so take what belongs to this checkpoint (swap your
   * buffer) before the first `await`: `write` may be called again while the promise is pending,
   * and so may `preCommit` for the next checkpoint (promises may overlap; each call owns what was
   * written before it). The committable is stored in the checkpoint, so it must be a
   * structured-cloneable, msgpack-encodable value (plain objects, arrays, strings, numbers,
   * Uint8Array) holding everything `commit` needs, including after a restart in another process.
   *
   * A throw or a rejection fails the task (it does not merely decline the checkpoint): the
   * records written before the barrier have left the writer, and no later checkpoint would
   * contain them. The job restarts from the latest completed checkpoint and replays them.
   */
  preCommit(checkpointId: number): C | undefined | Promise<C | undefined>;
  /**
   * Checkpoint `checkpointId` completed (Flink's `CheckpointListener`). Informational, on the task
   * thread: commits are the committer's business; a writer may release per-checkpoint resources
   * here. Not called for checkpoints completed before a restore. A throw fails the task.
   */
  notifyCheckpointComplete?(checkpointId: number): void;
  /**
   * End of input (bounded jobs). Optional: the final checkpoint's `preCommit` follows (without
   * checkpointing: `preCommit(0)` followed by its commit).
   */
  finish?(): void | Promise<void>;
  /**
   * The task is failing or being cancelled: discard what was written and not pre-committed
   * (roll back an open transaction, delete an in-progress file). Best effort: errors are logged,
   * and a crashed process calls nothing. `close()` follows.
   */
  abort?(): void | Promise<void>;
  /** Release resources; called last, also after `abort`. */
  close?(): void | Promise<void>;
}

/** Makes committables visible in the target system. One per subtask; commits never overlap. */
export interface Committer<C> {
  /**
   * Makes one committable visible. Idempotent (see the file comment): it runs again after a
   * restore with the same committable, also when it had already succeeded. A throw or rejection
   * is retried (see {@link CommitRetryOptions}); when the retries are used up the task fails and
   * the job restarts from its latest completed checkpoint, whose committables are committed again.
   */
  commit(committable: C, ctx: CommitContext): void | Promise<void>;
  /** Release resources (connections); called when the task ends, after the last commit. */
  close?(): void | Promise<void>;
}

/** Retries of a failing `commit`: exponential backoff, then a task failure. */
export interface CommitRetryOptions {
  /** Retries after the first try (default 3; 0: fail the task on the first error). */
  readonly retries?: number;
  /** Delay before the first retry in ms (default 100); doubles after every retry. */
  readonly backoffMs?: number;
  /** Upper bound of the delay in ms (default 5000). */
  readonly maxBackoffMs?: number;
}

/**
 * `sinks.custom(options)`: a sink made of a writer and a committer.
 *
 * When commits run, by checkpointing mode:
 * - `exactly-once`: after the checkpoint that stored the committable is complete (two-phase
 *   commit). Output is exactly the output of completed checkpoints: never lost, never repeated
 *   (given an idempotent `commit`).
 * - `at-least-once`: as soon as `preCommit` resolves, without waiting for the checkpoint.
 *   Committables are still stored in checkpoints until committed and committed again after a
 *   restore, so nothing is lost; records after the restored checkpoint are replayed and may be
 *   committed twice.
 * - `none` (no checkpointing): `preCommit(0)` at end of input, committed at once. Checkpoint ids
 *   start at 1, so 0 names no checkpoint; an unbounded job without checkpointing never commits.
 */
export interface CommittingSinkOptions<T, C> {
  /** Sink name, for plans, logs and `CommitContext.sinkName` (default `custom`). */
  readonly name?: string;
  /** Creates the writer of one subtask (also after every restart). */
  createWriter(ctx: SinkWriterContext): CommittingSinkWriter<T, C>;
  /** Creates the committer of one subtask. Give this or `commit`, not both. */
  createCommitter?(ctx: SinkWriterContext): Committer<C>;
  /** Shorthand for a committer without resources: `createCommitter: () => ({ commit })`. */
  commit?(committable: C, ctx: CommitContext): void | Promise<void>;
  readonly commitRetry?: CommitRetryOptions;
  /**
   * Everything the sink has committed so far, read back from where it writes (main thread, not
   * during a run). `weir verify` reads it before and after each run and compares the difference
   * between runs; without it a verify of a job with this sink is refused. Optional.
   */
  readCommitted?(): readonly unknown[] | Promise<readonly unknown[]>;
}

/** A validated `sinks.custom(...)` sink, as `stream.sinkTo` takes it. */
export interface CommittingSink<T, C = unknown> {
  readonly kind: 'committing';
  readonly type: string;
  readonly name: string;
  createWriter(ctx: SinkWriterContext): CommittingSinkWriter<T, C>;
  createCommitter(ctx: SinkWriterContext): Committer<C>;
  readonly commitRetry: Readonly<Required<CommitRetryOptions>>;
  /** See {@link CommittingSinkOptions.readCommitted}. */
  readCommitted?(): readonly unknown[] | Promise<readonly unknown[]>;
  /**
   * What `readCommitted()` returns: `appended` (default) every record committed so far, so a
   * run's output is the difference before/after it; `latest-per-key` the latest record per key
   * (an upsert sink), where a run that rewrites the same values leaves no difference: `weir
   * verify` refuses such a sink (see VerifyUnsupportedSinkError).
   */
  readonly committedOutput?: 'appended' | 'latest-per-key';
}

/** Whether `sink` is a two-phase-commit sink built with `sinks.custom` (vs. a legacy writer sink). */
export function isCommittingSink(sink: unknown): sink is CommittingSink<unknown, unknown> {
  return typeof sink === 'object' && sink !== null && (sink as { kind?: unknown }).kind === 'committing';
}
