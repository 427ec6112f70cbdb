/**
 * Drives a {@link CommittingSink} (`sinks.custom`) in a task: the writer on the task thread, its
 * asynchronous pre-commits, and one committer that commits in checkpoint order with retries.
 * The decisions live in the pure {@link step} of `commit-ledger.ts`; this file is the I/O edge
 * that feeds it events and carries out its effects.
 *
 * Task contract (see `StreamOperator`): `snapshotState` calls `preCommit` synchronously at the
 * barrier and returns its operator state as a promise, which the task's asynchronous snapshot
 * part awaits before it acknowledges: a slow pre-commit delays that checkpoint's
 * acknowledgement, never the task loop. Failures that surface outside a call from the task (a
 * pre-commit rejection, a commit that used up its retries) go to the handler the task binds with
 * `bindAsyncFailure`, which fails the task. `settle()` lets the task wait, at the end, until every
 * commit that can run has succeeded.
 *
 * Operator state: one entry per writer subtask ({@link CommittablesStateEntry}), so that
 * redistribution on a rescaled restore keeps a writer's committables together and one subtask
 * commits them in order.
 *
 * Why one file: it is the I/O edge of one pure state machine (commit-ledger.ts): the writer calls,
 * pre-commit promises and the committer loop act on the same ledger and must be read together to
 * see that commits stay in checkpoint order.
 */

import type {
  CommitContext,
  Committer,
  CommittingSink,
  CommittingSinkWriter,
  SinkWriterContext,
} from '../../api/committing-sink.js';
import type { RuntimeContext } from '../../api/functions.js';
import type { SinkContext } from '../../api/source.js';
import { SinkCommitError, SinkProtocolError } from '../../errors.js';
import {
  AbstractStreamOperator,
  type OperatorSnapshot,
  type Output,
  userCodeError,
} from '../operators/stream-operator.js';
import {
  type CommitLedger,
  type CommitRetryPolicy,
  committablesFor,
  committedThrough,
  emptyLedger,
  idle,
  type LedgerEffect,
  type LedgerEvent,
  type PendingCommittable,
  step,
} from './commit-ledger.js';

/** Operator-state entry: the uncommitted committables of one writer subtask. */
export interface CommittablesStateEntry {
  readonly writerSubtask: number;
  readonly committables: readonly { readonly checkpointId: number; readonly committable: unknown }[];
}

function isStateEntry(e: unknown): e is CommittablesStateEntry {
  return (
    typeof e === 'object' &&
    e !== null &&
    Number.isInteger((e as CommittablesStateEntry).writerSubtask) &&
    Array.isArray((e as CommittablesStateEntry).committables)
  );
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    (typeof v === 'object' || typeof v === 'function') &&
    v !== null &&
    typeof (v as { then?: unknown }).then === 'function'
  );
}

const NO_OUTPUT: Output = {
  collect() {
    throw new Error('a sink has no output');
  },
};

export class CommittingSinkOperator extends AbstractStreamOperator {
  readonly #sink: CommittingSink<unknown, unknown>;
  readonly #sinkCtx: SinkContext;
  readonly #writer: CommittingSinkWriter<unknown, unknown>;
  readonly #committer: Committer<unknown>;
  readonly #policy: CommitRetryPolicy;
  #ledger: CommitLedger;
  /** Pre-commits not yet settled, by checkpoint id: a snapshot waits for every one `<=` its id. */
  readonly #sealing = new Map<number, Promise<void>>();
  /** Set while `writer.finish()`'s promise is pending: later pre-commits wait for it. */
  #finishing: Promise<void> | null = null;
  #finished = false;
  #closed = false;
  /** First asynchronous failure; once set, nothing new starts. */
  #failure: unknown;
  #failTask: (e: unknown) => void = () => {};
  #retryTimer: ReturnType<typeof setTimeout> | null = null;
  readonly #settleWaiters: { resolve(): void; reject(e: unknown): void }[] = [];
  /** {@link awaitCommitted} callers: resolved `true` once committed through their id, else `false`. */
  readonly #committedWaiters: { checkpointId: number; resolve(ok: boolean): void }[] = [];
  #commits = 0;
  #commitRetries = 0;
  /** The commit running now (never rejects), or null: teardown waits for it. */
  #inFlight: Promise<void> | null = null;
  /**
   * Settles when `close()`'s teardown steps have run, after the commit in flight settled: the
   * task awaits it before it reports its end, so a cancelled attempt's commit never overlaps the
   * restored attempt's re-commit of the same committable (within the scheduler's cancel grace).
   */
  whenClosed: Promise<void> = Promise.resolve();

  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    sink: CommittingSink<unknown, unknown>,
    sinkCtx: SinkContext,
  ) {
    super(nodeId, name, uid, ctx, NO_OUTPUT);
    this.#sink = sink;
    this.#sinkCtx = sinkCtx;
    this.#policy = sink.commitRetry;
    this.#ledger = emptyLedger(sinkCtx.checkpointingMode);
    const writerCtx: SinkWriterContext = {
      subtaskIndex: ctx.subtaskIndex,
      parallelism: ctx.parallelism,
      attempt: ctx.attempt,
      operatorName: ctx.operatorName,
      checkpointingMode: sinkCtx.checkpointingMode,
      restoredCheckpointId: sinkCtx.restoredCheckpointId,
      sinkName: sink.name,
    };
    try {
      this.#writer = sink.createWriter(writerCtx);
      this.#committer = sink.createCommitter(writerCtx);
    } catch (e) {
      throw userCodeError(name, e);
    }
  }

  /** Called by the task before `open()`: where asynchronous failures go. */
  bindAsyncFailure(fail: (e: unknown) => void): void {
    this.#failTask = fail;
  }

  /**
   * Commit-on-restore: the restored checkpoint completed, so its committables are committed
   * (again). None arrive when the checkpoint recorded its commits done (`restoredState` is empty).
   */
  override open(): void {
    const restored = this.#sinkCtx.restoredState;
    if (restored === undefined) return;
    const entries: PendingCommittable[] = [];
    for (const e of restored) {
      if (!isStateEntry(e)) {
        throw new SinkProtocolError(
          this.#sink.name,
          `the restored state of operator ${this.name} was not written by a committing sink (uid '${this.uid}'); give the sink a new uid`,
        );
      }
      for (const c of e.committables) {
        entries.push({
          checkpointId: c.checkpointId,
          subtaskIndex: e.writerSubtask,
          committable: c.committable,
          restored: true,
        });
      }
    }
    const restoredId =
      this.#sinkCtx.restoredCheckpointId ?? Math.max(0, ...entries.map((e) => e.checkpointId));
    this.#dispatch({ kind: 'restored', checkpointId: restoredId, entries });
  }

  processElement(value: unknown): void {
    this.recordsIn++;
    let r: unknown;
    try {
      r = this.#writer.write(value);
    } catch (e) {
      throw userCodeError(this.name, e);
    }
    if (isThenable(r)) {
      throw new SinkProtocolError(
        this.#sink.name,
        'write() returned a promise; write must be synchronous (buffer the record, and do the I/O in preCommit)',
      );
    }
  }

  override snapshotState(checkpointId: number): OperatorSnapshot {
    this.#preCommit(checkpointId);
    // Every pre-commit up to this one: the snapshot lists their committables.
    const waits = [...this.#sealing].filter(([id]) => id <= checkpointId).map(([, p]) => p);
    const operatorState = Promise.all(waits).then(() => this.#stateEntries(checkpointId));
    // The task awaits this only after the chain's earlier operators serialized their state, or
    // never when it fails first: a rejection (a failed pre-commit, reported through #fail) must
    // not count as unhandled meanwhile. An unhandled rejection kills the worker, and the job's
    // error then lost the sink's operator name (and could lose the race to the declined
    // checkpoint's CheckpointFailureThresholdError).
    operatorState.catch(() => undefined);
    return { operatorState, keyedState: undefined };
  }

  /** Calls `preCommit` now (or once `finish()` settled) and feeds its outcome to the ledger. */
  #preCommit(checkpointId: number): void {
    let result: Promise<unknown>;
    if (this.#finishing) {
      result = this.#finishing.then(() => this.#writer.preCommit(checkpointId));
    } else {
      let r: unknown;
      try {
        r = this.#writer.preCommit(checkpointId);
      } catch (e) {
        // Thrown to the task loop, which fails the task; the ledger never saw this pre-commit.
        throw userCodeError(this.name, e);
      }
      result = Promise.resolve(r);
    }
    this.#dispatch({ kind: 'pre-commit-started', checkpointId });
    const settled = result.then(
      (committable) => {
        this.#sealing.delete(checkpointId);
        this.#dispatch({
          kind: 'pre-committed',
          checkpointId,
          subtaskIndex: this.ctx.subtaskIndex,
          committable,
        });
      },
      (e: unknown) => {
        this.#sealing.delete(checkpointId);
        // A task failure, not a decline: these records left the writer and no later checkpoint
        // holds them; only a restart (which replays them) keeps the output exact.
        const error = userCodeError(this.name, e);
        this.#fail(error);
        throw error;
      },
    );
    this.#sealing.set(checkpointId, settled);
    // The rejection is reported through #fail and through the snapshot that awaits it; this
    // handler only keeps a pre-commit no snapshot awaits (id 0) from being an unhandled rejection.
    settled.catch(() => undefined);
  }

  #stateEntries(checkpointId: number): CommittablesStateEntry[] {
    const byWriter = new Map<number, { checkpointId: number; committable: unknown }[]>();
    for (const e of committablesFor(this.#ledger, checkpointId)) {
      let list = byWriter.get(e.subtaskIndex);
      if (!list) byWriter.set(e.subtaskIndex, (list = []));
      list.push({ checkpointId: e.checkpointId, committable: e.committable });
    }
    return [...byWriter].map(([writerSubtask, committables]) => ({ writerSubtask, committables }));
  }

  override notifyCheckpointComplete(checkpointId: number): void {
    this.#dispatch({ kind: 'checkpoint-complete', checkpointId });
    try {
      this.#writer.notifyCheckpointComplete?.(checkpointId);
    } catch (e) {
      throw userCodeError(this.name, e);
    }
  }

  // Aborted checkpoints need nothing: their committables stay pending and are committed with
  // the next completed checkpoint (their records are not replayed).

  override finish(): void {
    this.#finished = true;
    let r: unknown;
    try {
      r = this.#writer.finish?.();
    } catch (e) {
      throw userCodeError(this.name, e);
    }
    if (isThenable(r)) {
      const finishing = Promise.resolve(r).then(
        () => {
          this.#finishing = null;
        },
        (e: unknown) => {
          const error = userCodeError(this.name, e);
          this.#fail(error);
          throw error;
        },
      );
      finishing.catch(() => undefined); // reported through #fail and the pre-commits that wait for it
      this.#finishing = finishing;
    }
    // Without checkpointing no barrier ever comes: seal and commit everything now.
    if (this.#sinkCtx.checkpointingMode === 'none') this.#preCommit(0);
  }

  /** Resolves once nothing that can be committed is left; rejects with the task's failure. */
  settle(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (idle(this.#ledger) && this.#sealing.size === 0) return Promise.resolve();
    return new Promise((resolve, reject) => this.#settleWaiters.push({ resolve, reject }));
  }

  /**
   * Resolves `true` once every committable of checkpoints `<= checkpointId` is committed (and no
   * pre-commit of them is still sealing); `false` as soon as the operator failed or closed, when
   * they are left to a restore's commit. Never rejects: the failure reaches the task separately.
   */
  awaitCommitted(checkpointId: number): Promise<boolean> {
    if (this.#committedThrough(checkpointId)) return Promise.resolve(true);
    if (this.#failure !== undefined || this.#closed) return Promise.resolve(false);
    return new Promise((resolve) => this.#committedWaiters.push({ checkpointId, resolve }));
  }

  #committedThrough(checkpointId: number): boolean {
    if (!committedThrough(this.#ledger, checkpointId)) return false;
    for (const id of this.#sealing.keys()) if (id <= checkpointId) return false;
    return true;
  }

  #wakeCommittedWaiters(): void {
    for (let i = this.#committedWaiters.length - 1; i >= 0; i--) {
      const w = this.#committedWaiters[i];
      if (this.#committedThrough(w.checkpointId)) {
        this.#committedWaiters.splice(i, 1);
        w.resolve(true);
      }
    }
  }

  override counters(): Readonly<Record<string, number>> {
    return { commits: this.#commits, commitRetries: this.#commitRetries };
  }

  override close(): void {
    this.#closed = true;
    for (const w of this.#committedWaiters.splice(0)) w.resolve(this.#committedThrough(w.checkpointId));
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    const ended = this.#finished && this.#failure === undefined;
    const steps: [string, () => unknown][] = [];
    const inFlight = this.#inFlight;
    if (inFlight !== null) steps.push(['commit in flight', () => inFlight]);
    if (!ended && this.#writer.abort) steps.push(['abort', () => this.#writer.abort!()]);
    if (this.#writer.close) steps.push(['writer close', () => this.#writer.close!()]);
    if (this.#committer.close) steps.push(['committer close', () => this.#committer.close!()]);
    // Sequential, and never thrown: teardown must not hide the task's own outcome.
    this.whenClosed = steps.reduce<Promise<void>>(
      (prev, [what, run]) =>
        prev.then(async () => {
          try {
            await run();
          } catch (e) {
            console.warn(`weir: sink ${this.#sink.name} (${this.name}): ${what} failed:`, e);
          }
        }),
      Promise.resolve(),
    );
  }

  // ---------------------------------------------------------------- ledger edge

  #dispatch(event: LedgerEvent): void {
    const { next, effects } = step(this.#ledger, event, this.#policy);
    this.#ledger = next;
    for (const effect of effects) this.#apply(effect);
    if (this.#settleWaiters.length > 0 && idle(this.#ledger) && this.#sealing.size === 0) {
      for (const w of this.#settleWaiters.splice(0)) w.resolve();
    }
    if (this.#committedWaiters.length > 0) this.#wakeCommittedWaiters();
  }

  #apply(effect: LedgerEffect): void {
    if (this.#closed || this.#failure !== undefined) return;
    switch (effect.kind) {
      case 'commit': {
        const { entry, retry } = effect;
        if (retry > 0) this.#commitRetries++;
        const ctx: CommitContext = {
          checkpointId: entry.checkpointId,
          subtaskIndex: entry.subtaskIndex,
          retry,
          restored: entry.restored,
          sinkName: this.#sink.name,
        };
        // Started from a microtask: a synchronous throw in commit is a failed try like a rejection.
        const commit: Promise<void> = Promise.resolve()
          .then(() => this.#committer.commit(entry.committable, ctx))
          .then(
            () => {
              if (this.#inFlight === commit) this.#inFlight = null;
              if (this.#closed) return;
              this.#commits++;
              this.#dispatch({ kind: 'commit-succeeded' });
            },
            (error: unknown) => {
              if (this.#inFlight === commit) this.#inFlight = null;
              if (this.#closed) return;
              this.#dispatch({ kind: 'commit-failed', error });
            },
          );
        this.#inFlight = commit;
        break;
      }
      case 'schedule-retry':
        this.#retryTimer = setTimeout(() => {
          this.#retryTimer = null;
          if (!this.#closed) this.#dispatch({ kind: 'retry-due' });
        }, effect.delayMs);
        break;
      case 'give-up':
        this.#fail(
          userCodeError(
            this.name,
            new SinkCommitError(
              this.#sink.name,
              effect.entry.checkpointId,
              effect.entry.subtaskIndex,
              effect.tries,
              {
                cause: effect.error,
              },
            ),
          ),
        );
        break;
      default: {
        const never: never = effect;
        throw new Error(`unknown ledger effect ${JSON.stringify(never)}`);
      }
    }
  }

  #fail(error: unknown): void {
    if (this.#failure !== undefined || this.#closed) return;
    this.#failure = error;
    for (const w of this.#settleWaiters.splice(0)) w.reject(error);
    for (const w of this.#committedWaiters.splice(0)) w.resolve(false);
    this.#failTask(error);
  }
}
