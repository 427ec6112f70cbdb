/**
 * Deploys one execution attempt of a job: allocates every channel's ring and every task's
 * doorbell, starts one long-running piscina task per subtask, and reports how the execution
 * ended. Records never cross a MessagePort: tasks talk through the rings; the ports carry
 * control calls (comlink, main → task) and task events (main ← task).
 *
 * One pool per execution: a failed execution is torn down whole (`pool.destroy()` terminates
 * every worker, including one stuck in user code), so no thread outlives it.
 */

import { MessageChannel, type MessagePort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { Piscina } from 'piscina';
import { Doorbell } from '../channels/doorbell.js';
import { RingBuffer } from '../channels/ring-buffer.js';
import { TaskFailureError } from '../errors.js';
import { channelsOfEdge } from '../graph/channels.js';
import type { ExecutionPlan, JobVertex } from '../graph/execution-plan.js';
import { formatTaskId, type TaskId, taskKey } from '../graph/task-id.js';
import type {
  InputChannelDeployment,
  OperatorMetrics,
  OutputEdgeDeployment,
  TaskCheckpointConfig,
  TaskControl,
  TaskDeployment,
  TaskEvent,
  TaskRestoreState,
} from '../worker/task-deployment.js';
import type { TaskResult } from '../worker/task-entry.js';

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
}

function createPiscina(
  size: number,
  idleTimeout: number,
  resourceLimits?: { maxOldGenerationSizeMb?: number },
) {
  return new Piscina({
    filename: new URL('../worker/task-entry.js', import.meta.url).href,
    // No minimum: piscina replaces a crashed worker to keep minThreads, and a replacement
    // spawned during teardown could outlive destroy(). Tasks are all queued at once, so
    // piscina still starts one thread per task.
    minThreads: 0,
    maxThreads: size,
    concurrentTasksPerWorker: 1,
    idleTimeout,
    atomics: 'disabled',
    resourceLimits,
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
  constructor(
    readonly size: number,
    readonly resourceLimits?: { maxOldGenerationSizeMb?: number },
  ) {}

  acquire(): Piscina {
    // Idle threads live long enough to be reused by a restart after a backoff delay.
    this.#pool ??= createPiscina(this.size, 60_000, this.resourceLimits);
    return this.#pool;
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

/** Allocates rings for every channel of the plan: key `edgeId:producer:consumer`. */
function allocateRings(plan: ExecutionPlan, ringBytes: number): Map<string, SharedArrayBuffer> {
  const rings = new Map<string, SharedArrayBuffer>();
  for (const edge of plan.edges) {
    for (const ch of channelsOfEdge(plan, edge)) {
      rings.set(`${ch.edgeId}:${ch.producerSubtask}:${ch.consumerSubtask}`, RingBuffer.allocate(ringBytes));
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
  readonly #onPoolError: (e: unknown) => void;
  #settle!: (o: ExecutionOutcome) => void;
  #settled = false;
  /** Tasks that reported `failed` before their run() rejected: better error details. */
  readonly #failureEvents = new Map<string, Extract<TaskEvent, { kind: 'failed' }>>();

  constructor(
    readonly plan: ExecutionPlan,
    readonly options: ExecutionOptions,
    onEvent: TaskEventListener,
  ) {
    this.done = new Promise((resolve) => {
      this.#settle = resolve;
    });
    const rings = allocateRings(plan, options.ringBytes);
    const doorbells = new Map<string, SharedArrayBuffer>();
    for (const v of plan.vertices) {
      for (let s = 0; s < v.parallelism; s++)
        doorbells.set(taskKey({ vertexId: v.vertexId, subtaskIndex: s }), Doorbell.allocate());
    }
    const total = doorbells.size;
    if (options.pool && options.pool.size < total) {
      throw new RangeError(`the task pool has ${options.pool.size} threads, the plan needs ${total}`);
    }
    this.#pool = options.pool ? options.pool.acquire() : createPiscina(total, 1000, options.resourceLimits);

    // A worker error that piscina cannot attribute to a running task (e.g. an asynchronous throw
    // in user code after its task returned) is emitted on the pool; unhandled, it would crash the
    // embedding process. It fails the execution instead.
    this.#onPoolError = (e: unknown): void => {
      if (this.#settled) return;
      const d = describeRaw(e);
      this.#finish({
        state: 'failed',
        error: new TaskFailureError(
          'unknown task (worker error outside a task)',
          undefined,
          d.message,
          d.stack,
          { cause: e },
        ),
      });
    };
    this.#pool.on('error', this.#onPoolError);

    const tasks: DeployedTask[] = [];
    const runs: Promise<void>[] = [];
    const metrics = new Map<string, readonly OperatorMetrics[]>();
    for (const vertex of plan.vertices) {
      for (let s = 0; s < vertex.parallelism; s++) {
        const id: TaskId = { vertexId: vertex.vertexId, subtaskIndex: s };
        const key = taskKey(id);
        const control = new MessageChannel();
        const events = new MessageChannel();
        this.#ports.push(control.port1, events.port1);
        const task: DeployedTask = {
          id,
          key,
          vertex,
          label: formatTaskId(id, vertex.name, vertex.parallelism),
          control: Comlink.wrap<TaskControl>(nodeEndpoint(control.port1)),
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
          onEvent(task, ev);
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
          controlPort: control.port2,
          eventPort: events.port2,
          checkpointing: options.checkpointing,
          stateBackend: options.stateBackend ?? 'heap',
          stateDir: options.stateDir,
          restore: options.restore?.get(key) ?? null,
          channelOptions: {
            batchRecords: options.batchRecords,
            batchBytes: options.batchBytes,
            shapeBatches: options.recordFormat !== 'msgpack',
          },
        };
        const returned = this.#pool.run(deployment, { transferList: [control.port2, events.port2] as any });
        this.#returns.push(
          returned.then(
            () => undefined,
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
      if (!this.#settled) this.#finish({ state: 'finished', metrics });
    });
  }

  #inputsOf(
    vertex: JobVertex,
    subtask: number,
    rings: Map<string, SharedArrayBuffer>,
  ): InputChannelDeployment[] {
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
    rings: Map<string, SharedArrayBuffer>,
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
        doorbells: chans.map(
          (c) => doorbells.get(taskKey({ vertexId: edge.targetVertexId, subtaskIndex: c.consumerSubtask }))!,
        ),
      });
    }
    return outputs;
  }

  /** The first failure fails the execution; later ones (torn-down peers) are consequences. */
  #fail(
    task: DeployedTask,
    reported: { operator?: string; message: string; stack?: string } | undefined,
    raw: unknown,
  ): void {
    if (this.#settled) return;
    const detail = reported ?? this.#failureEvents.get(task.key) ?? describeRaw(raw);
    const error = new TaskFailureError(task.label, detail.operator, detail.message, detail.stack, {
      cause: raw,
    });
    this.#finish({ state: 'failed', error });
  }

  #finish(outcome: ExecutionOutcome): void {
    this.#settled = true;
    void this.#teardown().then(() => this.#settle(outcome));
  }

  /** Fails this execution from outside (the checkpoint coordinator gave up); no-op once settled. */
  fail(error: TaskFailureError): void {
    if (!this.#settled) this.#finish({ state: 'failed', error });
  }

  /** Cancels every task and releases every thread and port. */
  async cancel(): Promise<void> {
    if (this.#settled) return this.done.then(() => undefined);
    this.#settled = true;
    await this.#teardown();
    this.#settle({ state: 'cancelled' });
  }

  async #teardown(): Promise<void> {
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
    this.#pool.off('error', this.#onPoolError);
    const shared = this.options.pool;
    if (!shared) await this.#pool.destroy();
    else if (!allReturned) await shared.discard(); // some task is stuck: no thread is reused
  }
}

function describeRaw(e: unknown): { operator?: string; message: string; stack?: string } {
  if (e instanceof Error) return { message: e.message, stack: e.stack };
  return { message: String(e) };
}
