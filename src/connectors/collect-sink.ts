/**
 * `sinks.collect(name)`: hands records back to the job client, where `JobResult.sinks[name]`
 * holds them.
 *
 * Under exactly-once checkpointing it is transactional (two-phase commit): records written since
 * the last barrier form the open transaction; `preCommit` at the barrier seals it and puts it in
 * the snapshot; `notifyCheckpointComplete` delivers it, tagged with its checkpoint id, so the
 * client can drop a repeated delivery (commit is idempotent). On restore, sealed transactions of
 * the restored checkpoint are delivered again (the client drops what it already has) and
 * everything after it is discarded by the rewind. That deduplication lives in one client: a run
 * restored by a new client (a savepoint, `--restore`) cannot recognise a repeat, which is why the
 * runtime restores no transactions at all from a checkpoint that recorded its commits done
 * (stop-with-savepoint, `CheckpointMetadata.sinksCommitted`). Without exactly-once it delivers in chunks as
 * records arrive (at-least-once by nature: after a restart it may repeat records).
 */

import type { Sink, SinkContext, SinkWriter } from '../api/source.js';
import { InvalidOptionError } from '../errors.js';

/** Records per non-transactional delivery message (bounds message size and latency). */
const CHUNK = 4096;

/** Snapshot entry of a sealed, not yet committed transaction. */
export interface CollectTransaction {
  /** Unique per (subtask that wrote it, checkpoint): survives rescaling, so commits stay idempotent. */
  readonly transactionId: string;
  readonly checkpointId: number;
  readonly records: unknown[];
}

export function collect<T = unknown>(name: string): Sink<T> {
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidOptionError('sinks.collect(name)', 'name must be a non-empty string');
  }
  return {
    type: 'collect',
    name,
    createWriter(ctx: SinkContext): SinkWriter<T> {
      return ctx.checkpointingMode === 'exactly-once'
        ? new TransactionalCollectWriter<T>(name, ctx)
        : new DirectCollectWriter<T>(name, ctx);
    },
  };
}

class DirectCollectWriter<T> implements SinkWriter<T> {
  #buffer: unknown[] = [];
  constructor(
    readonly name: string,
    readonly ctx: SinkContext,
  ) {}

  write(value: T): void {
    this.#buffer.push(value);
    if (this.#buffer.length >= CHUNK) this.#deliver();
  }

  /** Deliver at every barrier too, so that at-least-once output keeps pace with checkpoints. */
  preCommit(): unknown[] {
    this.#deliver();
    return [];
  }

  finish(): void {
    this.#deliver();
  }

  #deliver(): void {
    if (this.#buffer.length === 0) return;
    const records = this.#buffer;
    this.#buffer = [];
    this.ctx.deliver(this.name, records, null);
  }
}

class TransactionalCollectWriter<T> implements SinkWriter<T> {
  /** The open transaction: records since the last barrier. */
  #open: unknown[] = [];
  /** Sealed transactions by checkpoint id, awaiting `notifyCheckpointComplete`. */
  readonly #sealed = new Map<number, unknown[]>();

  constructor(
    readonly name: string,
    readonly ctx: SinkContext,
  ) {
    // Commit-on-restore: the restored checkpoint completed, so its sealed transactions are
    // committed now; the client ignores ids it has already received.
    for (const entry of (ctx.restoredState ?? []) as CollectTransaction[]) {
      ctx.deliver(name, entry.records, entry.transactionId);
    }
  }

  write(value: T): void {
    this.#open.push(value);
  }

  preCommit(checkpointId: number): unknown[] {
    this.#sealed.set(checkpointId, this.#open);
    this.#open = [];
    const state: CollectTransaction[] = [];
    for (const [id, records] of this.#sealed) {
      state.push({ transactionId: this.#transactionId(id), checkpointId: id, records });
    }
    return state;
  }

  notifyCheckpointComplete(checkpointId: number): void {
    // A completed checkpoint also commits every older sealed transaction (their own notification
    // may have been lost or subsumed, as in Flink's TwoPhaseCommitSinkFunction).
    for (const [id, records] of this.#sealed) {
      if (id > checkpointId) continue;
      this.#sealed.delete(id);
      this.ctx.deliver(this.name, records, this.#transactionId(id));
    }
  }

  notifyCheckpointAborted(): void {
    // The sealed records stay sealed: a later checkpoint's completion commits them. Moving them
    // back to the open transaction would also be correct; keeping them avoids a copy.
  }

  #transactionId(checkpointId: number): string {
    return `${this.ctx.subtaskIndex}@${this.ctx.attempt}:${checkpointId}`;
  }

  finish(): void {
    // The final checkpoint seals and commits what is open; nothing to do here.
  }
}
