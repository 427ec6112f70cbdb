/**
 * Deploys one execution attempt of a job: allocates every channel's ring and every task's
 * doorbell, starts one long-running piscina task per subtask, and reports how the execution
 * ended. Records never cross a MessagePort: tasks talk through the rings; the ports carry
 * control calls (comlink, main → task) and task events (main ← task).
 *
 * One pool per job ({@link TaskPool}), shared by its attempts: a restart reuses the threads whose
 * tasks stopped cleanly; when some task does not stop within the grace period, every thread is
 * terminated (including one stuck in user code), so no stuck thread outlives its execution.
 *
 * Why one file: `Execution` is one attempt's life (rings allocated, tasks deployed into the pool,
 * their events routed, cancel with a grace period, teardown), and `TaskPool` is the thread reuse
 * that makes a restart cheap; the teardown order depends on both, so they stay together.
 */

import { MessageChannel, type MessagePort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { Piscina } from 'piscina';
import type { BufferDebloatOptions } from '../channels/buffer-debloater.js';
import { Doorbell } from '../channels/doorbell.js';
import { RingBuffer } from '../channels/ring-buffer.js';
import type { Placement } from '../cluster/assignment.js';
import { TaskFailureError, TaskStuckError } from '../errors.js';
import { channelsOfEdge } from '../graph/channels.js';
import type { ExecutionPlan, JobVertex } from '../graph/execution-plan.js';
import { formatTaskId, type TaskId, taskKey } from '../graph/task-id.js';
import type { InjectedFault } from '../protocol/injected-fault.js';
import type { PoolWorkerData } from '../protocol/pool-worker-data.js';
import type {
  InputChannelDeployment,
  OperatorMetrics,
  OutputEdgeDeployment,
  RemoteChannelDeployment,
  RemoteEdgesDeployment,
  TaskCheckpointConfig,
  TaskControl,
  TaskDeployment,
  TaskEvent,
  TaskFailureDescription,
  TaskRestoreState,
  TaskResult,
} from '../protocol/task-deployment.js';
import { attributeFailure, type FailureOrigin, type ObservedFailure } from './failure-attribution.js';
import { ringingEndpoint } from './ringing-endpoint.js';
import { StuckTaskWatchdog } from './stuck-task-watchdog.js';

export interface ExecutionOptions {
  readonly jobModule: string;
  readonly args: Readonly<Record<string, string>>;
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly attempt: number;
  readonly ringBytes: number;
  readonly batchRecords: number;
  readonly batchBytes: number;
  /** Record encoding on the rings (ChannelOptions.recordFormat). Default 'auto'. */
  readonly recordFormat?: 'auto' | 'msgpack';
  /** Buffer debloating of every input gate (ChannelOptions.debloat); null or omitted = off. */
  readonly debloat?: BufferDebloatOptions | null;
  /** Wake-up batching of every output ring (ChannelOptions.wakeDelayMs, resolved); 0 = off. */
  readonly wakeDelayMs: number;
  readonly checkpointing: TaskCheckpointConfig | null;
  /** Keyed state backend of every task. Default 'heap'. */
  readonly stateBackend?: 'heap' | 'lmdb';
  /** Parent directory of lmdb state environments (per job). */
  readonly stateDir?: string;
  /** Restore state per task key (`vertexId/subtask`), or null for a fresh start. */
  readonly restore: ReadonlyMap<string, TaskRestoreState> | null;
  /** Worker resource limits (piscina `resourceLimits`). */
  readonly resourceLimits?: { maxOldGenerationSizeMb?: number };
  /** Threads shared by the attempts of one job; without it the execution has its own pool. */
  readonly pool?: TaskPool;
  /** Stuck-task watchdog timeout, ms (JobOptions.stuckTaskTimeout); 0 or absent: no watchdog. */
  readonly stuckTaskTimeout?: number;
  /** Failures to inject (JobOptions.faultInjection); absent: none. */
  readonly faultInjection?: readonly InjectedFault[];
  /**
   * Scale-out (src/cluster/cluster-job.ts): deploy only this member's share of the plan; a channel
   * to or from another member is a remote flow on `remoteEdges`. Absent: every task, all rings.
   */
  readonly cluster?: { readonly placement: Placement; readonly remoteEdges: RemoteEdgesDeployment };
}

type ChannelEnd = SharedArrayBuffer | RemoteChannelDeployment;

function createPiscina(
  size: number,
  idleTimeout: number,
  resourceLimits: { maxOldGenerationSizeMb?: number } | undefined,
  workerData: PoolWorkerData,
) {
  return new Piscina({
    filename: new URL('../worker/pool-entry.cjs', import.meta.url).href,
    // No minimum: piscina replaces a crashed worker to keep minThreads, and a replacement
    // spawned during teardown could outlive destroy(). Tasks are all queued at once, so
    // piscina still starts one thread per task.
    minThreads: 0,
    maxThreads: size,
    concurrentTasksPerWorker: 1,
    idleTimeout,
    atomics: 'disabled',
    resourceLimits,
    // Read by each thread when it runs its first task (task-entry.ts), so a thread started to
    // replace a dead one after a restart gets it too.
    workerData,
  });
}

/**
 * The worker threads of one job, shared by its attempts. A restart reuses the threads whose
 * tasks stopped cleanly when cancelled — their modules (weir, lmdb, the job module) are loaded
 * already, which is most of what deploying a task costs — and starts new ones only for threads
 * that died (process.exit) or were discarded. When some task did not stop within the grace
 * period, every thread is terminated ({@link discard}) and the next attempt starts fresh ones.
 * Module-level variables of a job module therefore survive a restart in a reused thread (as
 * static fields survive in a reused Flink TaskManager); state belongs in `ctx.state`.
 */
export class TaskPool {
  #pool: Piscina | null = null;
  /** The running execution's handler of worker errors outside a task; null between attempts. */
  #onWorkerError: ((e: unknown) => void) | null = null;
  readonly #idleTimeout: number;
  readonly #workerData: PoolWorkerData;
  readonly #onStrayError: (error: TaskFailureError) => void;

  constructor(
    readonly size: number,
    options: {
      readonly resourceLimits?: { maxOldGenerationSizeMb?: number };
      /** How long an idle thread lives, ms. Default 60 s: long enough for a restart's backoff. */
      readonly idleTimeout?: number;
      /**
       * Worker errors that belong to no running execution (between attempts, during or after
       * teardown). Default: a console warning. Never rethrown: the host process must survive them.
       */
      readonly onStrayError?: (error: TaskFailureError) => void;
      /**
       * Nice levels each thread lowers itself by below the creating thread (JobOptions.workerNice,
       * validated there: Linux only). Default 0: unchanged.
       */
      readonly workerNice?: number;
    } = {},
  ) {
    this.resourceLimits = options.resourceLimits;
    this.#workerData = { workerNice: options.workerNice ?? 0 };
    this.#idleTimeout = options.idleTimeout ?? 60_000;
    this.#onStrayError = options.onStrayError ?? warnStrayError;
  }

  readonly resourceLimits: { maxOldGenerationSizeMb?: number } | undefined;

  acquire(): Piscina {
    if (this.#pool) return this.#pool;
    const pool = createPiscina(this.size, this.#idleTimeout, this.resourceLimits, this.#workerData);
    // piscina emits a worker error it cannot attribute to a running task (an asynchronous throw
    // after the task returned, a worker over its heap limit while idle or being terminated) as
    // 'error' on the pool, and an 'error' without listener exits the whole host process. So the
    // listener is never removed, not even by discard(): a discarded pool's workers may still fail
    // while they are terminated. Only the current pool's errors reach the current execution.
    pool.on('error', (e: unknown) => {
      if (this.#pool === pool && this.#onWorkerError) this.#onWorkerError(e);
      else this.stray(e);
    });
    this.#pool = pool;
    return pool;
  }

  /** @internal The execution running on this pool takes its worker errors (null: none runs). */
  setWorkerErrorHandler(handler: ((e: unknown) => void) | null): void {
    this.#onWorkerError = handler;
  }

  /** @internal Reports a worker error that belongs to no running execution. */
  stray(e: unknown): void {
    if (e instanceof TaskFailureError) {
      this.#onStrayError(e);
      return;
    }
    const d = describeRaw(e);
    this.#onStrayError(
      new TaskFailureError('no running attempt (late worker error)', undefined, d.message, d.stack, {
        cause: e,
      }),
    );
  }

  /** Terminates every thread; the next {@link acquire} starts new ones. */
  async discard(): Promise<void> {
    const pool = this.#pool;
    this.#pool = null;
    await pool?.destroy();
  }

  close(): Promise<void> {
    return this.discard();
  }
}

export interface DeployedTask {
  readonly id: TaskId;
  readonly key: string;
  readonly vertex: JobVertex;
  /** Readable name for logs and errors. */
  readonly label: string;
  readonly control: Comlink.Remote<TaskControl>;
  readonly isSource: boolean;
}

export type ExecutionOutcome =
  | { readonly state: 'finished'; readonly metrics: ReadonlyMap<string, readonly OperatorMetrics[]> }
  | { readonly state: 'failed'; readonly error: TaskFailureError }
  | { readonly state: 'cancelled' };

export type TaskEventListener = (task: DeployedTask, event: TaskEvent) => void;

/**
 * Allocates rings for every channel of the plan: key `edgeId:producer:consumer`. With a cluster
 * placement: rings only for channels with both ends here, a remote flow for those with one end
 * here, nothing for the others.
 */
function allocateRings(
  plan: ExecutionPlan,
  ringBytes: number,
  placement?: Placement,
): Map<string, ChannelEnd> {
  const rings = new Map<string, ChannelEnd>();
  for (const edge of plan.edges) {
    for (const ch of channelsOfEdge(plan, edge)) {
      const where = placement?.channel(ch, edge.targetVertexId, edge.sourceVertexId) ?? { kind: 'ring' };
      if (where.kind === 'none') continue;
      rings.set(
        `${ch.edgeId}:${ch.producerSubtask}:${ch.consumerSubtask}`,
        where.kind === 'ring' ? RingBuffer.allocate(ringBytes) : { remoteFlow: where.flow },
      );
    }
  }
  return rings;
}

/** How long cancelled tasks get to stop by themselves before their workers are terminated, ms. */
const CANCEL_GRACE_MS = 2000;

export class Execution {
  readonly tasks: readonly DeployedTask[];
  readonly done: Promise<ExecutionOutcome>;
  readonly #pool: Piscina;
  readonly #ports: MessagePort[] = [];
  /** Settles when each task's piscina run returns (or its worker dies): the teardown grace waits for these. */
  readonly #returns: Promise<void>[] = [];
  /** A task returned with sink work still running in its thread: no thread is reused. */
  #lingering = false;
  readonly #taskPool: TaskPool;
  /** Only the pool this execution created is destroyed with it. */
  readonly #ownsPool: boolean;
  #settle!: (o: ExecutionOutcome) => void;
  /** Set once the execution ended (failed, finished, cancelled) and its teardown began. */
  #settled = false;
  /** Set once `done` settled: failures after that are reported as stray, not collected. */
  #published = false;
  /**
   * Every failure observed until the teardown ends, in arrival order: the root cause is picked
   * from all of them (see failure-attribution.ts), not the first to arrive.
   */
  readonly #failures: ObservedFailure[] = [];
  /** Tasks that reported `failed` before their run() rejected: better error details. */
  readonly #failureEvents = new Map<string, Extract<TaskEvent, { kind: 'failed' }>>();
  /** Null when the job turned the watchdog off. Stopped once the execution ended. */
  readonly #watchdog: StuckTaskWatchdog | null;

  constructor(
    readonly plan: ExecutionPlan,
    readonly options: ExecutionOptions,
    onEvent: TaskEventListener,
  ) {
    this.done = new Promise((resolve) => {
      this.#settle = resolve;
    });
    const placement = options.cluster?.placement;
    const rings = allocateRings(plan, options.ringBytes, placement);
    const doorbells = new Map<string, SharedArrayBuffer>();
    for (const v of plan.vertices) {
      for (let s = 0; s < v.parallelism; s++) {
        const key = taskKey({ vertexId: v.vertexId, subtaskIndex: s });
        if (!placement || placement.isLocal(key)) doorbells.set(key, Doorbell.allocate());
      }
    }
    const total = doorbells.size;
    if (options.pool && options.pool.size < total) {
      throw new RangeError(`the task pool has ${options.pool.size} threads, the plan needs ${total}`);
    }
    this.#ownsPool = options.pool === undefined;
    this.#taskPool =
      options.pool ?? new TaskPool(total, { idleTimeout: 1000, resourceLimits: options.resourceLimits });
    this.#pool = this.#taskPool.acquire();

    // A worker error that piscina cannot attribute to a running task (e.g. an asynchronous throw
    // in user code after its task returned) fails the execution while it runs; later ones are
    // stray (TaskPool reports them, never rethrows).
    this.#taskPool.setWorkerErrorHandler((e: unknown): void => {
      if (this.#published) {
        this.#taskPool.stray(e);
        return;
      }
      const d = describeRaw(e);
      this.#observe({
        error: new TaskFailureError(
          'unknown task (worker error outside a task)',
          undefined,
          d.message,
          d.stack,
          {
            cause: e,
          },
        ),
        origin: 'worker',
        consequence: false,
      });
    });

    const tasks: DeployedTask[] = [];
    const runs: Promise<void>[] = [];
    const timeout = options.stuckTaskTimeout ?? 0;
    this.#watchdog =
      timeout > 0
        ? new StuckTaskWatchdog(total, timeout, (slot, operatorIndex, busyMs) => {
            const task = tasks[slot];
            const operator = task.vertex.operators[operatorIndex]?.name ?? task.vertex.name;
            const stuck = new TaskStuckError(task.label, operator, busyMs, timeout);
            this.#observe({
              error: new TaskFailureError(
                task.label,
                operator,
                `${stuck.name}: ${stuck.message}`,
                undefined,
                {
                  cause: stuck,
                },
              ),
              origin: 'task',
              consequence: false,
            });
          })
        : null;
    const metrics = new Map<string, readonly OperatorMetrics[]>();
    for (const vertex of plan.vertices) {
      for (let s = 0; s < vertex.parallelism; s++) {
        const id: TaskId = { vertexId: vertex.vertexId, subtaskIndex: s };
        const key = taskKey(id);
        if (placement && !placement.isLocal(key)) continue;
        const control = new MessageChannel();
        const events = new MessageChannel();
        this.#ports.push(control.port1, events.port1);
        const task: DeployedTask = {
          id,
          key,
          vertex,
          label: formatTaskId(id, vertex.name, vertex.parallelism),
          // Every control message also rings the task's doorbell: an idle task may block in
          // Atomics.wait (ringing-endpoint.ts).
          control: Comlink.wrap<TaskControl>(
            ringingEndpoint(nodeEndpoint(control.port1), new Doorbell(doorbells.get(key)!)),
          ),
          isSource: vertex.operators[0].spec.kind === 'source',
        };
        tasks.push(task);
        // The task's result travels on piscina's port, its events on this one: the two are not
        // ordered. A task counts as finished only once its `finished` event arrived, so every
        // event it sent before (deliveries, acknowledgements) has been handled.
        let finishedEvent!: () => void;
        const eventsDrained = new Promise<void>((resolve) => {
          finishedEvent = resolve;
        });
        events.port1.on('message', (ev: TaskEvent) => {
          if (ev.kind === 'failed') this.#failureEvents.set(key, ev);
          try {
            onEvent(task, ev);
          } catch (e) {
            // A throwing listener must fail this attempt, not escape into the host's event loop.
            this.#observe({ error: externalFailure(task.label, e), origin: 'external', consequence: false });
          }
          if (ev.kind === 'finished') finishedEvent();
        });
        const deployment: TaskDeployment = {
          jobModule: options.jobModule,
          args: options.args,
          parallelism: options.parallelism,
          maxParallelism: options.maxParallelism,
          vertexId: vertex.vertexId,
          subtaskIndex: s,
          attempt: options.attempt,
          inputs: this.#inputsOf(vertex, s, rings),
          outputs: this.#outputsOf(vertex, s, rings, doorbells),
          doorbell: doorbells.get(key)!,
          ...(options.cluster ? { remoteEdges: options.cluster.remoteEdges } : {}),
          controlPort: control.port2,
          eventPort: events.port2,
          checkpointing: options.checkpointing,
          stateBackend: options.stateBackend ?? 'heap',
          stateDir: options.stateDir,
          restore: options.restore?.get(key) ?? null,
          faultInjection: options.faultInjection ?? [],
          // Slots in deployment order: the watchdog's slot index is the task's index in `tasks`.
          busy: this.#watchdog ? { buffer: this.#watchdog.buffer, slot: tasks.length - 1 } : null,
          channelOptions: {
            batchRecords: options.batchRecords,
            batchBytes: options.batchBytes,
            shapeBatches: options.recordFormat !== 'msgpack',
            debloat: options.debloat ?? null,
            wakeDelayMs: options.wakeDelayMs,
          },
        };
        const returned = this.#pool.run(deployment, { transferList: [control.port2, events.port2] as any });
        this.#returns.push(
          returned.then(
            (r: TaskResult) => {
              if (r.lingering) this.#lingering = true;
            },
            () => undefined,
          ),
        );
        runs.push(
          returned.then(
            async (r: TaskResult) => {
              if (r.state === 'failed') return this.#fail(task, r.failure, undefined);
              await eventsDrained;
              metrics.set(key, r.metrics);
            },
            (e: unknown) => this.#fail(task, undefined, e),
          ),
        );
      }
    }
    this.tasks = tasks;
    void Promise.all(runs).then(() => {
      if (!this.#settled) this.#finish(metrics);
    });
  }

  #inputsOf(vertex: JobVertex, subtask: number, rings: Map<string, ChannelEnd>): InputChannelDeployment[] {
    const inputs: InputChannelDeployment[] = [];
    for (const edgeId of vertex.inputEdges) {
      const edge = this.plan.edges.find((e) => e.edgeId === edgeId)!;
      for (const ch of channelsOfEdge(this.plan, edge)) {
        if (ch.consumerSubtask !== subtask) continue;
        inputs.push({
          edgeId,
          producerSubtask: ch.producerSubtask,
          inputIndex: edge.inputIndex,
          ring: rings.get(`${edgeId}:${ch.producerSubtask}:${ch.consumerSubtask}`)!,
        });
      }
    }
    return inputs;
  }

  #outputsOf(
    vertex: JobVertex,
    subtask: number,
    rings: Map<string, ChannelEnd>,
    doorbells: Map<string, SharedArrayBuffer>,
  ): OutputEdgeDeployment[] {
    const outputs: OutputEdgeDeployment[] = [];
    for (const edgeId of vertex.outputEdges) {
      const edge = this.plan.edges.find((e) => e.edgeId === edgeId)!;
      const chans = channelsOfEdge(this.plan, edge)
        .filter((c) => c.producerSubtask === subtask)
        .sort((a, b) => a.consumerSubtask - b.consumerSubtask);
      outputs.push({
        edgeId,
        rings: chans.map((c) => rings.get(`${edgeId}:${c.producerSubtask}:${c.consumerSubtask}`)!),
        // A remote consumer has no doorbell here (its flow wakes it).
        doorbells: chans.map(
          (c) =>
            doorbells.get(taskKey({ vertexId: edge.targetVertexId, subtaskIndex: c.consumerSubtask })) ??
            null,
        ),
      });
    }
    return outputs;
  }

  /**
   * A task failed. The first failure starts the teardown; every failure until the teardown ends
   * is collected, and the root cause is picked from all of them when the outcome is published.
   * The worker's user error is rebuilt as the failure's `cause` (name, message, stack).
   */
  #fail(task: DeployedTask, reported: TaskFailureDescription | undefined, raw: unknown): void {
    // After publication only workers terminated by the teardown itself fail: nothing to report.
    if (this.#published) return;
    const detail = reported ?? this.#failureEvents.get(task.key);
    if (detail) {
      const original = new Error(detail.errorMessage);
      original.name = detail.errorName;
      original.stack = detail.stack;
      const error = new TaskFailureError(task.label, detail.operator, detail.message, detail.stack, {
        cause: original,
        failureKind: detail.failureKind,
        originalName: detail.errorName,
        originalCode: detail.errorCode,
      });
      this.#observe({ error, origin: 'task', consequence: detail.consequence });
    } else {
      const d = describeRaw(raw);
      const error = new TaskFailureError(task.label, undefined, d.message, d.stack, { cause: raw });
      // A worker that died during teardown (terminated, or over its heap limit) is a consequence.
      this.#observe({ error, origin: 'task', consequence: this.#settled });
    }
  }

  #observe(failure: ObservedFailure): void {
    this.#failures.push(failure);
    if (!this.#settled) this.#finish(null);
  }

  /** Ends the execution: finished with `metrics`, or failed (null) with the collected failures. */
  #finish(metrics: ReadonlyMap<string, readonly OperatorMetrics[]> | null): void {
    this.#settled = true;
    void this.#teardown().then(() => {
      this.#published = true;
      if (!metrics) {
        this.#settle({ state: 'failed', error: attributeFailure(this.#failures) });
        return;
      }
      // Worker errors during a finished execution's teardown (a user timer that fired after the
      // last record) cannot fail it any more; they are reported, not dropped.
      for (const f of this.#failures) this.#taskPool.stray(f.error);
      this.#settle({ state: 'finished', metrics });
    });
  }

  /** Fails this execution from outside (the checkpoint coordinator gave up); no-op once published. */
  fail(error: TaskFailureError, origin: FailureOrigin = 'external'): void {
    if (this.#published) return;
    this.#observe({ error, origin, consequence: false });
  }

  /** Cancels every task and releases every thread and port. */
  async cancel(): Promise<void> {
    if (this.#settled) return this.done.then(() => undefined);
    this.#settled = true;
    await this.#teardown();
    this.#published = true;
    this.#settle({ state: 'cancelled' });
  }

  async #teardown(): Promise<void> {
    // Tasks that fail or are cancelled stop mid-batch (their slots stay busy): not stuck.
    this.#watchdog?.stop();
    // First ask every task to stop (its loop throws TaskCancelledError between two frames and
    // its cleanup closes LMDB environments and files), and give them a short grace period:
    // terminating a worker while it is inside a native LMDB call can deadlock lmdb-js or abort
    // the whole process. Then destroy() terminates every worker still there (stuck in user code,
    // or already gone). No piscina abort signal: piscina replaces a worker whose task was
    // aborted (to keep minThreads), and such a replacement can outlive destroy().
    for (const t of this.tasks) {
      try {
        void t.control.cancel().catch(() => undefined);
      } catch {
        // proxy already released
      }
    }
    let grace: NodeJS.Timeout | undefined;
    let allReturned = false;
    await Promise.race([
      Promise.all(this.#returns).then(() => {
        allReturned = true;
      }),
      new Promise<void>((resolve) => {
        grace = setTimeout(resolve, CANCEL_GRACE_MS);
      }),
    ]);
    clearTimeout(grace);
    for (const t of this.tasks) t.control[Comlink.releaseProxy]();
    for (const p of this.#ports) p.close();
    // From here on, worker errors are stray (TaskPool reports them): no execution runs.
    this.#taskPool.setWorkerErrorHandler(null);
    if (this.#ownsPool) await this.#taskPool.discard();
    // Some task is stuck, or left a sink's commit running: no thread is reused (terminating it
    // ends that work before the next attempt starts).
    else if (!allReturned || this.#lingering) await this.#taskPool.discard();
  }
}

function externalFailure(where: string, e: unknown): TaskFailureError {
  const d = describeRaw(e);
  return new TaskFailureError(where, undefined, d.message, d.stack, { cause: e });
}

function warnStrayError(error: TaskFailureError): void {
  console.warn(`weir: ${error.message}`);
}

function describeRaw(e: unknown): { operator?: string; message: string; stack?: string } {
  if (e instanceof Error) return { message: e.message, stack: e.stack };
  return { message: String(e) };
}
