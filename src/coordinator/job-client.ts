/**
 * The user's handle on a running job (`startJob`), and `runJob` for bounded jobs.
 *
 * The client owns the job's life: it deploys an {@link Execution} per attempt, collects what
 * sinks deliver, and on a task failure asks the restart strategy whether and when to redeploy
 * (from the latest completed checkpoint, once checkpointing lands in the runtime).
 */

import { EventEmitter } from 'node:events';
import { buildStreamGraph } from '../api/define-job.js';
import {
  InvalidOptionError,
  JobCancelledError,
  JobFailedError,
  JobStateError,
  type TaskFailureError,
} from '../errors.js';
import { buildExecutionPlan } from '../graph/build-execution-plan.js';
import type { ExecutionPlan } from '../graph/execution-plan.js';
import { createStateDir, removeStateDir } from '../state/lmdb-state-dir.js';
import { importJobModule, jobModuleUrl } from '../worker/job-module.js';
import type { OperatorMetrics, TaskEvent } from '../worker/task-deployment.js';
import { JobCheckpointing } from './job-checkpointing.js';
import type { FreshStartEvent, RestoredEvent } from './job-events.js';
import { type JobOptions, type ResolvedJobOptions, resolveJobOptions } from './job-options.js';
import { createRestartStrategy } from './restart-strategy.js';
import { type DeployedTask, Execution, TaskPool } from './scheduler.js';

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

/** Stats of one completed checkpoint. */
export interface CompletedCheckpointStats {
  readonly checkpointId: number;
  readonly triggerTimestamp: number;
  readonly durationMs: number;
  readonly maxAlignmentDurationMs: number;
  readonly maxSyncDurationMs: number;
  readonly maxAsyncDurationMs: number;
  readonly bytes: number;
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

/**
 * Typed listeners of the restore events (payloads in `job-events.ts`); every other event keeps
 * EventEmitter's signature.
 */
export interface JobClient {
  on(event: 'restored', listener: (event: RestoredEvent) => void): this;
  on(event: 'fresh-start', listener: (event: FreshStartEvent) => void): this;
  /** A {@link JobWarning} for restore decisions; other warnings are plain errors. */
  on(event: 'warning', listener: (warning: Error) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
  once(event: 'restored', listener: (event: RestoredEvent) => void): this;
  once(event: 'fresh-start', listener: (event: FreshStartEvent) => void): this;
  once(event: 'warning', listener: (warning: Error) => void): this;
  once(event: string | symbol, listener: (...args: any[]) => void): this;
}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface only narrows `on`/`once` overloads of the class's inherited EventEmitter methods
export class JobClient extends EventEmitter {
  /** Resolves with the result of a bounded job; rejects with JobFailedError or JobCancelledError. */
  readonly done: Promise<JobResult>;
  readonly plan: ExecutionPlan;
  readonly options: ResolvedJobOptions;
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
  #ended = false;
  #cancelled = false;
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
    this.plan = plan;
    this.options = options;
    // Start on the next turn of the event loop: a caller that does `const c = await startJob(…);
    // c.on('deployed', …)` attaches its listeners in microtasks before that, so it sees every event.
    this.done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#run());
    // The caller may only await `done` later; an unobserved rejection must not crash the process.
    this.done.catch(() => undefined);
    void this.done.then(
      () => {
        this.#ended = true;
      },
      () => {
        this.#ended = true;
      },
    );
  }

  /** Cancels the job: every task stops, every thread is released; `done` rejects with JobCancelledError. */
  async cancel(): Promise<void> {
    this.#cancelled = true;
    await this.#execution?.cancel();
    await this.done.catch(() => undefined);
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
    if (this.#cancelled) throw new JobCancelledError();
    const checkpoints = this.options.checkpointing ? await JobCheckpointing.open(this) : null;
    this.#checkpointing = checkpoints;
    const restartStrategy = createRestartStrategy(this.options.restartStrategy);
    const stateDir = this.options.stateBackend === 'lmdb' ? createStateDir() : undefined;
    // One set of worker threads for every attempt: a restart reuses the threads of tasks that
    // stopped cleanly (see TaskPool).
    const pool = new TaskPool(
      this.plan.vertices.reduce((n, v) => n + v.parallelism, 0),
      { onStrayError: (e) => this.#onStrayError(e) },
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
            checkpointing: checkpoints?.taskConfig ?? null,
            stateBackend: this.options.stateBackend,
            stateDir,
            restore,
            pool,
            stuckTaskTimeout: this.options.stuckTaskTimeout,
          },
          (task, event) => this.#onTaskEvent(task, event),
        );
        this.#execution = execution;
        // cancel() may have run before this execution existed.
        if (this.#cancelled) void execution.cancel();
        checkpoints?.attach(execution);
        this.emit('deployed', {
          attempt,
          restoredFrom: restore ? [...restore.values()][0]?.checkpointId : undefined,
        });
        const stopSampling = this.#sampleMetrics(execution);
        const outcome = await execution.done;
        stopSampling();
        await checkpoints?.detach();
        switch (outcome.state) {
          case 'finished':
            this.#lastMetrics = outcome.metrics;
            return {
              status: 'finished',
              sinks: this.#sinks,
              restarts: this.#restarts,
              checkpoints: this.#checkpoints,
              metrics: this.metrics(),
              plan: this.plan,
            };
          case 'cancelled':
            if (this.#savepoint) return this.#stoppedResult(this.#savepoint);
            throw new JobCancelledError();
          case 'failed': {
            if (this.#savepoint) return this.#stoppedResult(this.#savepoint);
            if (this.#cancelled) throw new JobCancelledError();
            const decision = restartStrategy.onFailure(Date.now());
            if (decision.kind === 'give-up') throw this.#giveUp(outcome.error);
            this.emit('restarting', {
              attempt: attempt + 1,
              delayMs: decision.delayMs,
              cause: outcome.error,
            });
            if (decision.delayMs > 0) await new Promise((r) => setTimeout(r, decision.delayMs));
            if (this.#cancelled) throw new JobCancelledError();
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

  /**
   * Flink's stop-with-savepoint: takes a savepoint into `dir` (a new, self-contained checkpoint
   * directory; it must not exist or be empty), lets two-phase-commit sinks commit up to it, then
   * stops every task. `done` then resolves with `status: 'stopped'` and the savepoint; a later
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
    while (this.#checkpointing === null && !this.#ended) {
      // The job is still starting: its checkpointing opens on the first turns of #run.
      await new Promise((r) => setImmediate(r));
    }
    if (this.#ended || this.#checkpointing === null) {
      throw new JobStateError('stopWithSavepoint: the job has already ended');
    }
    const savepoint = await this.#checkpointing.savepoint(dir);
    this.#savepoint = savepoint;
    this.#cancelled = true;
    await this.#execution?.cancel();
    await this.done.catch(() => undefined);
    return savepoint;
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

  /** Called by the checkpointing glue when a checkpoint completes. */
  recordCheckpoint(stats: CompletedCheckpointStats): void {
    this.#checkpoints.push(stats);
    this.emit('checkpoint', stats);
  }

  /** Fails the current attempt (e.g. too many checkpoint failures): the restart strategy decides. */
  failExecution(error: TaskFailureError): void {
    this.#execution?.fail(error);
  }

  #giveUp(cause: TaskFailureError): JobFailedError {
    const error = new JobFailedError(
      `job failed after ${this.#restarts} restart(s): ${cause.message.split('\n')[0]}`,
      this.#restarts,
      { cause },
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
    else console.warn(`weir: ${error.message}`);
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
        break;
      }
      case 'running':
        if (this.#restarts === 0 && ++this.#runningTasks === this.#execution?.tasks.length)
          this.#startupMs = performance.now() - this.#startedAt;
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
  const url = jobModuleUrl(jobModule);
  const def = await importJobModule(url);
  const graph = buildStreamGraph(def, resolved.args, url);
  const plan = buildExecutionPlan(graph, {
    parallelism: resolved.parallelism,
    maxParallelism: resolved.maxParallelism,
  });
  return new JobClient(url, plan, resolved);
}

/** Runs a bounded job to its end. */
export async function runJob(jobModule: string | URL, options: JobOptions = {}): Promise<JobResult> {
  const client = await startJob(jobModule, options);
  return client.done;
}
