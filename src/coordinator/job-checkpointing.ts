/**
 * The glue between a job, its {@link CheckpointCoordinator} and its checkpoint storage: one per
 * job, living across restarts (so checkpoint ids keep increasing). It carries out the
 * coordinator's decisions on the current execution (trigger, notify), routes task events to it,
 * commits checkpoint metadata to storage, and plans each restore.
 *
 * Bounded jobs: the first source to end its input stops periodic checkpoints; once every task
 * reported end of input, the final checkpoint is triggered on all tasks directly (every channel
 * is drained, so no barrier is needed). Its completion lets the tasks exit, two-phase-commit
 * sinks having committed their last transaction.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CheckpointStorageError, TaskFailureError } from '../errors.js';
import type { CheckpointMetadata } from '../state/storage/checkpoint-metadata.js';
import { CheckpointStorage } from '../state/storage/checkpoint-storage.js';
import { operatorStatePackr } from '../worker/snapshot-storage.js';
import type {
  TaskCheckpointConfig,
  TaskEvent,
  TaskRestoreState,
  TaskSnapshotHandles,
} from '../worker/task-deployment.js';
import { CheckpointCoordinator } from './checkpoint-coordinator.js';
import { checkpointTypeOf } from './checkpoint-kind.js';
import type { CompletedCheckpoint } from './completed-checkpoint.js';
import { systemCoordinatorClock } from './coordinator-clock.js';
import type { JobClient } from './job-client.js';
import type { DeployedTask, Execution } from './scheduler.js';
import { planTaskRestores } from './task-restore-planner.js';

/** Stats of a checkpoint adopted from an earlier run (not measured by this one). */
const RECOVERED_STATS: CompletedCheckpoint['stats'] = {
  endToEndDurationMs: 0,
  maxAlignmentDurationMs: 0,
  maxCheckpointStartDelayMs: 0,
  syncDurationMs: { max: 0, sum: 0 },
  asyncDurationMs: { max: 0, sum: 0 },
  stateSizeBytes: 0,
  acknowledgedTasks: 0,
};

/** Attempts at the final checkpoint before the job fails (each failure is logged). */
const FINAL_CHECKPOINT_ATTEMPTS = 3;

export class JobCheckpointing {
  readonly taskConfig: TaskCheckpointConfig;
  readonly #client: JobClient;
  readonly #storage: CheckpointStorage;
  readonly #coordinator: CheckpointCoordinator;
  readonly #temporaryDir: string | null;
  #execution: Execution | null = null;
  #inputEnded = new Set<string>();
  #finalAttempts = 0;
  /** Metadata of completed checkpoints, by id (what restore reads). */
  readonly #metadata = new Map<number, CheckpointMetadata>();
  readonly #packr = operatorStatePackr();

  private constructor(client: JobClient, dir: string, temporary: boolean) {
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
              callTask(() => t.control.triggerCheckpoint(id, timestamp, type));
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
              maxSyncDurationMs: cp.stats.syncDurationMs.max,
              maxAsyncDurationMs: cp.stats.asyncDurationMs.max,
              bytes: cp.stats.stateSizeBytes,
            }),
          onFailJob: (error) =>
            client.failExecution(
              new TaskFailureError('checkpoint coordinator', undefined, error.message, error.stack, {
                cause: error,
              }),
            ),
          onError: (error) => client.emit('warning', error),
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
    const configured = client.options.checkpointing!.dir;
    if (configured) return new JobCheckpointing(client, resolve(configured), false);
    return new JobCheckpointing(client, mkdtempSync(join(tmpdir(), 'weir-checkpoints-')), true);
  }

  /** Restore state for the first attempt, from `restoreFrom`; null for a fresh start. */
  initialRestore(): Map<string, TaskRestoreState> | null {
    const from = this.#client.options.restoreFrom;
    if (from === undefined) return null;
    let storage = this.#storage;
    if (from !== 'latest') storage = CheckpointStorage.open(resolve(from), { create: false });
    try {
      const found = storage.findRestorable();
      for (const s of found.skipped)
        this.#client.emit('warning', new Error(`skipped checkpoint: ${JSON.stringify(s)}`));
      if (found.state === 'none') {
        if (found.skipped.length > 0 || from !== 'latest') {
          throw new CheckpointStorageError(`no usable checkpoint in ${storage.dir} to restore from`);
        }
        this.#client.emit('fresh-start', { dir: storage.dir, reason: 'no completed checkpoint yet' });
        return null;
      }
      this.#metadata.set(found.metadata.checkpointId, found.metadata);
      this.#coordinator.restoreIdCounter(found.metadata.checkpointId + 1);
      this.#client.emit('restored', { checkpointId: found.metadata.checkpointId, dir: storage.dir });
      const plan = this.#plan(found.metadata, storage);
      if (storage === this.#storage) this.#adoptRetained(found.metadata.checkpointId);
      return plan;
    } finally {
      if (storage !== this.#storage) void storage.close();
    }
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
    return metadata ? this.#plan(metadata, this.#storage) : null;
  }

  #plan(metadata: CheckpointMetadata, storage: CheckpointStorage): Map<string, TaskRestoreState> {
    return planTaskRestores(
      this.#client.plan,
      metadata,
      (h) => this.#packr.unpack(storage.readChunk(h)) as unknown[],
    );
  }

  attach(execution: Execution): void {
    this.#execution = execution;
    this.#inputEnded = new Set();
    this.#finalAttempts = 0;
    const sources = execution.tasks.filter((t) => t.isSource).map((t) => t.key);
    this.#coordinator.setTasks(
      sources,
      execution.tasks.map((t) => t.key),
    );
    this.#coordinator.setSourcesFinished(false);
    this.#client.setCheckpointEventHandler((task, event) => this.#onEvent(task, event));
    this.#coordinator.start();
  }

  /** The execution ended: abort what is pending, wait for commits in flight. */
  async detach(): Promise<void> {
    this.#client.setCheckpointEventHandler(null);
    await this.#coordinator.stop('task-failure');
    this.#execution = null;
  }

  async close(): Promise<void> {
    await this.#coordinator.stop();
    // Discards still running would fail on a closed storage and leave their checkpoint behind.
    await this.#coordinator.store.whenDiscarded();
    await this.#storage.close();
    if (this.#temporaryDir) rmSync(this.#temporaryDir, { recursive: true, force: true });
  }

  #tasks(keys: readonly string[]): DeployedTask[] {
    const byKey = new Map((this.#execution?.tasks ?? []).map((t) => [t.key, t]));
    return keys.map((k) => byKey.get(k)).filter((t): t is DeployedTask => t !== undefined);
  }

  #onEvent(task: DeployedTask, event: TaskEvent): void {
    switch (event.kind) {
      case 'acknowledge':
        this.#coordinator.receiveAcknowledge(task.key, event.checkpointId, {
          stateHandles: event.state,
          metrics: {
            alignmentDurationMs: event.metrics.alignmentDurationMs,
            syncDurationMs: event.metrics.syncDurationMs,
            asyncDurationMs: event.metrics.asyncDurationMs,
            stateSizeBytes: event.metrics.bytes,
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
        this.#inputEnded.add(task.key);
        if (task.isSource) this.#coordinator.setSourcesFinished(true);
        if (this.#execution && this.#inputEnded.size === this.#execution.tasks.length) this.#triggerFinal();
        break;
      case 'deliver':
      case 'failed':
      case 'finished':
        break;
    }
  }

  #triggerFinal(): void {
    this.#finalAttempts++;
    this.#coordinator.triggerCheckpoint('final').catch((error: unknown) => {
      if (!this.#execution) return;
      if (this.#finalAttempts < FINAL_CHECKPOINT_ATTEMPTS) {
        this.#client.emit('warning', error);
        this.#triggerFinal();
      } else {
        const e = error as Error;
        this.#client.failExecution(
          new TaskFailureError(
            'checkpoint coordinator',
            undefined,
            `final checkpoint failed: ${e.message}`,
            e.stack,
            {
              cause: error,
            },
          ),
        );
      }
    });
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
      job: {
        maxParallelism: plan.maxParallelism,
        operators: plan.vertices.flatMap((v) =>
          v.operators.map((o) => ({
            operatorUid: o.uid,
            parallelism: v.parallelism,
            vertexId: v.vertexId,
            name: o.name,
          })),
        ),
      },
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

/** A control call to a task whose worker is gone never matters: the execution is failing anyway. */
/**
 * Calls a task's control port, ignoring a task that is gone: its call rejects when the port
 * closed, or throws synchronously once the execution released its comlink proxy (a checkpoint
 * notification racing the teardown of a failed execution).
 */
function callTask(call: () => Promise<unknown>): void {
  try {
    void call().catch(() => undefined);
  } catch {
    // proxy released: the execution is being torn down
  }
}
