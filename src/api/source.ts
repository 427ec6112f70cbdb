/**
 * The source and sink interfaces the runtime drives. Connectors implement them; a job names one
 * with `env.fromSource(...)` / `stream.sinkTo(...)`. Source and sink objects are built in every
 * thread from the job module, so they may hold functions; only their snapshots cross threads.
 */

import type { Collector, RuntimeContext } from './functions.js';
import type { Logger } from './logger.js';

export interface SourceContext extends RuntimeContext {
  /**
   * Operator state restored from a checkpoint for this source (positions, split state), already
   * redistributed to this subtask; `undefined` on a fresh start.
   */
  readonly restoredState: readonly unknown[] | undefined;
  /**
   * The job's `logger` (records reach it on the main thread, with `job`, `task` and `operator`
   * fields). Always set by the runtime; optional so that a reader can be built outside a job.
   */
  readonly logger?: Logger;
}

/** Outcome of one {@link SourceReader.poll}. */
export type PollResult =
  | { readonly state: 'more' }
  /**
   * Nothing available now; poll again after `ms` (a rate limit or an idle unbounded input), or
   * as soon as `wake` resolves (an input that can tell when it has something again).
   */
  | { readonly state: 'idle'; readonly ms: number; readonly wake?: Promise<void> }
  | { readonly state: 'end' };

export interface SourceReader<T> {
  /**
   * Emits at most `max` records into `out` and says whether more may follow. Runs on the task
   * thread between control messages, so it must not block; a checkpoint may be taken between
   * any two calls.
   */
  poll(out: Collector<T>, max: number): PollResult;
  /**
   * The reader's positions as operator-state entries (one per split), taken in the same step
   * in which the barrier is emitted: no record falls between the two.
   */
  snapshotState(checkpointId: number): unknown[];
  /** Counters reported in the job's operator metrics (e.g. `skippedLines`), summed over subtasks. */
  metrics?(): Readonly<Record<string, number>>;
  /**
   * How far this reader is behind the end of what it reads (records of a log or stream not yet
   * emitted, bytes of a file not yet read), for the dashboard and `weir_source_lag_*`.
   * `undefined` while not known. Called when the job samples its metrics (about once a second),
   * never per record: it may cost a system call, not I/O that waits.
   */
  lag?(): SourceLag | undefined;
  close?(): void;
}

/** A source's distance from the end of its input; `unit` says what `value` counts. */
export interface SourceLag {
  readonly value: number;
  readonly unit: 'records' | 'bytes';
}

export interface Source<T> {
  /** Connector name, for plans and logs (e.g. `sequence`). */
  readonly type: string;
  /** Bounded sources end; the job finishes when all of them have. */
  readonly bounded: boolean;
  createReader(ctx: SourceContext): SourceReader<T>;
}

/**
 * How the job checkpoints; sinks decide from it whether to run two-phase commit. The one
 * definition of the checkpointing mode: {@link CheckpointMode} is this without `'none'`.
 */
export type CheckpointingMode = 'exactly-once' | 'at-least-once' | 'none';

/** The guarantee of a job that checkpoints (`checkpointing.mode`, the barrier handler, restore planning). */
export type CheckpointMode = Exclude<CheckpointingMode, 'none'>;

export interface SinkContext extends RuntimeContext {
  readonly checkpointingMode: CheckpointingMode;
  /**
   * The sink's pending transactions restored from a checkpoint, redistributed to this subtask;
   * `undefined` on a fresh start. Empty when the checkpoint recorded that its commits completed
   * (a savepoint whose stop waited for them): nothing is left to commit on restore.
   */
  readonly restoredState: readonly unknown[] | undefined;
  /**
   * Id of the checkpoint this attempt was restored from (the same for every subtask, also one
   * whose share of `restoredState` is empty); `undefined` on a fresh start. A sink that stages
   * files uses it to tell staged files of that checkpoint from those of later, failed ones.
   */
  readonly restoredCheckpointId?: number;
  /** The job's `logger`, as {@link SourceContext.logger}. */
  readonly logger?: Logger;
  /**
   * Hands records to the job client (collect sink). `transactionId` names a committed
   * transaction: the client takes each id once, so a repeated commit delivers nothing twice.
   * `null` for non-transactional delivery.
   */
  deliver(sinkName: string, records: unknown[], transactionId: string | null): void;
}

export interface SinkWriter<T> {
  write(value: T): void;
  /** Two-phase commit, phase one: seal what was written since the last barrier; returns state to snapshot. */
  preCommit?(checkpointId: number): unknown[];
  /** Phase two: the checkpoint is complete; make its transaction visible. Idempotent. */
  notifyCheckpointComplete?(checkpointId: number): void;
  notifyCheckpointAborted?(checkpointId: number): void;
  /** End of input: flush everything (the final checkpoint follows when checkpointing is on). */
  finish?(): void;
  close?(): void;
}

export interface Sink<T> {
  readonly type: string;
  /** Name under which `JobResult.sinks` reports collected records (collect sink), else the type. */
  readonly name: string;
  createWriter(ctx: SinkContext): SinkWriter<T>;
}
