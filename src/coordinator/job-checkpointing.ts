/**
 * The glue between a job, its {@link CheckpointCoordinator} and its checkpoint storage: one per
 * job, living across restarts (so checkpoint ids keep increasing). It carries out the
 * coordinator's decisions on the current execution (trigger, notify), routes task events to it,
 * commits checkpoint metadata to storage, and plans each restore.
 *
 * Bounded jobs: a task that ended its input stays alive and keeps acknowledging checkpoints
 * with its final state (triggered directly, see checkpoint-plan.ts), so periodic checkpoints,
 * and the commits of two-phase-commit sinks, go on while other sources still read. Once every
 * source ended, periodic checkpoints stop; once every task reported end of input, the final
 * checkpoint is triggered on all tasks directly (every channel is drained, so no barrier is
 * needed). Its completion lets the tasks exit, two-phase-commit sinks having committed their
 * last transaction. When it is triggered, retried or given up is decided per execution by
 * final-checkpoint-state.ts; events of a previous execution's tasks, and the outcome of its final
 * checkpoint, are stale and ignored.
 *
 * Why one file: one class whose methods are the coordinator's effects on one execution (trigger,
 * notify, commit, restore plan, savepoint, final checkpoint) and share the execution's state; the
 * pure decisions are elsewhere (checkpoint-coordinator.ts, pending-checkpoint.ts,
 * restore-planning.ts, checkpoint-plan.ts, final-checkpoint-state.ts), so what remains here is
 * the sequencing, which reads best in one place.
 */

import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CheckpointStorageError, describeOrphan, TaskFailureError } from '../errors.js';
import { isStatefulOperator } from '../graph/operator-uid.js';
import { operatorStatePackr } from '../protocol/operator-state-codec.js';
import type {
  TaskCheckpointMetrics as TaskAckMetrics,
  TaskCheckpointConfig,
  TaskEvent,
  TaskRestoreState,
  TaskSnapshotHandles,
} from '../protocol/task-deployment.js';
import type { CheckpointMetadata } from '../state/storage/checkpoint-metadata.js';
import { CheckpointStorage } from '../state/storage/checkpoint-storage.js';
import { checkSavepointDir, copyCheckpoint } from '../state/storage/savepoint-copy.js';
import { assertNever } from '../util/assert-never.js';
import { CheckpointCoordinator } from './checkpoint-coordinator.js';
import { checkpointTypeOf } from './checkpoint-kind.js';
import type { CompletedCheckpoint, TaskCheckpointStats } from './completed-checkpoint.js';
import { systemCoordinatorClock } from './coordinator-clock.js';
import {
  type FinalCheckpointEvent,
  type FinalCheckpointState,
  finalCheckpointStep,
  initialFinalCheckpointState,
} from './final-checkpoint-state.js';
import type { JobClient } from './job-client.js';
import { type FreshStartEvent, JobWarning, type RestoredEvent } from './job-events.js';
import { migrateLegacyUids, requireRestoreCompatible } from './restore-compatibility.js';
import {
  type CheckpointDirState,
  classifyCheckpointDir,
  jobMetadataOf,
  planStoredRestore,
  restoreFailure,
} from './restore-planning.js';
import type { DeployedTask, Execution } from './scheduler.js';
import { planTaskRestores } from './task-restore-planner.js';

/** Stats of a checkpoint adopted from an earlier run (not measured by this one). */
const RECOVERED_STATS: CompletedCheckpoint['stats'] = {
  endToEndDurationMs: 0,
  maxAlignmentDurationMs: 0,
  switchedToUnaligned: false,
  maxCheckpointStartDelayMs: 0,
  syncDurationMs: { max: 0, sum: 0 },
  asyncDurationMs: { max: 0, sum: 0 },
  stateSizeBytes: 0,
  acknowledgedTasks: 0,
  tasks: [],
};

export class JobCheckpointing {
  readonly taskConfig: TaskCheckpointConfig;
  readonly #client: JobClient;
  readonly #storage: CheckpointStorage;
  readonly #coordinator: CheckpointCoordinator;
  readonly #temporaryDir: string | null;
  #execution: Execution | null = null;
  /** The tasks of `#execution`: an event of any other task (a failed attempt's) is stale. */
  #attachedTasks: ReadonlySet<DeployedTask> = new Set();
  /** Tasks of `#execution` that reported `running`; periodic checkpoints wait for all of them. */
  #runningTasks = new Set<DeployedTask>();
  /** Number of the attached execution (attach order): the final checkpoint's events name it. */
  #executionNumber = 0;
  /**
   * When the final checkpoint is triggered, retried or given up, per execution, and held back by
   * stop-with-savepoint (see final-checkpoint-state.ts). Changed only by `#finalStep`.
   */
  #final: FinalCheckpointState = initialFinalCheckpointState();
  /** Metadata of completed checkpoints, by id (what restore reads). */
  readonly #metadata = new Map<number, CheckpointMetadata>();
  readonly #packr = operatorStatePackr();
  /** The checkpoint restored from another directory (`restoreFrom: path`), kept open for restarts. */
  #foreign: { readonly checkpointId: number; readonly storage: CheckpointStorage } | null = null;
  /** What the job's own directory held before it was opened (and so created). */
  readonly #dirAtOpen: CheckpointDirState['kind'];

  private constructor(
    client: JobClient,
    dir: string,
    temporary: boolean,
    dirAtOpen: CheckpointDirState['kind'] = 'storage',
  ) {
    this.#dirAtOpen = dirAtOpen;
    const c = client.options.checkpointing!;
    this.#client = client;
    this.#temporaryDir = temporary ? dir : null;
    this.#storage = CheckpointStorage.open(dir);
    this.taskConfig = {
      mode: c.mode,
      dir,
      incremental: c.incremental,
      fullEvery: c.fullEvery,
      stateBackend: client.options.stateBackend,
      unaligned: c.unaligned,
      ...(c.alignmentTimeout !== null ? { alignmentTimeout: c.alignmentTimeout } : {}),
    };
    this.#coordinator = new CheckpointCoordinator(
      {
        interval: c.interval,
        timeout: c.timeout,
        minPause: c.minPause,
        maxConcurrent: c.maxConcurrent,
        tolerableFailures: c.tolerableFailures,
        retain: c.retain,
      },
      {
        clock: systemCoordinatorClock,
        gateway: {
          triggerSources: (id, timestamp, tasks, kind) => {
            const type = checkpointTypeOf(kind);
            for (const t of this.#tasks(tasks))
              callTask(() => t.control.triggerCheckpoint(id, timestamp, type, kind === 'final'));
          },
          notifyComplete: (id) => {
            for (const t of this.#execution?.tasks ?? [])
              callTask(() => t.control.notifyCheckpointComplete(id));
          },
          notifyAborted: (id) => {
            for (const t of this.#execution?.tasks ?? [])
              callTask(() => t.control.notifyCheckpointAborted(id));
          },
        },
        commit: (completed) => this.#commit(completed),
        discard: async (completed) => {
          this.#metadata.delete(completed.checkpointId);
          await this.#storage.discardCheckpoint(completed.checkpointId);
        },
        listener: {
          onCompleted: (cp) =>
            client.recordCheckpoint({
              checkpointId: cp.checkpointId,
              triggerTimestamp: cp.timestamp,
              durationMs: cp.stats.endToEndDurationMs,
              maxAlignmentDurationMs: cp.stats.maxAlignmentDurationMs,
              switchedToUnaligned: cp.stats.switchedToUnaligned,
              maxSyncDurationMs: cp.stats.syncDurationMs.max,
              maxAsyncDurationMs: cp.stats.asyncDurationMs.max,
              bytes: cp.stats.stateSizeBytes,
              subtasks: cp.stats.tasks.map((t) => ({
                task: t.taskKey,
                alignmentDurationMs: t.alignmentDurationMs,
                switchedToUnaligned: t.switchedToUnaligned ?? false,
                syncDurationMs: t.syncDurationMs,
                asyncDurationMs: t.asyncDurationMs,
                bytes: t.stateSizeBytes,
                ...subtaskPhasesOf(t),
              })),
            }),
          onAborted: (a) =>
            client.emit('checkpoint-failed', {
              checkpointId: a.checkpointId,
              triggerTimestamp: a.timestamp,
              failedAt: a.abortedAtMs,
              reason: a.reason,
              message: a.error.message,
            }),
          onFailJob: (error) =>
            client.failExecution(
              new TaskFailureError('checkpoint coordinator', undefined, error.message, error.stack, {
                cause: error,
              }),
            ),
          onError: (error) => client.warn(error),
        },
      },
    );
    this.#coordinator.restoreIdCounter(this.#storage.nextCheckpointId());
  }

  /** Opens the checkpoint directory (a temporary one when none is configured). */
  static async open(client: JobClient): Promise<JobCheckpointing> {
    // The client starts its run in its constructor; one turn of the event loop lets the caller of
    // `startJob` attach listeners before the initial restore emits 'restored', 'fresh-start' or a
    // 'warning' about a skipped (damaged) checkpoint.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const { options } = client;
    const configured = options.checkpointing!.dir;
    if (configured !== undefined || options.restoreFrom !== undefined) warnAboutDefaultUids(client);
    if (!configured) {
      return new JobCheckpointing(client, mkdtempSync(join(tmpdir(), 'weir-checkpoints-')), true);
    }
    const dir = resolve(configured);
    const from = options.restoreFrom;
    if (from !== 'latest' && (from === undefined || resolve(from) !== dir)) {
      return new JobCheckpointing(client, dir, false);
    }
    // Restoring from this directory: look before opening, which would create an empty store.
    const state = classifyCheckpointDir(existsSync(dir) ? readdirSync(dir) : null);
    if (state.kind === 'refuse') {
      throw new CheckpointStorageError(`cannot restore from checkpoint directory ${dir}: ${state.reason}`);
    }
    return new JobCheckpointing(client, dir, false, state.kind);
  }

  /** Restore state for the first attempt, from `restoreFrom`; null for a fresh start. */
  initialRestore(): Map<string, TaskRestoreState> | null {
    const options = this.#client.options;
    const from = options.restoreFrom;
    if (from === undefined) return null;
    const own = from === 'latest' || resolve(from) === this.#storage.dir;
    if (from === 'latest' && this.#dirAtOpen !== 'storage') {
      const missing = this.#dirAtOpen === 'missing';
      this.#freshStart({
        dir: this.#storage.dir,
        reason: missing ? 'no-directory' : 'empty-directory',
        message: `checkpoint directory ${this.#storage.dir} ${missing ? 'did not exist' : 'was empty'}: starting from the beginning`,
      });
      return null;
    }
    const storage = own ? this.#storage : CheckpointStorage.open(resolve(from), { create: false });
    let keepOpen = false;
    try {
      const decision = planStoredRestore(
        storage.findRestorable(),
        from === 'latest' ? 'latest' : 'explicit',
        options.checkpointing!.mode,
        options.allowFallbackPastDamaged,
      );
      if (decision.kind === 'fresh-start') {
        this.#freshStart({
          dir: storage.dir,
          reason: 'no-completed-checkpoint',
          message: `no checkpoint in ${storage.dir} completed yet: starting from the beginning`,
        });
        return null;
      }
      if (decision.kind === 'fail') throw restoreFailure(decision, storage.dir);
      const metadata = decision.checkpoint.metadata!;
      if (decision.warnings.length > 0) {
        const skipped = decision.warnings.map((w) => ({ checkpointId: w.checkpointId, problem: w.problem }));
        this.#client.warn(
          new JobWarning(
            {
              kind: 'fallback-past-damaged',
              dir: storage.dir,
              restoredCheckpointId: metadata.checkpointId,
              skipped,
            },
            `restoring checkpoint ${metadata.checkpointId} from ${storage.dir}, past damaged checkpoint(s) ` +
              `${skipped.map((d) => `${d.checkpointId} (${d.problem})`).join(', ')}: output they committed will be committed again`,
          ),
        );
      }
      this.#checkCompatible(metadata);
      this.#metadata.set(metadata.checkpointId, metadata);
      this.#coordinator.restoreIdCounter(metadata.checkpointId + 1);
      this.#client.log('info', { checkpointId: metadata.checkpointId, dir: storage.dir }, 'restoring');
      this.#client.emit('restored', {
        checkpointId: metadata.checkpointId,
        dir: storage.dir,
      } satisfies RestoredEvent);
      const plan = this.#plan(metadata, storage);
      if (storage === this.#storage) this.#adoptRetained(metadata.checkpointId);
      else {
        // Another directory (a savepoint, another job's checkpoints): tasks read their state
        // from it, and a restart before this job's first checkpoint restores from it again.
        this.#foreign = { checkpointId: metadata.checkpointId, storage };
        keepOpen = true;
      }
      return plan;
    } finally {
      if (storage !== this.#storage && !keepOpen) void storage.close();
    }
  }

  #freshStart(event: FreshStartEvent): void {
    this.#client.log('info', { dir: event.dir, reason: event.reason }, event.message);
    this.#client.emit('fresh-start', event);
  }

  /**
   * Refuses a checkpoint whose state does not fit this job (RestoreCompatibility); with
   * `allowNonRestoredState`, warns about the state that will be dropped.
   */
  #checkCompatible(stored: CheckpointMetadata): void {
    const nonRestored = requireRestoreCompatible(
      this.#client.plan,
      stored,
      this.#client.options.allowNonRestoredState,
    );
    if (nonRestored.length === 0) return;
    this.#client.warn(
      new JobWarning(
        {
          kind: 'non-restored-state',
          checkpointId: stored.checkpointId,
          operators: nonRestored,
        },
        `checkpoint ${stored.checkpointId}: dropping state no operator of this job takes ` +
          `(allowNonRestoredState): ${nonRestored.map(describeOrphan).join(', ')}`,
      ),
    );
  }

  /**
   * Restoring from this job's own directory: the checkpoints an earlier run left there, up to the
   * restored one, join the store, so `retain` applies to them as to new ones (otherwise every
   * process restart would leave its checkpoints, and the chunks they share, forever). Newer
   * checkpoints were skipped as damaged and stay for a human to inspect (`weir checkpoints`).
   * Discarding is safe for the restored state: storage refcounts keep every chunk it references.
   */
  #adoptRetained(restoredId: number): void {
    const recovered: CompletedCheckpoint[] = [];
    for (const row of this.#storage.describe()) {
      if (row.checkpointId > restoredId) continue;
      const timestamp = row.state === 'readable' ? row.timestamp : 0;
      recovered.push({
        checkpointId: row.checkpointId,
        kind: 'periodic',
        timestamp,
        completionTimestamp: timestamp,
        taskStates: {},
        stats: RECOVERED_STATS,
      });
    }
    this.#coordinator.addRecoveredCheckpoints(recovered);
  }

  /** Restore state after a failure: the latest completed checkpoint, or null if there is none. */
  restoreForRestart(): Map<string, TaskRestoreState> | null {
    const latest = this.#coordinator.store.latest();
    const metadata = latest ? this.#metadata.get(latest.checkpointId) : [...this.#metadata.values()].at(-1);
    if (!metadata) return null;
    const foreign = this.#foreign?.checkpointId === metadata.checkpointId ? this.#foreign.storage : null;
    return this.#plan(metadata, foreign ?? this.#storage);
  }

  #plan(metadata: CheckpointMetadata, storage: CheckpointStorage): Map<string, TaskRestoreState> {
    const plans = planTaskRestores(
      this.#client.plan,
      migrateLegacyUids(this.#client.plan, metadata),
      (h) => this.#packr.unpack(storage.readChunk(h)) as unknown[],
    );
    if (storage === this.#storage) return plans;
    // Tasks read these chunks from `storage`'s directory, not from the job's.
    const out = new Map<string, TaskRestoreState>();
    for (const [key, r] of plans) out.set(key, { ...r, dir: storage.dir });
    return out;
  }

  /**
   * Starts checkpointing `execution`. Its tasks' events can only follow this call: the client
   * calls it in the same synchronous step in which it constructed the execution, and task events
   * arrive as MessagePort messages.
   */
  attach(execution: Execution): void {
    this.#execution = execution;
    this.#attachedTasks = new Set(execution.tasks);
    this.#executionNumber++;
    this.#finalStep({
      kind: 'attached',
      execution: this.#executionNumber,
      tasks: execution.tasks.map((t) => t.key),
    });
    const sources = execution.tasks.filter((t) => t.isSource).map((t) => t.key);
    this.#coordinator.setTasks(
      sources,
      execution.tasks.map((t) => t.key),
    );
    this.#coordinator.setSourcesFinished(false);
    this.#runningTasks = new Set();
    // A trigger sent to a worker still loading its job module waits there: checkpoint 1 would
    // time the startup (issue 14: 300-400 ms of a quiet 100 ms-interval run). Until every task
    // runs, only forced checkpoints (savepoint, final) are triggered.
    this.#coordinator.holdPeriodicUntilRunning();
    this.#client.setCheckpointEventHandler((task, event) => this.#onEvent(task, event));
    this.#coordinator.start();
  }

  /** The execution ended: abort what is pending, wait for commits in flight. */
  async detach(): Promise<void> {
    this.#client.setCheckpointEventHandler(null);
    // First: the final checkpoint that stop() aborts below is this execution's, and its
    // rejection must not be retried on the next one.
    this.#finalStep({ kind: 'detached' });
    this.#attachedTasks = new Set();
    await this.#coordinator.stop('task-failure');
    this.#execution = null;
  }

  async close(): Promise<void> {
    await this.#coordinator.stop();
    // Discards still running would fail on a closed storage and leave their checkpoint behind.
    await this.#coordinator.store.whenDiscarded();
    await this.#storage.close();
    await this.#foreign?.storage.close();
    if (this.#temporaryDir) rmSync(this.#temporaryDir, { recursive: true, force: true });
  }

  #tasks(keys: readonly string[]): DeployedTask[] {
    const byKey = new Map((this.#execution?.tasks ?? []).map((t) => [t.key, t]));
    return keys.map((k) => byKey.get(k)).filter((t): t is DeployedTask => t !== undefined);
  }

  #onEvent(task: DeployedTask, event: TaskEvent): void {
    // A failed attempt's task shares its key with the restored attempt's: its late events
    // (end of input, finished, acknowledgements) must not be taken for the new task's.
    if (!this.#attachedTasks.has(task)) return;
    switch (event.kind) {
      case 'acknowledge':
        this.#coordinator.receiveAcknowledge(task.key, event.checkpointId, {
          stateHandles: event.state,
          metrics: {
            alignmentDurationMs: event.metrics.alignmentDurationMs,
            ...(event.metrics.switchedToUnaligned ? { switchedToUnaligned: true } : {}),
            syncDurationMs: event.metrics.syncDurationMs,
            asyncDurationMs: event.metrics.asyncDurationMs,
            stateSizeBytes: event.metrics.bytes,
            ...phasesOf(event.metrics),
          },
        });
        break;
      case 'decline':
        this.#coordinator.receiveDecline(
          task.key,
          event.checkpointId,
          event.reason,
          new Error(event.message),
        );
        break;
      case 'input-ended':
        // Periodic checkpoints go on, triggering this task directly (FLIP-147), until every
        // source has ended.
        this.#coordinator.taskInputEnded(task.key);
        this.#finalStep({ kind: 'input-ended', execution: this.#executionNumber, task: task.key });
        break;
      case 'finished':
        this.#coordinator.taskFinished(task.key);
        break;
      case 'running':
        this.#runningTasks.add(task);
        if (this.#runningTasks.size === this.#attachedTasks.size) this.#coordinator.releasePeriodic();
        break;
      case 'deliver':
      case 'failed':
      case 'log':
        break;
    }
  }

  /** Steps the final checkpoint's state machine and carries out its effects. */
  #finalStep(event: FinalCheckpointEvent): void {
    const { next, effects } = finalCheckpointStep(this.#final, event);
    this.#final = next;
    for (const effect of effects) {
      switch (effect.kind) {
        case 'trigger': {
          const { execution, attempt } = effect;
          this.#coordinator.triggerCheckpoint('final').then(
            () => this.#finalStep({ kind: 'completed', execution, attempt }),
            (error: unknown) => this.#finalStep({ kind: 'rejected', execution, attempt, error }),
          );
          break;
        }
        case 'warn':
          this.#client.warn(effect.error);
          break;
        case 'fail-execution': {
          const e = effect.error as Error;
          this.#client.failExecution(
            new TaskFailureError(
              'checkpoint coordinator',
              undefined,
              `final checkpoint failed: ${e.message}`,
              e.stack,
              { cause: effect.error },
            ),
          );
          break;
        }
        default:
          assertNever(effect, 'final checkpoint effect');
      }
    }
  }

  /**
   * Takes a savepoint: a forced checkpoint of kind `savepoint` (barriers typed `savepoint`), then
   * a self-contained copy of it — metadata and every chunk it references, shared ones included —
   * in a new checkpoint directory `dir` that `restoreFrom: dir` (or `--restore dir`) accepts.
   * The copy is full (no chunk refers back to the job's directory) and is never deleted by the
   * job's retention. `dir` must not exist or be empty.
   */
  async savepoint(dir: string): Promise<{ checkpointId: number; path: string }> {
    const path = resolve(dir);
    checkSavepointDir(path);
    // Nothing may complete after the savepoint: a later checkpoint would let sinks commit output
    // that the savepoint does not cover, and a run restored from it would produce it again.
    // The same holds for the final checkpoint of a bounded job whose input ends meanwhile.
    this.#coordinator.suspendPeriodic();
    this.#finalStep({ kind: 'savepoint-started' });
    let completed: CompletedCheckpoint;
    try {
      completed = await this.#coordinator.triggerCheckpoint('savepoint');
    } catch (error) {
      // No savepoint, no stop: the job runs on, and ends with its final checkpoint after all
      // (unless one is under way or done: a second would wait for tasks that exit after it).
      this.#finalStep({ kind: 'savepoint-failed' });
      throw error;
    }
    const id = completed.checkpointId;
    const metadata = this.#metadata.get(id) ?? this.#storage.loadMetadata(id);
    if (!metadata) throw new CheckpointStorageError(`savepoint ${id} completed but its metadata is gone`);
    // copyCheckpoint reads every chunk in one synchronous pass: retention cannot discard any of it.
    await copyCheckpoint(this.#storage, metadata, path);
    return { checkpointId: id, path };
  }

  /**
   * Records that every sink committed all of savepoint `checkpointId` (every task answered
   * `awaitCommitted` with true; periodic checkpoints stay suspended, so nothing committed after
   * it), in the savepoint's copy at `path` and in the job's own directory: a restore from either
   * then skips commit-on-restore (`TaskRestoreState.sinksCommitted`), which for a sink that
   * cannot tell a repeated commit from a new one (`sinks.collect` with a new client) would be a
   * duplicate. Best effort: without the mark a restore commits again, as after any checkpoint.
   */
  async markSinksCommitted(savepoint: { checkpointId: number; path: string }): Promise<void> {
    const id = savepoint.checkpointId;
    const copy = CheckpointStorage.open(savepoint.path, { create: false });
    try {
      await copy.markSinksCommitted(id);
    } finally {
      await copy.close();
    }
    if (await this.#storage.markSinksCommitted(id)) {
      const cached = this.#metadata.get(id);
      if (cached) this.#metadata.set(id, { ...cached, sinksCommitted: true });
    }
  }

  async #commit(completed: CompletedCheckpoint): Promise<void> {
    const plan = this.#client.plan;
    const subtasks: CheckpointMetadata['subtasks'][number][] = [];
    // Incremental: some task acknowledged chunks shared from earlier checkpoints (its delta chain).
    let incremental = false;
    for (const [key, handles] of Object.entries(completed.taskStates)) {
      const subtaskIndex = Number(key.split('/')[1]);
      for (const op of (handles as TaskSnapshotHandles).operators) {
        subtasks.push({ operatorUid: op.operatorUid, subtaskIndex, chunks: op.chunks });
        if (op.chunks.some((h) => h.checkpointId !== completed.checkpointId)) incremental = true;
      }
    }
    const metadata: CheckpointMetadata = {
      checkpointId: completed.checkpointId,
      timestamp: completed.timestamp,
      incremental,
      job: jobMetadataOf(plan),
      subtasks,
    };
    const outcome = await this.#storage.commitCheckpoint(metadata);
    if (outcome.state === 'missing-chunks') {
      throw new CheckpointStorageError(
        `checkpoint ${completed.checkpointId} references missing chunks: ${outcome.missing.join(', ')}`,
      );
    }
    this.#metadata.set(completed.checkpointId, metadata);
  }
}

/**
 * Warns (a `warning` event) about stateful operators without an explicit uid, when state
 * outlives this run (a checkpoint directory, or a restore): their default uids survive stateless
 * edits but not a rename (see `graph/operator-uid.ts`).
 */
function warnAboutDefaultUids(client: JobClient): void {
  const operators = client.plan.vertices.flatMap((v) =>
    v.operators
      .filter((o) => !o.explicitUid && isStatefulOperator(o.spec))
      .map((o) => ({ name: o.name, kind: o.spec.kind, uid: o.uid })),
  );
  if (operators.length === 0) return;
  client.warn(
    new JobWarning(
      { kind: 'operators-without-uid', operators },
      `${operators.length} stateful operator(s) have no explicit uid (${operators.map((o) => `"${o.name}"`).join(', ')}); ` +
        'their state is matched by kind, name and order on restore, so renaming one loses it: set .uid(...) on each',
    ),
  );
}

/** A control call to a task whose worker is gone never matters: the execution is failing anyway. */
/**
 * Calls a task's control port, ignoring a task that is gone: its call rejects when the port
 * closed, or throws synchronously once the execution released its comlink proxy (a checkpoint
 * notification racing the teardown of a failed execution).
 */
/** The phase split a task's acknowledgement carries (issue 14), with the acknowledgement's own delay. */
function phasesOf(m: TaskAckMetrics) {
  return {
    ...(m.checkpointStartDelayMs !== undefined ? { checkpointStartDelayMs: m.checkpointStartDelayMs } : {}),
    ...(m.channelStateWaitMs !== undefined ? { channelStateWaitMs: m.channelStateWaitMs } : {}),
    ...(m.serializeMs !== undefined ? { serializeMs: m.serializeMs } : {}),
    ...(m.writeMs !== undefined ? { writeMs: m.writeMs } : {}),
    ...(m.ackSentAt !== undefined
      ? { ackDelayMs: Math.max(0, performance.timeOrigin + performance.now() - m.ackSentAt) }
      : {}),
  };
}

/** The client's view of {@link phasesOf} (absent fields stay absent: adopted checkpoints have none). */
function subtaskPhasesOf(t: TaskCheckpointStats) {
  return {
    ...(t.checkpointStartDelayMs !== undefined ? { startDelayMs: t.checkpointStartDelayMs } : {}),
    ...(t.channelStateWaitMs !== undefined ? { channelStateWaitMs: t.channelStateWaitMs } : {}),
    ...(t.serializeMs !== undefined ? { serializeMs: t.serializeMs } : {}),
    ...(t.writeMs !== undefined ? { writeMs: t.writeMs } : {}),
    ...(t.ackDelayMs !== undefined ? { ackDelayMs: t.ackDelayMs } : {}),
  };
}

function callTask(call: () => Promise<unknown>): void {
  try {
    void call().catch(() => undefined);
  } catch {
    // proxy released: the execution is being torn down
  }
}
