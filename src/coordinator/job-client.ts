/**
 * The user's handle on a running job (`startJob`), and `runJob` for bounded jobs.
 *
 * The client owns the job's life: it deploys an {@link Execution} per attempt, collects what
 * sinks deliver, and on a failure carries out {@link decideFailover}: a fatal error ends the job
 * at once, anything else restarts as the restart strategy says (from the latest completed
 * checkpoint when checkpointing is on).
 *
 * Why one file: the public result and event types (`JobResult`, `CompletedCheckpointStats`,
 * `JobEvents`, …) are the shape of what `JobClient` emits, and the client's attempt loop (deploy,
 * collect, fail over, finish) is one state machine whose branches share its fields; the types stay
 * next to the only code that fills them. The pieces with logic of their own live beside it:
 * failover decisions and restore plans (restore-planning.ts), checkpointing
 * (job-checkpointing.ts), options (job-options.ts).
 */

import { EventEmitter } from 'node:events';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildStreamGraph } from '../api/define-job.js';
import { consoleLogger, errorField, type LogLevel } from '../api/logger.js';
import { attachDashboard } from '../dashboard/attach-dashboard.js';
import { type Dashboard, startDashboard } from '../dashboard/dashboard-server.js';
import {
  InvalidOptionError,
  JobAbortedError,
  JobCancelledError,
  JobFailedError,
  JobStateError,
  type TaskFailureError,
} from '../errors.js';
import { buildExecutionPlan } from '../graph/build-execution-plan.js';
import type { ExecutionPlan } from '../graph/execution-plan.js';
import { importJobModule, jobModuleUrl } from '../loader/job-module.js';
import type { OperatorMetrics, TaskEvent } from '../protocol/task-deployment.js';
import { createStateDir, removeStateDir } from '../state/lmdb/lmdb-state-dir.js';
import { JobCheckpointing } from './job-checkpointing.js';
import {
  type CompletedCheckpointStats,
  type FreshStartEvent,
  JobWarning,
  type RestoredEvent,
} from './job-events.js';
import { type JobOptions, type ResolvedJobOptions, resolveJobOptions } from './job-options.js';
import { createRestartStrategy } from './restart-strategy.js';
import { decideFailover } from './restore-planning.js';
import { type DeployedTask, Execution, TaskPool } from './scheduler.js';

export type { CompletedCheckpointStats, SubtaskCheckpointStats } from './job-events.js';

/** Per-operator totals over all subtasks of the last attempt. */
export interface OperatorSummary {
  readonly name: string;
  readonly vertexId: number;
  readonly parallelism: number;
  readonly recordsIn: number;
  readonly recordsOut: number;
  /** Operator-specific counters summed over subtasks (e.g. a file source's `skippedLines`). */
  readonly counters: Readonly<Record<string, number>>;
}

export interface JobMetrics {
  /** Wall time from deploy of the first attempt to the end of the job, ms. */
  readonly durationMs: number;
  /**
   * Start-up: wall time from deploy of the first attempt until every one of its tasks runs (job
   * module loaded in every thread, channels open, state restored), ms. Undefined until then, and
   * when the first attempt failed before all its tasks ran. `durationMs - startupMs` is the
   * steady-state time, the right denominator for records/s.
   */
  readonly startupMs?: number;
  readonly operators: readonly OperatorSummary[];
}

/** A checkpoint that did not complete (the `checkpoint-failed` event). */
export interface FailedCheckpointStats {
  readonly checkpointId: number;
  readonly triggerTimestamp: number;
  /** When it was aborted, ms since the epoch. */
  readonly failedAt: number;
  /** Flink's CheckpointFailureReason, e.g. `declined`, `expired`, `task-failure`, `job-stopping`. */
  readonly reason: string;
  readonly message: string;
}

/** Where {@link JobClient.stopWithSavepoint} put its savepoint. */
export interface Savepoint {
  readonly checkpointId: number;
  /** A checkpoint directory holding only this savepoint; pass it as `restoreFrom`. */
  readonly path: string;
}

export interface JobResult {
  /** `finished`: every source ended; `stopped`: stopped with a savepoint (see `savepoint`). */
  readonly status: 'finished' | 'stopped';
  /** Set when the job was stopped with {@link JobClient.stopWithSavepoint}. */
  readonly savepoint?: Savepoint;
  /** Records collected per `sinks.collect(name)`. */
  readonly sinks: Readonly<Record<string, unknown[]>>;
  readonly restarts: number;
  readonly checkpoints: readonly CompletedCheckpointStats[];
  readonly metrics: JobMetrics;
  /** The execution plan that ran (see `describePlan`). */
  readonly plan: ExecutionPlan;
}

/** Payload of the `deployed` event. */
export interface DeployedEvent {
  /** 0 for the first attempt, +1 per restart (the `ctx.attempt` of user functions). */
  readonly attempt: number;
  /** The checkpoint this attempt restored, if any. */
  readonly restoredFrom: number | undefined;
}

/** Payload of the `restarting` event. */
export interface RestartingEvent {
  /** The attempt about to start (1 for the first restart). */
  readonly attempt: number;
  readonly delayMs: number;
  /** The failure that caused the restart. */
  readonly cause: TaskFailureError;
}

/** Payload of the `collected` event. */
export interface CollectedEvent {
  /** The `sinks.collect(name)` name. */
  readonly sink: string;
  /**
   * `vertexId/transactionId` of an exactly-once delivery (the same when a restore commits it
   * again, which the client drops: one process sees it once; `weir verify` dedups across the
   * processes of a SIGKILL and restore by it); null for an at-least-once delivery.
   */
  readonly transaction: string | null;
  readonly records: readonly unknown[];
}

/**
 * The events of a {@link JobClient}, as `name: [listener arguments]`. Listeners run on the main
 * thread, synchronously with the client's bookkeeping: keep them short.
 */
export interface JobEvents {
  /** An attempt was deployed: every task was handed to a worker (emitted once per attempt). */
  deployed: [event: DeployedEvent];
  /** A restartable failure: the job restarts after `delayMs` (not emitted for fatal failures). */
  restarting: [event: RestartingEvent];
  /** A checkpoint completed (every task acknowledged it and its metadata is durable). */
  checkpoint: [stats: CompletedCheckpointStats];
  /** A checkpoint did not complete: declined, expired, a task failed, subsumed, or the job stopping. */
  'checkpoint-failed': [stats: FailedCheckpointStats];
  /** A live sample of the task counters, every `metricsInterval` ms (see {@link JobClient.metrics}). */
  metrics: [metrics: JobMetrics];
  /** `restoreFrom` was honoured: the first attempt starts from this checkpoint. */
  restored: [event: RestoredEvent];
  /** `restoreFrom: 'latest'` found no completed checkpoint: the job starts from the beginning. */
  'fresh-start': [event: FreshStartEvent];
  /**
   * Something went wrong without failing the job: a checkpoint failed (within
   * `tolerableFailures`), a final checkpoint is retried; restore decisions come as a
   * {@link JobWarning} (`details.kind`: a fallback past damaged checkpoints, state dropped with
   * `allowNonRestoredState`, stateful operators without an explicit uid).
   */
  warning: [warning: Error];
  /** Records a `sinks.collect` sink committed (also in `JobResult.sinks`), as they arrive. */
  collected: [event: CollectedEvent];
}

/** A listener of the event `E`. */
export type JobEventListener<E extends keyof JobEvents> = (...args: JobEvents[E]) => void;

/**
 * Typed `on`/`once`/`off` for {@link JobEvents} (declaration merging: works with every
 * `@types/node` version, also those without a generic `EventEmitter`).
 */
export interface JobClient {
  on<E extends keyof JobEvents>(event: E, listener: JobEventListener<E>): this;
  once<E extends keyof JobEvents>(event: E, listener: JobEventListener<E>): this;
  off<E extends keyof JobEvents>(event: E, listener: JobEventListener<E>): this;
  addListener<E extends keyof JobEvents>(event: E, listener: JobEventListener<E>): this;
  removeListener<E extends keyof JobEvents>(event: E, listener: JobEventListener<E>): this;
  emit<E extends keyof JobEvents>(event: E, ...args: JobEvents[E]): boolean;
}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface above only narrows EventEmitter's methods to JobEvents.
export class JobClient extends EventEmitter {
  /**
   * Resolves with the result of a bounded job; rejects with JobFailedError, JobCancelledError, or
   * (the `signal` was aborted) JobAbortedError.
   */
  readonly done: Promise<JobResult>;
  readonly plan: ExecutionPlan;
  readonly options: ResolvedJobOptions;
  /** `http://host:port/` of the job's dashboard when started with the `dashboard` option. */
  dashboardUrl: string | undefined;
  /** URL of the job module. */
  readonly jobModule: string;
  readonly #jobModule: string;
  readonly #sinks: Record<string, unknown[]> = {};
  /** `sink/subtask/checkpointId` of transactional deliveries already taken: commits are idempotent. */
  readonly #committed = new Set<string>();
  readonly #checkpoints: CompletedCheckpointStats[] = [];
  readonly #startedAt = performance.now();
  #execution: Execution | null = null;
  #restarts = 0;
  #checkpointing: JobCheckpointing | null = null;
  #savepoint: Savepoint | null = null;
  /** A cluster job's stop-with-savepoint requests (src/cluster/cluster-savepoint.ts), once its run started. */
  #clusterSavepoints: import('../cluster/cluster-savepoint.js').ClusterSavepointRequests | null = null;
  #ended = false;
  #cancelled = false;
  /** Set when the `signal` option aborted the job: `done` rejects with it. */
  #aborted: JobAbortedError | null = null;
  /** Wakes a restart delay early (cancel, abort). */
  #interruptDelay: (() => void) | null = null;
  /** `job` field of every log record: the job module's file name. */
  readonly #jobName: string;
  #lastMetrics: ReadonlyMap<string, readonly OperatorMetrics[]> = new Map();
  /** Tasks of the first attempt that reported `running`; at the last one, `#startupMs` is set. */
  #runningTasks = 0;
  #startupMs: number | undefined;
  /** Worker errors outside any attempt (see TaskPool): reported as warnings, attached to a job failure. */
  readonly #strayErrors: Error[] = [];
  /** Routes acknowledgements, declines and end-of-input to the checkpoint coordinator. */
  #checkpointEvents: ((task: DeployedTask, event: TaskEvent) => void) | null = null;

  /** @internal */
  setCheckpointEventHandler(handler: ((task: DeployedTask, event: TaskEvent) => void) | null): void {
    this.#checkpointEvents = handler;
  }

  constructor(jobModule: string, plan: ExecutionPlan, options: ResolvedJobOptions) {
    super();
    this.#jobModule = jobModule;
    this.#jobName = jobModule.startsWith('file:') ? basename(fileURLToPath(jobModule)) : jobModule;
    this.jobModule = jobModule;
    this.plan = plan;
    this.options = options;
    // A collect sink that receives nothing still appears in the result, as [].
    for (const v of plan.vertices) {
      for (const op of v.operators) {
        if (op.spec.kind === 'sink' && op.spec.sink.type === 'collect') this.#sinks[op.spec.sink.name] = [];
      }
    }
    // Start on the next turn of the event loop: a caller that does `const c = await startJob(…);
    // c.on('deployed', …)` attaches its listeners in microtasks before that, so it sees every event.
    this.done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#run());
    // The caller may only await `done` later; an unobserved rejection must not crash the process.
    this.done.catch(() => undefined);
    void this.done.then(
      (result) => {
        this.#ended = true;
        this.#log('info', { status: result.status, restarts: result.restarts }, 'job ended');
      },
      (error: unknown) => {
        this.#ended = true;
        this.#log('error', { err: errorField(error) }, 'job failed');
      },
    );
    // After `done` exists: an abort cancels, and cancel() awaits `done`.
    const signal = options.signal;
    if (signal) {
      const onAbort = (): void => {
        this.#aborted ??= new JobAbortedError(signal.reason);
        void this.cancel();
      };
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        // The listener must not keep the signal (often long-lived) holding this job.
        void this.#settled().then(() => signal.removeEventListener('abort', onAbort));
      }
    }
  }

  /** Resolves once `done` settled, either way. */
  #settled(): Promise<void> {
    return this.done.then(
      () => undefined,
      () => undefined,
    );
  }

  /** Logs the job's lifecycle through the `logger` option (nothing without one), with the job's fields. */
  #log(level: LogLevel, fields: Record<string, unknown>, msg: string): void {
    this.options.logger?.[level]({ job: this.#jobName, ...fields }, msg);
  }

  /**
   * Cancels the job: every task stops, every thread is released; `done` rejects with
   * JobCancelledError (JobAbortedError when the `signal` option aborted it).
   */
  async cancel(): Promise<void> {
    this.#cancelled = true;
    this.#interruptDelay?.();
    await this.#execution?.cancel();
    await this.#settled();
  }

  /** The error `done` rejects with after a cancel. */
  #cancelledError(): Error {
    return this.#aborted ?? new JobCancelledError();
  }

  /**
   * The job's counters: while it runs, the latest sample of the current attempt's tasks (taken
   * every `metricsInterval` ms; a restart starts the counts again); once it finished, the totals
   * of the attempt that finished.
   */
  metrics(): JobMetrics {
    return {
      durationMs: performance.now() - this.#startedAt,
      startupMs: this.#startupMs,
      operators: summarize(this.plan, this.#lastMetrics),
    };
  }

  /**
   * The latest sample per subtask (`vertexId/subtask` → the counters of its chained operators):
   * of the current attempt while the job runs, of the attempt that finished at the end.
   */
  subtaskMetrics(): ReadonlyMap<string, readonly OperatorMetrics[]> {
    return this.#lastMetrics;
  }

  /**
   * Samples every task's counters over its control port (answered between two turns of the
   * task's loop) and emits `metrics` with {@link metrics}. Returns the function that stops it.
   */
  #sampleMetrics(execution: Execution): () => void {
    const every = this.options.metricsInterval;
    if (every <= 0) return () => undefined;
    const live = new Map<string, readonly OperatorMetrics[]>();
    let inFlight = false;
    let stopped = false;
    const timer = setInterval(() => {
      if (inFlight || stopped) return;
      inFlight = true;
      const samples = execution.tasks.map(async (t) => {
        let timeout: NodeJS.Timeout | undefined;
        try {
          const m = await Promise.race([
            t.control.metrics(),
            new Promise<null>((r) => {
              timeout = setTimeout(() => r(null), every);
            }),
          ]);
          if (m) live.set(t.key, m);
        } catch {
          // The task ended (its port is closed): its last sample or `finished` counts stand.
        } finally {
          clearTimeout(timeout);
        }
      });
      void Promise.all(samples).then(() => {
        inFlight = false;
        if (stopped) return;
        this.#lastMetrics = new Map(live);
        this.emit('metrics', this.metrics());
      });
    }, every);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }

  async #run(): Promise<JobResult> {
    if (this.#cancelled) throw this.#cancelledError();
    if (this.options.cluster) return this.#runClusterInstance();
    const checkpoints = this.options.checkpointing ? await JobCheckpointing.open(this) : null;
    this.#checkpointing = checkpoints;
    const restartStrategy = createRestartStrategy(this.options.restartStrategy);
    const stateDir = this.options.stateBackend === 'lmdb' ? createStateDir() : undefined;
    // One set of worker threads for every attempt: a restart reuses the threads of tasks that
    // stopped cleanly (see TaskPool).
    const pool = new TaskPool(
      this.plan.vertices.reduce((n, v) => n + v.parallelism, 0),
      { onStrayError: (e) => this.#onStrayError(e), workerNice: this.options.workerNice },
    );
    try {
      let restore = checkpoints ? checkpoints.initialRestore() : null;
      for (;;) {
        const attempt = this.#restarts;
        const execution = new Execution(
          this.plan,
          {
            jobModule: this.#jobModule,
            args: this.options.args,
            parallelism: this.options.parallelism,
            maxParallelism: this.options.maxParallelism,
            attempt,
            ringBytes: this.options.channels.ringBytes,
            batchRecords: this.options.channels.batchRecords,
            batchBytes: this.options.channels.batchBytes,
            recordFormat: this.options.channels.recordFormat,
            debloat: this.options.channels.debloat,
            wakeDelayMs: this.options.channels.wakeDelayMs,
            checkpointing: checkpoints?.taskConfig ?? null,
            stateBackend: this.options.stateBackend,
            stateDir,
            restore,
            pool,
            stuckTaskTimeout: this.options.stuckTaskTimeout,
            faultInjection: this.options.faultInjection,
          },
          (task, event) => this.#onTaskEvent(task, event),
        );
        this.#execution = execution;
        // cancel() may have run before this execution existed.
        if (this.#cancelled) void execution.cancel();
        checkpoints?.attach(execution);
        const restoredFrom = restore ? [...restore.values()][0]?.checkpointId : undefined;
        this.#log('info', { attempt, checkpointId: restoredFrom }, 'job deployed');
        this.emit('deployed', { attempt, restoredFrom });
        const stopSampling = this.#sampleMetrics(execution);
        const outcome = await execution.done;
        stopSampling();
        await checkpoints?.detach();
        switch (outcome.state) {
          case 'finished':
            this.#lastMetrics = outcome.metrics;
            return this.#finishedResult();
          case 'cancelled':
            if (this.#savepoint) return this.#stoppedResult(this.#savepoint);
            throw this.#cancelledError();
          case 'failed': {
            if (this.#savepoint) return this.#stoppedResult(this.#savepoint);
            if (this.#cancelled) throw this.#cancelledError();
            const decision = decideFailover({
              error: outcome.error,
              nowMs: Date.now(),
              strategy: restartStrategy,
            });
            if (decision.kind === 'fail-job') throw this.#failJob(outcome.error, decision.reason);
            this.#log(
              'warn',
              {
                attempt: attempt + 1,
                delayMs: decision.delayMs,
                task: outcome.error.task,
                operator: outcome.error.operator,
                err: errorField(outcome.error),
              },
              'task failed; restarting',
            );
            this.emit('restarting', {
              attempt: attempt + 1,
              delayMs: decision.delayMs,
              cause: outcome.error,
            });
            if (decision.delayMs > 0) await this.#delay(decision.delayMs);
            if (this.#cancelled) throw this.#cancelledError();
            this.#restarts++;
            restore = checkpoints ? checkpoints.restoreForRestart() : null;
            break;
          }
        }
      }
    } finally {
      await pool.close();
      await checkpoints?.close();
      if (stateDir) removeStateDir(stateDir);
    }
  }

  /** This process's part of a job formed by several (src/cluster/cluster-job.ts); no restarts yet. */
  async #runClusterInstance(): Promise<JobResult> {
    const { runClusterInstance } = await import('../cluster/cluster-job.js');
    const { ClusterSavepointRequests } = await import('../cluster/cluster-savepoint.js');
    const savepoints = new ClusterSavepointRequests(
      this.options.cluster!.name,
      this.options.checkpointing!.timeout,
    );
    this.#clusterSavepoints = savepoints;
    // Live counters of this instance's tasks (`metrics()`, the `metrics` event, the dashboard and
    // the member status `weir cluster status` prints), sampled per deployment like a local job's.
    let stopSampling = (): void => undefined;
    const ended = await runClusterInstance(this, {
      jobModule: this.#jobModule,
      onTaskEvent: (task, event) => this.#onTaskEvent(task, event),
      onStrayError: (e) => this.#onStrayError(e),
      onExecution: (execution) => {
        stopSampling();
        this.#execution = execution;
        if (this.#cancelled) void execution.cancel();
        stopSampling = this.#sampleMetrics(execution);
      },
      savepoints,
    }).finally(() => {
      stopSampling();
      savepoints.end('the job ended');
    });
    if (ended === null) throw this.#cancelledError();
    this.#restarts = ended.restarts;
    if (ended.stopped) {
      this.#savepoint = ended.stopped;
      return this.#stoppedResult(ended.stopped);
    }
    this.#lastMetrics = ended.metrics;
    this.#restarts = ended.restarts;
    return this.#finishedResult();
  }

  /** The result of a job whose tasks all finished (one process's or a cluster instance's). */
  #finishedResult(): JobResult {
    return {
      status: 'finished',
      sinks: this.#sinks,
      restarts: this.#restarts,
      checkpoints: this.#checkpoints,
      metrics: this.metrics(),
      plan: this.plan,
    };
  }

  /**
   * Flink's stop-with-savepoint: takes a savepoint into `dir` (a new, self-contained checkpoint
   * directory; it must not exist or be empty), waits until every task's two-phase-commit sinks
   * committed up to it (bounded by the checkpoint timeout; past it a `savepoint-commits-pending`
   * {@link JobWarning} says the rest is committed on restore), then stops every task. `done` then resolves with `status: 'stopped'` and the savepoint; a later
   * run continues from it with `restoreFrom: dir` (also at another parallelism).
   * @throws InvalidOptionError when the job runs without checkpointing; the savepoint's failure
   *   (the job keeps running then).
   */
  async stopWithSavepoint(dir: string): Promise<Savepoint> {
    if (!this.options.checkpointing) {
      throw new InvalidOptionError(
        'stopWithSavepoint',
        'the job runs without checkpointing; enable `checkpointing`',
      );
    }
    if (this.options.cluster) return this.#stopClusterWithSavepoint(dir);
    while (this.#checkpointing === null && !this.#ended) {
      // The job is still starting: its checkpointing opens on the first turns of #run.
      await new Promise((r) => setImmediate(r));
    }
    if (this.#ended || this.#checkpointing === null) {
      throw new JobStateError('stopWithSavepoint: the job has already ended');
    }
    const savepoint = await this.#checkpointing.savepoint(dir);
    this.#savepoint = savepoint;
    if (await this.#awaitSavepointCommits(savepoint, this.options.checkpointing.timeout)) {
      await this.#markSavepointCommitted(savepoint);
    }
    this.#cancelled = true;
    await this.#execution?.cancel();
    await this.done.catch(() => undefined);
    return savepoint;
  }

  /**
   * A cluster job: this instance asks the coordinator, which takes the savepoint across every
   * instance and stops the job on all of them (src/cluster/cluster-savepoint.ts); resolves once
   * this instance stopped.
   */
  async #stopClusterWithSavepoint(dir: string): Promise<Savepoint> {
    while (this.#clusterSavepoints === null && !this.#ended) await new Promise((r) => setImmediate(r));
    if (this.#clusterSavepoints === null)
      throw new JobStateError('stopWithSavepoint: the job has already ended');
    const savepoint = await this.#clusterSavepoints.request(dir);
    await this.done.catch(() => undefined);
    return savepoint;
  }

  /**
   * Lets every task's committing sinks commit all they hold of checkpoints `<=` the savepoint
   * before the tasks are cancelled: commits run asynchronously, and a cancel would overtake them
   * (the output would then only appear when a run restores the savepoint). Bounded by the
   * checkpoint timeout; past it, or when a task failed or ended first, the stop goes on and a
   * `savepoint-commits-pending` warning says the rest is committed on restore.
   * @returns true when every task confirmed its sinks committed everything up to the savepoint.
   */
  async #awaitSavepointCommits(savepoint: Savepoint, timeoutMs: number): Promise<boolean> {
    const tasks = this.#execution?.tasks ?? [];
    let timer: NodeJS.Timeout | undefined;
    const waits = tasks.map((t) =>
      Promise.resolve()
        .then(() => t.control.awaitCommitted(savepoint.checkpointId))
        // The task ended (its port closed): what it did not commit is left to a restore.
        .catch(() => false),
    );
    const outcome = await Promise.race([
      Promise.all(waits).then((oks) => (oks.every(Boolean) ? 'committed' : 'task-ended')),
      new Promise<'timeout'>((r) => {
        timer = setTimeout(() => r('timeout'), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
    if (outcome === 'committed') return true;
    const why =
      outcome === 'timeout'
        ? `the sinks did not commit within the checkpoint timeout (${timeoutMs} ms)`
        : 'a task failed or ended before its sinks committed';
    const warning = new JobWarning(
      { kind: 'savepoint-commits-pending', checkpointId: savepoint.checkpointId, reason: outcome },
      `stop-with-savepoint ${savepoint.checkpointId}: ${why}; the job stops anyway and the uncommitted output is committed when a run restores ${savepoint.path}`,
    );
    if (this.listenerCount('warning') > 0) this.emit('warning', warning);
    else console.warn(`weir: ${warning.message}`);
    return false;
  }

  /**
   * Records in the savepoint (and in the job's copy of that checkpoint) that its commits are
   * done, so a restore does not commit them again. A failure to record it only costs that
   * guarantee: the restore then commits again (duplicates only for sinks that cannot recognise a
   * repeated commit), which the warning says.
   */
  async #markSavepointCommitted(savepoint: Savepoint): Promise<void> {
    try {
      await this.#checkpointing?.markSinksCommitted(savepoint);
    } catch (e) {
      const warning = new JobWarning(
        { kind: 'savepoint-commits-pending', checkpointId: savepoint.checkpointId, reason: 'not-recorded' },
        `stop-with-savepoint ${savepoint.checkpointId}: its sinks committed, but recording that in the savepoint failed (${e instanceof Error ? e.message : String(e)}); a run that restores ${savepoint.path} commits them again`,
      );
      if (this.listenerCount('warning') > 0) this.emit('warning', warning);
      else console.warn(`weir: ${warning.message}`);
    }
  }

  #stoppedResult(savepoint: Savepoint): JobResult {
    return {
      status: 'stopped',
      savepoint,
      sinks: this.#sinks,
      restarts: this.#restarts,
      checkpoints: this.#checkpoints,
      metrics: this.metrics(),
      plan: this.plan,
    };
  }

  /** Waits a restart delay; cancel() and the signal end it early. */
  #delay(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(wake, ms);
      const self = this;
      function wake(): void {
        clearTimeout(timer);
        self.#interruptDelay = null;
        resolve();
      }
      this.#interruptDelay = wake;
    });
  }

  /** Called by the checkpointing glue when a checkpoint completes. */
  recordCheckpoint(stats: CompletedCheckpointStats): void {
    this.#checkpoints.push(stats);
    this.#log(
      'debug',
      { checkpointId: stats.checkpointId, durationMs: stats.durationMs },
      'checkpoint completed',
    );
    this.emit('checkpoint', stats);
  }

  /** @internal Called by the checkpointing glue for a problem that does not fail the job: logs it and emits `warning`. */
  warn(error: unknown): void {
    const e = error instanceof Error ? error : new Error(String(error));
    this.#log('warn', { err: errorField(e) }, e.message);
    this.emit('warning', e);
  }

  /** @internal Logs through the `logger` option (the checkpointing glue's restore decisions). */
  log(level: LogLevel, fields: Record<string, unknown>, msg: string): void {
    this.#log(level, fields, msg);
  }

  /** Fails the current attempt (e.g. too many checkpoint failures): the restart strategy decides. */
  failExecution(error: TaskFailureError): void {
    this.#execution?.fail(error);
  }

  #failJob(cause: TaskFailureError, reason: 'fatal-error' | 'restarts-exhausted'): JobFailedError {
    const first = cause.message.split('\n')[0];
    const error = new JobFailedError(
      reason === 'fatal-error'
        ? `job failed with a fatal error (not restarted; restarting cannot fix it) after ${this.#restarts} restart(s): ${first}`
        : `job failed after ${this.#restarts} restart(s): ${first}`,
      this.#restarts,
      { cause, reason },
    );
    error.suppressed.push(...this.#strayErrors);
    return error;
  }

  /**
   * A worker error between attempts, during a teardown, or after the job ended (a user timer that
   * throws during the restart delay, an idle worker over its heap limit). It cannot fail an
   * attempt that is not running, and must never take the host process down: it is emitted as a
   * `warning` (printed when nobody listens) and attached to the job's failure, if any.
   */
  #onStrayError(error: TaskFailureError): void {
    this.#strayErrors.push(error);
    if (this.listenerCount('warning') > 0) this.emit('warning', error);
    else {
      (this.options.logger ?? consoleLogger).warn(
        { job: this.#jobName, task: error.task, err: errorField(error) },
        'worker error outside a running attempt',
      );
    }
  }

  #onTaskEvent(task: DeployedTask, event: TaskEvent): void {
    this.#checkpointEvents?.(task, event);
    switch (event.kind) {
      case 'deliver': {
        if (event.transactionId !== null) {
          const key = `${event.sink}/${task.id.vertexId}/${event.transactionId}`;
          if (this.#committed.has(key)) return;
          this.#committed.add(key);
        }
        let bucket = this.#sinks[event.sink];
        if (!bucket) this.#sinks[event.sink] = bucket = [];
        for (const r of event.records) bucket.push(r);
        if (this.listenerCount('collected') > 0) {
          this.emit('collected', {
            sink: event.sink,
            transaction: event.transactionId === null ? null : `${task.id.vertexId}/${event.transactionId}`,
            records: event.records,
          });
        }
        break;
      }
      case 'running':
        if (this.#restarts === 0 && ++this.#runningTasks === this.#execution?.tasks.length)
          this.#startupMs = performance.now() - this.#startedAt;
        break;
      case 'log':
        (this.options.logger ?? consoleLogger)[event.level](
          { job: this.#jobName, task: task.label, attempt: this.#restarts, ...event.fields },
          event.msg,
        );
        break;
      case 'failed':
      case 'finished':
      case 'input-ended':
      case 'acknowledge':
      case 'decline':
        break;
    }
  }
}

function summarize(
  plan: ExecutionPlan,
  metrics: ReadonlyMap<string, readonly OperatorMetrics[]>,
): OperatorSummary[] {
  type Acc = { recordsIn: number; recordsOut: number; counters: Record<string, number> };
  const byNode = new Map<number, Acc>();
  for (const list of metrics.values()) {
    for (const m of list) {
      let acc = byNode.get(m.nodeId);
      if (!acc) {
        acc = { recordsIn: 0, recordsOut: 0, counters: {} };
        byNode.set(m.nodeId, acc);
      }
      acc.recordsIn += m.recordsIn;
      acc.recordsOut += m.recordsOut;
      for (const [k, v] of Object.entries(m.counters ?? {})) acc.counters[k] = (acc.counters[k] ?? 0) + v;
    }
  }
  const out: OperatorSummary[] = [];
  for (const v of plan.vertices) {
    for (const op of v.operators) {
      const m = byNode.get(op.nodeId) ?? { recordsIn: 0, recordsOut: 0, counters: {} };
      out.push({ name: op.name, vertexId: v.vertexId, parallelism: v.parallelism, ...m });
    }
  }
  return out;
}

/**
 * Starts a job from a job module (path or URL). Resolves once the job is deployed; rejects
 * before any thread starts when the options, the module or the graph are invalid.
 */
export async function startJob(jobModule: string | URL, options: JobOptions = {}): Promise<JobClient> {
  const resolved = resolveJobOptions(options);
  if (resolved.signal?.aborted) throw new JobAbortedError(resolved.signal.reason);
  const url = jobModuleUrl(jobModule);
  const def = await importJobModule(url);
  const graph = buildStreamGraph(def, resolved.args, url);
  const plan = buildExecutionPlan(graph, {
    parallelism: resolved.parallelism,
    maxParallelism: resolved.maxParallelism,
  });
  let dashboard: Dashboard | null = null;
  if (resolved.dashboard) {
    try {
      dashboard = await startDashboard(resolved.dashboard);
    } catch (e) {
      throw new InvalidOptionError(
        'dashboard',
        `cannot listen on ${resolved.dashboard.host}:${resolved.dashboard.port}: ${(e as Error).message}`,
        { cause: e },
      );
    }
  }
  const client = new JobClient(url, plan, resolved);
  // Synchronously, before the job's first event (its run starts on a later turn).
  if (dashboard && resolved.dashboard) attachDashboard(dashboard, client, resolved.dashboard, url);
  return client;
}

/** Runs a bounded job to its end. */
export async function runJob(jobModule: string | URL, options: JobOptions = {}): Promise<JobResult> {
  const client = await startJob(jobModule, options);
  return client.done;
}
