/**
 * The checkpoint coordinator: triggers checkpoints (periodically and on request), collects the
 * tasks' acknowledgements and declines, times checkpoints out, commits completed ones through
 * the injected durable `commit` (the commit point), keeps them in a
 * {@link CompletedCheckpointStore}, and tells the tasks what happened.
 *
 * Event-driven and single-threaded: every method runs to completion on the main thread; the
 * only asynchronous step is `commit`. All time comes from the injected {@link CoordinatorClock}
 * and every decision is a pure function ({@link decideTrigger}, {@link PendingCheckpoint},
 * {@link CheckpointFailureManager}), so tests drive it with a fake clock and no real timers.
 *
 * Lifecycle of one checkpoint:
 *   trigger → acknowledging ──all acks──► committing ──commit ok──► completed
 *                 │ decline / timeout /        │ commit failed
 *                 │ subsumed / stop            ▼
 *                 └────────────────────────► aborted
 * A committing checkpoint is past the point of no return for the tasks (all state is durable);
 * it is neither timed out, subsumed, nor aborted by `stop()`: it completes or fails on its own.
 *
 * Timers: at most one periodic-trigger timer, plus one timeout timer per acknowledging
 * checkpoint. `stop()` clears all of them synchronously.
 *
 * Tasks that finished their input ({@link taskInputEnded}) keep taking part (FLIP-147, see
 * checkpoint-plan.ts): periodic checkpoints go on until every source has ended, trigger the
 * ended tasks directly, and still wait for every task's acknowledgement.
 *
 * Why one file: the coordinator is one state machine (pending checkpoints, waiters, the trigger
 * timer, min-pause and concurrency limits, decline and abort) whose transitions must be read
 * together to see that ids only grow and that at most one checkpoint completes per id; its helpers
 * are the small private types at the top.
 */

import {
  CheckpointDeclinedError,
  type CheckpointFailureReason,
  type CheckpointFailureThresholdError,
} from '../errors.js';
import { assertNever } from '../util/assert-never.js';
import {
  type CheckpointCoordinatorOptions,
  type ResolvedCheckpointCoordinatorOptions,
  resolveCheckpointCoordinatorOptions,
} from './checkpoint-coordinator-options.js';
import { CheckpointFailureManager } from './checkpoint-failure-manager.js';
import type { CheckpointKind } from './checkpoint-kind.js';
import { allSourcesEnded, calculateCheckpointPlan, lateTriggersOnInputEnd } from './checkpoint-plan.js';
import {
  decideTrigger,
  type TriggerDecision,
  type TriggerWaitReason,
} from './checkpoint-trigger-decision.js';
import type { CompletedCheckpoint, TaskAcknowledgement } from './completed-checkpoint.js';
import { CompletedCheckpointStore } from './completed-checkpoint-store.js';
import type { CoordinatorClock, TimerHandle } from './coordinator-clock.js';
import { type AcknowledgeResult, PendingCheckpoint } from './pending-checkpoint.js';

/** The `checkpointId` of a {@link CheckpointDeclinedError} for a request that never got an id. */
export const NO_CHECKPOINT_ID = -1;

/** How the coordinator reaches the tasks. Calls may return a promise; a rejection is handled. */
export interface CheckpointGateway {
  /**
   * Start checkpoint `checkpointId` on `tasks` (task keys), directly: the running sources and the
   * tasks whose input ended (see checkpoint-plan.ts), or every task for a `final` checkpoint. A
   * task whose input ended later is triggered by a second call naming only it. A throw or
   * rejection aborts the checkpoint as `'task-failure'`.
   */
  triggerSources(
    checkpointId: number,
    timestamp: number,
    tasks: readonly string[],
    kind: CheckpointKind,
  ): void | Promise<void>;
  /** The checkpoint is durable: two-phase-commit sinks may commit. Sent only while started. */
  notifyComplete(checkpointId: number): void | Promise<void>;
  /** The checkpoint was aborted: tasks may drop its state. Sent only while started. */
  notifyAborted(checkpointId: number, reason: CheckpointFailureReason): void | Promise<void>;
}

export interface AbortedCheckpoint {
  readonly checkpointId: number;
  readonly kind: CheckpointKind;
  /** Trigger time, ms since the epoch. */
  readonly timestamp: number;
  readonly abortedAtMs: number;
  readonly reason: CheckpointFailureReason;
  /** The error its waiters were rejected with; `cause` is the task's error, if it sent one. */
  readonly error: CheckpointDeclinedError;
}

/** Observers, called synchronously. A throwing listener is reported to `onError`. */
export interface CheckpointCoordinatorListener {
  onCompleted?(checkpoint: CompletedCheckpoint): void;
  onAborted?(aborted: AbortedCheckpoint): void;
  /**
   * More consecutive checkpoints failed than `tolerableFailures`: fail the job. The error is a
   * task-kind failure (Flink: a global failover), so the restart strategy decides what follows.
   */
  onFailJob?(error: CheckpointFailureThresholdError): void;
  /** A side effect failed without changing any checkpoint's outcome (a notification, a discard, a listener). */
  onError?(error: unknown): void;
}

export interface CheckpointCoordinatorDeps {
  readonly clock: CoordinatorClock;
  readonly gateway: CheckpointGateway;
  /** Writes the checkpoint's metadata durably: the commit point. A rejection aborts it as `'storage-failed'`. */
  readonly commit: (checkpoint: CompletedCheckpoint) => Promise<void>;
  /** Releases the storage of a checkpoint the store no longer retains. */
  readonly discard: (checkpoint: CompletedCheckpoint) => Promise<void>;
  readonly listener?: CheckpointCoordinatorListener;
}

/** What a decline did: aborted a checkpoint, or nothing (unknown, already finished, or committing). */
export type DeclineResult = 'aborted' | 'ignored';

interface Waiter {
  resolve(checkpoint: CompletedCheckpoint): void;
  reject(error: CheckpointDeclinedError): void;
}

interface PendingEntry {
  readonly checkpoint: PendingCheckpoint;
  /** Set while acknowledging; cleared when committing starts or the checkpoint is aborted. */
  timeout: TimerHandle | undefined;
  /** All tasks acknowledged and `commit` is running. */
  committing: boolean;
  /** Tasks triggered directly; only grows. */
  readonly triggered: Set<string>;
  readonly waiters: Waiter[];
}

export class CheckpointCoordinator {
  readonly options: ResolvedCheckpointCoordinatorOptions;
  readonly store: CompletedCheckpointStore;
  readonly failureManager: CheckpointFailureManager;
  readonly #clock: CoordinatorClock;
  readonly #gateway: CheckpointGateway;
  readonly #commit: CheckpointCoordinatorDeps['commit'];
  readonly #listener: CheckpointCoordinatorListener;
  /** Periodic scheduling is on and notifications go out. */
  #running = false;
  #sourcesFinished = false;
  #periodicSuspended = false;
  /**
   * Periodic checkpoints wait for the deployment's tasks to run ({@link holdPeriodicUntilRunning}):
   * a trigger sent earlier waits in a loading worker, and its duration counts the job's startup.
   */
  #periodicHeld = false;
  /** Next id to hand out; only ever grows (across restarts via {@link restoreIdCounter}). */
  #nextCheckpointId = 1;
  #lastTriggerMs: number | undefined;
  #lastCompletionMs: number | undefined;
  /** The one periodic-trigger timer; undefined when none is armed. */
  #periodicTimer: TimerHandle | undefined;
  /** Acknowledging and committing checkpoints, by id. */
  readonly #pending = new Map<number, PendingEntry>();
  /** Commits in flight; each promise never rejects. */
  readonly #commits = new Set<Promise<void>>();
  #tasksToTrigger: readonly string[] = [];
  #tasksToAck: readonly string[] = [];
  /** Tasks of the current deployment whose thread ended: they acknowledge nothing any more. */
  readonly #finishedTasks = new Set<string>();
  /**
   * Tasks of the current deployment that reported end of input: alive until the final
   * checkpoint, triggered directly by every checkpoint (FLIP-147).
   */
  readonly #inputEnded = new Set<string>();

  constructor(options: CheckpointCoordinatorOptions, deps: CheckpointCoordinatorDeps) {
    this.options = resolveCheckpointCoordinatorOptions(options);
    this.#clock = deps.clock;
    this.#gateway = deps.gateway;
    this.#commit = deps.commit;
    this.#listener = deps.listener ?? {};
    this.failureManager = new CheckpointFailureManager(this.options.tolerableFailures);
    this.store = new CompletedCheckpointStore({
      retain: this.options.retain,
      discard: deps.discard,
      onDiscardError: (_checkpoint, error) => this.#reportError(error),
    });
  }

  get isRunning(): boolean {
    return this.#running;
  }

  /** The id the next checkpoint will get. */
  get nextCheckpointId(): number {
    return this.#nextCheckpointId;
  }

  /** Ids of acknowledging and committing checkpoints, ascending. */
  pendingCheckpointIds(): number[] {
    return [...this.#pending.keys()].sort((a, b) => a - b);
  }

  /** Starts periodic checkpoints: the first one `interval` ms from now. Idempotent. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#lastTriggerMs = this.#clock.now();
    this.#reschedule();
  }

  /**
   * Stops periodic checkpoints, clears every timer and aborts every acknowledging checkpoint
   * with `reason` (default `'job-stopping'`; pass `'task-failure'` on failover), without
   * notifying tasks. Resolves once commits already in flight have settled; those still
   * complete (their state is durable) and land in the store.
   */
  stop(reason: CheckpointFailureReason = 'job-stopping'): Promise<void> {
    this.#running = false;
    this.#clearPeriodicTimer();
    for (const entry of [...this.#pending.values()]) {
      if (!entry.committing) this.#abort(entry, reason, 'the coordinator stopped');
    }
    return Promise.allSettled([...this.#commits]).then(() => undefined);
  }

  /**
   * The tasks of the current deployment, as task keys (`taskKey(id)`): which ones to trigger
   * (the sources) and which ones must acknowledge (all). Checkpoints already pending keep the
   * set they were created with; call `stop()` before a redeploy.
   */
  setTasks(tasksToTrigger: Iterable<string>, tasksToAck: Iterable<string>): void {
    this.#tasksToTrigger = [...tasksToTrigger];
    this.#tasksToAck = [...new Set(tasksToAck)];
    this.#finishedTasks.clear();
    this.#inputEnded.clear();
    this.#reschedule();
  }

  /**
   * Stops periodic checkpoints for good (forced ones still run): stop-with-savepoint, so that no
   * checkpoint after the savepoint completes and commits output the savepoint does not cover.
   */
  suspendPeriodic(): void {
    this.#periodicSuspended = true;
    this.#reschedule();
  }

  /**
   * Holds periodic checkpoints (forced ones still run) until {@link releasePeriodic}: the job
   * client holds them from a deployment until every task of it reported that it runs (Flink
   * triggers only when all tasks are RUNNING). A periodic checkpoint already due by then is
   * triggered at once; the interval still counts from {@link start}.
   */
  holdPeriodicUntilRunning(): void {
    this.#periodicHeld = true;
    this.#reschedule();
  }

  /** Ends {@link holdPeriodicUntilRunning}. */
  releasePeriodic(): void {
    if (!this.#periodicHeld) return;
    this.#periodicHeld = false;
    this.#reschedule();
  }

  /**
   * Forces "every source reached the end of its input" (no more periodic checkpoints, only a
   * `final` one). {@link taskInputEnded} derives the same once every source reported its end.
   */
  setSourcesFinished(finished: boolean): void {
    this.#sourcesFinished = finished;
    this.#reschedule();
  }

  /** After a restore: ids continue from `nextId` (never go down, so ids stay unique across restarts). */
  restoreIdCounter(nextId: number): void {
    if (!Number.isInteger(nextId) || nextId < 1) {
      throw new RangeError(`the next checkpoint id must be an integer >= 1, got ${nextId}`);
    }
    this.#nextCheckpointId = Math.max(this.#nextCheckpointId, nextId);
  }

  /** Seeds the store with checkpoints found on disk and moves the id counter past them. */
  addRecoveredCheckpoints(checkpoints: readonly CompletedCheckpoint[]): void {
    for (const c of checkpoints) {
      this.store.add(c);
      this.restoreIdCounter(c.checkpointId + 1);
    }
  }

  /**
   * Triggers a checkpoint now, ignoring `interval`, `minPause` and `maxConcurrent`. Resolves
   * with it once committed; rejects with {@link CheckpointDeclinedError} if it is aborted, or at
   * once (id {@link NO_CHECKPOINT_ID}) if the coordinator is not started, has no tasks, or the
   * sources finished (except for `final`). The sources are triggered before this returns.
   */
  triggerCheckpoint(kind: Exclude<CheckpointKind, 'periodic'> = 'manual'): Promise<CompletedCheckpoint> {
    const decision = this.#decide(kind);
    if (decision.kind === 'wait') {
      return Promise.reject(
        new CheckpointDeclinedError(
          NO_CHECKPOINT_ID,
          failureReasonOfWait(decision.reason),
          `cannot trigger a ${kind} checkpoint (${decision.reason})`,
        ),
      );
    }
    const completed = new Promise<CompletedCheckpoint>((resolve, reject) => {
      this.#startCheckpoint(kind, { resolve, reject });
    });
    this.#reschedule();
    return completed;
  }

  /**
   * A task acknowledged a checkpoint. `'discarded'` for one that was aborted or already
   * completed (a late ack: its state is not used), `'unknown'` for an id never triggered or a
   * task that does not belong to it.
   */
  receiveAcknowledge(taskKey: string, checkpointId: number, ack: TaskAcknowledgement): AcknowledgeResult {
    const entry = this.#pending.get(checkpointId);
    if (entry === undefined) return checkpointId < this.#nextCheckpointId ? 'discarded' : 'unknown';
    const result = entry.checkpoint.acknowledgeTask(taskKey, ack);
    if (result === 'success' && entry.checkpoint.isFullyAcknowledged) this.#beginCommit(entry);
    return result;
  }

  /** A task declined a checkpoint: abort it with `reason` (unless it is unknown, finished or committing). */
  receiveDecline(
    taskKey: string,
    checkpointId: number,
    reason: CheckpointFailureReason,
    error?: unknown,
  ): DeclineResult {
    const entry = this.#pending.get(checkpointId);
    if (entry === undefined || entry.committing) return 'ignored';
    // The task's own words go into the message: "declined by task 1/1" alone says nothing.
    const why = error instanceof Error ? error.message : error === undefined ? '' : String(error);
    this.#abort(entry, reason, `declined by task ${taskKey}${why ? `: ${why}` : ''}`, error);
    return 'aborted';
  }

  /**
   * A task of the current deployment ended its thread. Checkpoints still waiting for its
   * acknowledgement can never complete: they are aborted now (`end-of-input`) rather than at
   * their timeout, and so is any later one that would wait for it.
   */
  taskFinished(taskKey: string): void {
    this.#finishedTasks.add(taskKey);
    for (const entry of [...this.#pending.values()]) {
      if (!entry.committing && entry.checkpoint.notYetAcknowledged.has(taskKey)) {
        this.#abort(entry, 'end-of-input', `task ${taskKey} finished before acknowledging`);
      }
    }
  }

  /**
   * A task of the current deployment reached the end of its input and stays alive, quiescent,
   * until the final checkpoint. Later checkpoints trigger it directly; acknowledging ones that it
   * still owes and never triggered it are triggered now ({@link lateTriggersOnInputEnd}).
   * Periodic checkpoints continue until every source has ended. Idempotent.
   */
  taskInputEnded(taskKey: string): void {
    if (this.#inputEnded.has(taskKey)) return;
    this.#inputEnded.add(taskKey);
    const acknowledging = [...this.#pending.values()]
      .filter((e) => !e.committing)
      .map((e) => ({
        checkpointId: e.checkpoint.checkpointId,
        notYetAcknowledged: e.checkpoint.notYetAcknowledged,
        triggered: e.triggered,
      }));
    for (const checkpointId of lateTriggersOnInputEnd(taskKey, acknowledging)) {
      const entry = this.#pending.get(checkpointId);
      // An earlier trigger of this loop may have aborted it (a throwing gateway).
      if (entry !== undefined && !entry.committing) this.#triggerTasks(entry, [taskKey]);
    }
    this.#reschedule();
  }

  // ------------------------------------------------------------------ triggering

  #decide(kind: CheckpointKind): TriggerDecision {
    return decideTrigger({
      kind,
      nowMs: this.#clock.now(),
      jobRunning: this.#running && this.#tasksToTrigger.length > 0 && this.#tasksToAck.length > 0,
      sourcesFinished: this.#sourcesFinished || allSourcesEnded(this.#tasksToTrigger, this.#inputEnded),
      periodicSuspended: this.#periodicSuspended || (kind === 'periodic' && this.#periodicHeld),
      pendingCount: this.#pending.size,
      lastTriggerMs: this.#lastTriggerMs,
      lastCompletionMs: this.#lastCompletionMs,
      intervalMs: this.options.interval,
      minPauseMs: this.options.minPause,
      maxConcurrent: this.options.maxConcurrent,
    });
  }

  /** Re-arms the periodic timer from a fresh decision. Call after anything that can change it. */
  #reschedule(): void {
    this.#clearPeriodicTimer();
    if (!this.#running) return;
    const decision = this.#decide('periodic');
    // A due trigger still goes through a 0 ms timer: it keeps triggering out of the call stack
    // of whatever event got us here (an ack, a decline, a failed trigger).
    let delayMs: number;
    if (decision.kind === 'trigger') delayMs = 0;
    else if (Number.isFinite(decision.untilMs)) delayMs = Math.max(0, decision.untilMs - this.#clock.now());
    else return; // only an event can change the answer, and every event reschedules
    this.#periodicTimer = this.#clock.setTimeout(() => this.#onPeriodicTimer(), delayMs);
  }

  #onPeriodicTimer(): void {
    this.#periodicTimer = undefined;
    if (this.#decide('periodic').kind === 'trigger') this.#startCheckpoint('periodic', undefined);
    this.#reschedule();
  }

  #clearPeriodicTimer(): void {
    if (this.#periodicTimer === undefined) return;
    this.#clock.clearTimeout(this.#periodicTimer);
    this.#periodicTimer = undefined;
  }

  #startCheckpoint(kind: CheckpointKind, waiter: Waiter | undefined): void {
    const checkpointId = this.#nextCheckpointId++;
    const timestamp = this.#clock.now();
    this.#lastTriggerMs = timestamp;
    const plan = calculateCheckpointPlan({
      kind,
      tasks: this.#tasksToAck,
      sources: this.#tasksToTrigger,
      inputEnded: this.#inputEnded,
    });
    const entry: PendingEntry = {
      checkpoint: new PendingCheckpoint({
        checkpointId,
        timestamp,
        kind,
        tasksToAcknowledge: plan.tasksToAcknowledge,
      }),
      timeout: undefined,
      committing: false,
      triggered: new Set(),
      waiters: waiter === undefined ? [] : [waiter],
    };
    // Registered before the gateway runs: a gateway may acknowledge or decline synchronously.
    this.#pending.set(checkpointId, entry);
    entry.timeout = this.#clock.setTimeout(() => {
      entry.timeout = undefined;
      this.#abortIfAcknowledging(checkpointId, 'expired', `not completed within ${this.options.timeout} ms`);
    }, this.options.timeout);
    const gone = this.#tasksToAck.find((t) => this.#finishedTasks.has(t));
    if (gone !== undefined) {
      this.#abort(entry, 'end-of-input', `task ${gone} finished before acknowledging`);
      return;
    }
    this.#triggerTasks(entry, plan.tasksToTrigger);
  }

  /** Triggers `tasks` directly for an acknowledging checkpoint; a failure aborts it. */
  #triggerTasks(entry: PendingEntry, tasks: readonly string[]): void {
    const { checkpointId, timestamp, kind } = entry.checkpoint;
    for (const t of tasks) entry.triggered.add(t);
    try {
      const result = this.#gateway.triggerSources(checkpointId, timestamp, tasks, kind);
      if (isPromiseLike(result)) {
        result.then(undefined, (error: unknown) =>
          this.#abortIfAcknowledging(checkpointId, 'task-failure', 'triggering the tasks failed', error),
        );
      }
    } catch (error) {
      this.#abortIfAcknowledging(checkpointId, 'task-failure', 'triggering the tasks failed', error);
    }
  }

  // ------------------------------------------------------------------ completion

  #beginCommit(entry: PendingEntry): void {
    entry.committing = true;
    this.#clearTimeout(entry);
    const completed = entry.checkpoint.finalize(this.#clock.now());
    const commit = this.#commitAndComplete(entry, completed);
    this.#commits.add(commit);
    void commit.finally(() => this.#commits.delete(commit));
  }

  /** Never rejects. */
  async #commitAndComplete(entry: PendingEntry, completed: CompletedCheckpoint): Promise<void> {
    const checkpointId = completed.checkpointId;
    try {
      await this.#commit(completed);
    } catch (error) {
      this.#pending.delete(checkpointId);
      this.#settleAborted(entry, 'storage-failed', 'committing its metadata failed', error);
      return;
    }
    // Past the commit point: the checkpoint exists. Everything below only reports it.
    this.#pending.delete(checkpointId);
    this.#lastCompletionMs = this.#clock.now();
    try {
      this.store.add(completed);
    } catch (error) {
      // Only a duplicate id (recovered checkpoints added without moving the id counter).
      this.#reportError(error);
    }
    this.failureManager.onSuccess(checkpointId);
    for (const older of [...this.#pending.values()]) {
      if (!older.committing && older.checkpoint.checkpointId < checkpointId) {
        this.#abort(older, 'subsumed', `checkpoint ${checkpointId} completed first`);
      }
    }
    this.#safely(() => this.#listener.onCompleted?.(completed));
    if (this.#running) this.#notify(() => this.#gateway.notifyComplete(checkpointId));
    for (const w of entry.waiters) w.resolve(completed);
    this.#reschedule();
  }

  // ------------------------------------------------------------------ aborts

  #abortIfAcknowledging(
    checkpointId: number,
    reason: CheckpointFailureReason,
    message: string,
    cause?: unknown,
  ) {
    const entry = this.#pending.get(checkpointId);
    if (entry !== undefined && !entry.committing) this.#abort(entry, reason, message, cause);
  }

  #abort(entry: PendingEntry, reason: CheckpointFailureReason, message: string, cause?: unknown): void {
    entry.checkpoint.abort(reason);
    this.#pending.delete(entry.checkpoint.checkpointId);
    this.#clearTimeout(entry);
    this.#settleAborted(entry, reason, message, cause);
  }

  /** Reports an aborted checkpoint already removed from `#pending`. */
  #settleAborted(
    entry: PendingEntry,
    reason: CheckpointFailureReason,
    message: string,
    cause?: unknown,
  ): void {
    const { checkpointId, kind, timestamp } = entry.checkpoint;
    const error = new CheckpointDeclinedError(
      checkpointId,
      reason,
      message,
      cause === undefined ? {} : { cause },
    );
    if (this.#running) this.#notify(() => this.#gateway.notifyAborted(checkpointId, reason));
    const decision = this.failureManager.onFailure(checkpointId, reason, kind, error);
    const aborted: AbortedCheckpoint = {
      checkpointId,
      kind,
      timestamp,
      abortedAtMs: this.#clock.now(),
      reason,
      error,
    };
    this.#safely(() => this.#listener.onAborted?.(aborted));
    for (const w of entry.waiters) w.reject(error);
    if (decision.kind === 'fail-job') this.#safely(() => this.#listener.onFailJob?.(decision.error));
    this.#reschedule();
  }

  #clearTimeout(entry: PendingEntry): void {
    if (entry.timeout === undefined) return;
    this.#clock.clearTimeout(entry.timeout);
    entry.timeout = undefined;
  }

  // ------------------------------------------------------------------ side effects

  #notify(send: () => void | Promise<void>): void {
    try {
      const result = send();
      if (isPromiseLike(result)) result.then(undefined, (error: unknown) => this.#reportError(error));
    } catch (error) {
      this.#reportError(error);
    }
  }

  #safely(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.#reportError(error);
    }
  }

  #reportError(error: unknown): void {
    const onError = this.#listener.onError;
    if (onError === undefined) {
      // Nobody listens: make it loud rather than lose it.
      queueMicrotask(() => {
        throw error;
      });
      return;
    }
    onError.call(this.#listener, error);
  }
}

function failureReasonOfWait(reason: TriggerWaitReason): CheckpointFailureReason {
  switch (reason) {
    case 'job-not-running':
      return 'job-stopping';
    case 'sources-finished':
      return 'end-of-input';
    case 'periodic-suspended':
      return 'job-stopping';
    case 'max-concurrent':
    case 'min-pause':
    case 'interval':
      return 'too-many-concurrent';
    default:
      return assertNever(reason, 'trigger wait reason');
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}
