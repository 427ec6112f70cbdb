/**
 * What the dashboard, `/metrics` and `weir/prometheus` show about one job: a view built only from
 * what the {@link JobClient} already publishes (its sampled `metrics` event, `checkpoint`,
 * `restarting`, `restored`, `warning`, `deployed`, and `done`).
 *
 * Cost: nothing per record. Work happens once per metrics sample (every `metricsInterval`, 1 s by
 * default), O(subtasks × chained operators), plus O(1) per checkpoint or restart.
 *
 * Counters are monotonic across restarts: a new attempt's tasks count from zero again, so the
 * counts of the attempt that ended are folded into a per-subtask base when the next is deployed.
 *
 * Why one file: the snapshot types are what the page, `/metrics` and `weir/prometheus` read, and
 * `JobMonitor` is the one producer of them; keeping the types with the fold that fills them keeps
 * the counters' across-restart rule in one place.
 */

import type { SourceLag } from '../api/source.js';
import type {
  CompletedCheckpointStats,
  FailedCheckpointStats,
  JobClient,
  JobResult,
} from '../coordinator/job-client.js';
import { type PlanSummary, planSummary } from '../graph/describe-plan.js';
import { type LoadShares, SubtaskLoad, type SubtaskLoadView, taskLoad } from './task-load.js';

/** Upper bounds (seconds) of the checkpoint duration histogram buckets; `+Inf` is implied. */
export const CHECKPOINT_DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/** Checkpoints, restarts and warnings kept for display (the counters count all of them). */
const HISTORY_LIMIT = 100;

export type JobStatus = 'running' | 'restarting' | 'finished' | 'stopped' | 'failed' | 'cancelled';

export interface SubtaskCounts {
  readonly subtask: number;
  readonly recordsIn: number;
  readonly recordsOut: number;
  readonly counters: Readonly<Record<string, number>>;
  /** A source's distance from the end of its input at the last sample; null: not a source, or unknown. */
  readonly sourceLag: SourceLag | null;
}

export interface OperatorView {
  readonly id: number;
  readonly name: string;
  readonly kind: string;
  /** Totals over every subtask and every attempt. */
  readonly recordsIn: number;
  readonly recordsOut: number;
  /** Records per second over the last sample interval (0 before the second sample). */
  readonly inPerSec: number;
  readonly outPerSec: number;
  /** Sum over the subtasks that know theirs; null when none does (not a source, or unknown yet). */
  readonly sourceLag: SourceLag | null;
  readonly subtasks: readonly SubtaskCounts[];
}

export interface TaskView {
  readonly id: number;
  readonly name: string;
  readonly parallelism: number;
  /** The chain head's input and the chain tail's output (Flink's task-level view). */
  readonly inPerSec: number;
  readonly outPerSec: number;
  /**
   * Input watermark (event-time ms) per subtask, null until one arrived (and always for source
   * tasks, which have no network input); `min` over subtasks is the task's watermark.
   */
  readonly watermarks: readonly (number | null)[];
  readonly watermark: number | null;
  /**
   * Event-time lag (ms): the wall clock at the last sample minus the task's watermark. Meaningful
   * when the job's timestamps are epoch ms; null while the task has no watermark.
   */
  readonly eventTimeLagMs: number | null;
  /** Busy / idle / backpressured shares of the last interval and ring fill (see task-load.ts). */
  readonly load: {
    readonly shares: LoadShares | null;
    readonly outputFill: number | null;
    readonly inputFill: number | null;
    readonly subtasks: readonly SubtaskLoadView[];
  };
  readonly operators: readonly OperatorView[];
}

export interface FailureView {
  /** Epoch ms. */
  readonly at: number;
  readonly message: string;
  readonly stack: string;
}

export interface RestartView extends FailureView {
  readonly attempt: number;
  readonly delayMs: number;
}

export interface JobSnapshot {
  readonly job: string;
  readonly status: JobStatus;
  readonly attempt: number;
  /** Epoch ms of the monitor's start and of the last update. */
  readonly startedAt: number;
  readonly updatedAt: number;
  readonly plan: PlanSummary;
  readonly tasks: readonly TaskView[];
  readonly checkpoints: {
    readonly enabled: boolean;
    readonly completed: number;
    /** Aborted for a failure (declined, expired, a task failed, storage failed, …). */
    readonly failed: number;
    /** Aborted without a failure of their own: subsumed, or the job stopping. */
    readonly aborted: number;
    /** The newest last; at most {@link HISTORY_LIMIT}. */
    readonly history: readonly CompletedCheckpointStats[];
    /** Failed and aborted ones, the newest last; at most {@link HISTORY_LIMIT}. */
    readonly failures: readonly FailedCheckpointStats[];
    readonly latestRestore: { readonly checkpointId: number; readonly at: number } | null;
    /** Cumulative counts per bucket of {@link CHECKPOINT_DURATION_BUCKETS}, then the total and sum (s). */
    readonly durationHistogram: {
      readonly buckets: readonly number[];
      readonly count: number;
      readonly sumSeconds: number;
    };
  };
  readonly restarts: { readonly count: number; readonly history: readonly RestartView[] };
  readonly warnings: { readonly count: number; readonly history: readonly FailureView[] };
  /** Why the job ended, when it failed. */
  readonly failure: FailureView | null;
}

interface Cell {
  base: { recordsIn: number; recordsOut: number; counters: Record<string, number> };
  current: { recordsIn: number; recordsOut: number; counters: Record<string, number> };
}

/** Keeps the {@link JobSnapshot} of one job up to date. `onUpdate` listeners run after each change. */
export class JobMonitor {
  readonly #client: JobClient;
  readonly #job: string;
  readonly #plan: PlanSummary;
  readonly #startedAt = Date.now();
  #updatedAt = Date.now();
  #status: JobStatus = 'running';
  #attempt = 0;
  /** `vertexId/subtask/nodeId` → counts. */
  readonly #cells = new Map<string, Cell>();
  /** `vertexId/subtask` → the task's input watermark in the latest sample. */
  readonly #watermarks = new Map<string, number>();
  /** Epoch ms of the latest sample that carried watermarks (the event-time lag's "now"). */
  #watermarksSampledAt = 0;
  /** `vertexId/subtask` → its time split across samples and attempts. */
  readonly #loads = new Map<string, SubtaskLoad>();
  /** The sample array last read per subtask: one the client kept (the task did not answer) is not read again. */
  readonly #lastSampleOf = new Map<string, readonly unknown[]>();
  /** `vertexId/subtask/nodeId` → a source's lag at the last sample. */
  readonly #sourceLags = new Map<string, SourceLag>();
  #lastTotals = new Map<number, { recordsIn: number; recordsOut: number }>();
  #rates = new Map<number, { inPerSec: number; outPerSec: number }>();
  #lastSampleAt = 0;
  readonly #checkpoints: CompletedCheckpointStats[] = [];
  #completed = 0;
  #failedCheckpoints = 0;
  #abortedCheckpoints = 0;
  readonly #checkpointFailures: FailedCheckpointStats[] = [];
  readonly #buckets: number[] = CHECKPOINT_DURATION_BUCKETS.map(() => 0);
  #durationSum = 0;
  #latestRestore: { checkpointId: number; at: number } | null = null;
  readonly #restarts: RestartView[] = [];
  #restartCount = 0;
  readonly #warnings: FailureView[] = [];
  #warningCount = 0;
  #failure: FailureView | null = null;
  readonly #listeners = new Set<() => void>();
  readonly #unsubscribe: () => void;

  constructor(client: JobClient, job = 'job') {
    this.#client = client;
    this.#job = job;
    this.#plan = planSummary(client.plan);
    const onMetrics = () => this.#sample();
    const onDeployed = (e: { attempt: number }) => {
      if (e.attempt > this.#attempt) this.#foldAttempt();
      this.#attempt = e.attempt;
      this.#status = 'running';
      this.#changed();
    };
    const onCheckpoint = (c: CompletedCheckpointStats) => {
      this.#completed++;
      push(this.#checkpoints, c);
      const s = c.durationMs / 1000;
      this.#durationSum += s;
      CHECKPOINT_DURATION_BUCKETS.forEach((le, i) => {
        if (s <= le) this.#buckets[i]++;
      });
      this.#changed();
    };
    const onCheckpointFailed = (f: FailedCheckpointStats) => {
      if (isFailure(f.reason)) this.#failedCheckpoints++;
      else this.#abortedCheckpoints++;
      push(this.#checkpointFailures, f);
      this.#changed();
    };
    const onRestarting = (e: { attempt: number; delayMs: number; cause: unknown }) => {
      this.#restartCount++;
      this.#status = 'restarting';
      push(this.#restarts, { attempt: e.attempt, delayMs: e.delayMs, ...failureOf(e.cause) });
      this.#changed();
    };
    const onRestored = (e: { checkpointId: number }) => {
      this.#latestRestore = { checkpointId: e.checkpointId, at: Date.now() };
      this.#changed();
    };
    const onWarning = (e: unknown) => {
      this.#warningCount++;
      push(this.#warnings, failureOf(e));
      this.#changed();
    };
    client.on('metrics', onMetrics);
    client.on('deployed', onDeployed);
    client.on('checkpoint', onCheckpoint);
    client.on('checkpoint-failed', onCheckpointFailed);
    client.on('restarting', onRestarting);
    client.on('restored', onRestored);
    client.on('warning', onWarning);
    this.#unsubscribe = () => {
      client.off('metrics', onMetrics);
      client.off('deployed', onDeployed);
      client.off('checkpoint', onCheckpoint);
      client.off('checkpoint-failed', onCheckpointFailed);
      client.off('restarting', onRestarting);
      client.off('restored', onRestored);
      client.off('warning', onWarning);
    };
    client.done.then(
      (r: JobResult) => {
        // The final totals of the attempt that finished.
        this.#sample();
        this.#status = r.status;
        this.#changed();
      },
      (e: unknown) => {
        const cancelled = (e as { code?: string })?.code === 'ERR_WEIR_JOB_CANCELLED';
        this.#status = cancelled ? 'cancelled' : 'failed';
        if (!cancelled) this.#failure = failureOf(e);
        this.#changed();
      },
    );
  }

  /** Calls `listener` after every change; returns the function that removes it. */
  onUpdate(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops listening to the client. */
  dispose(): void {
    this.#unsubscribe();
    this.#listeners.clear();
  }

  get job(): string {
    return this.#job;
  }

  snapshot(): JobSnapshot {
    const tasks: TaskView[] = this.#plan.vertices.map((v) => {
      const operators = v.operators.map((op) => {
        const subtasks: SubtaskCounts[] = [];
        let lagValue = 0;
        let lagUnit: SourceLag['unit'] | null = null;
        let recordsIn = 0;
        let recordsOut = 0;
        for (let s = 0; s < v.parallelism; s++) {
          const c = this.#cells.get(`${v.id}/${s}/${op.id}`);
          const counts = c ? sum(c) : { recordsIn: 0, recordsOut: 0, counters: {} };
          recordsIn += counts.recordsIn;
          recordsOut += counts.recordsOut;
          const lag = this.#sourceLags.get(`${v.id}/${s}/${op.id}`) ?? null;
          if (lag) {
            lagValue += lag.value;
            lagUnit = lag.unit;
          }
          subtasks.push({ subtask: s, ...counts, sourceLag: lag });
        }
        const rate = this.#rates.get(op.id) ?? { inPerSec: 0, outPerSec: 0 };
        const sourceLag = lagUnit === null ? null : { value: lagValue, unit: lagUnit };
        return {
          id: op.id,
          name: op.name,
          kind: op.kind,
          recordsIn,
          recordsOut,
          ...rate,
          sourceLag,
          subtasks,
        };
      });
      const loads: SubtaskLoadView[] = [];
      for (let st = 0; st < v.parallelism; st++)
        loads.push((this.#loads.get(`${v.id}/${st}`) ?? new SubtaskLoad(st)).view());
      const watermarks: (number | null)[] = [];
      for (let st = 0; st < v.parallelism; st++)
        watermarks.push(this.#watermarks.get(`${v.id}/${st}`) ?? null);
      const known = watermarks.filter((w): w is number => w !== null);
      // the task's watermark is its slowest subtask's, once every subtask has one
      const watermark = known.length === v.parallelism && known.length > 0 ? Math.min(...known) : null;
      return {
        id: v.id,
        name: v.name,
        parallelism: v.parallelism,
        watermarks,
        watermark,
        eventTimeLagMs: watermark === null ? null : this.#watermarksSampledAt - watermark,
        load: { ...taskLoad(loads), subtasks: loads },
        inPerSec: operators[0]?.inPerSec ?? 0,
        outPerSec: operators[operators.length - 1]?.outPerSec ?? 0,
        operators,
      };
    });
    return {
      job: this.#job,
      status: this.#status,
      attempt: this.#attempt,
      startedAt: this.#startedAt,
      updatedAt: this.#updatedAt,
      plan: this.#plan,
      tasks,
      checkpoints: {
        enabled: this.#client.options.checkpointing !== null,
        completed: this.#completed,
        failed: this.#failedCheckpoints,
        aborted: this.#abortedCheckpoints,
        history: [...this.#checkpoints],
        failures: [...this.#checkpointFailures],
        latestRestore: this.#latestRestore,
        durationHistogram: {
          buckets: [...this.#buckets],
          count: this.#completed,
          sumSeconds: this.#durationSum,
        },
      },
      restarts: { count: this.#restartCount, history: [...this.#restarts] },
      warnings: { count: this.#warningCount, history: [...this.#warnings] },
      failure: this.#failure,
    };
  }

  /** Reads the client's latest per-subtask sample into the cells and updates the rates. */
  #sample(): void {
    const at = performance.now();
    for (const [taskKey, ops] of this.#client.subtaskMetrics()) {
      const fresh = this.#lastSampleOf.get(taskKey) !== ops;
      this.#lastSampleOf.set(taskKey, ops);
      for (const m of ops) {
        const key = `${taskKey}/${m.nodeId}`;
        let cell = this.#cells.get(key);
        if (!cell) {
          cell = {
            base: { recordsIn: 0, recordsOut: 0, counters: {} },
            current: { recordsIn: 0, recordsOut: 0, counters: {} },
          };
          this.#cells.set(key, cell);
        }
        cell.current = { recordsIn: m.recordsIn, recordsOut: m.recordsOut, counters: { ...m.counters } };
        if (m.inputWatermark !== undefined) {
          this.#watermarks.set(taskKey, m.inputWatermark);
          this.#watermarksSampledAt = Date.now();
        }
        if (m.sourceLag) this.#sourceLags.set(key, m.sourceLag);
        else this.#sourceLags.delete(key);
        if (m.load && fresh) {
          let load = this.#loads.get(taskKey);
          if (!load) this.#loads.set(taskKey, (load = new SubtaskLoad(Number(taskKey.split('/')[1]))));
          load.sample(m.load, at);
        }
      }
    }
    const now = performance.now();
    const totals = new Map<number, { recordsIn: number; recordsOut: number }>();
    for (const [key, cell] of this.#cells) {
      const nodeId = Number(key.slice(key.lastIndexOf('/') + 1));
      const t = totals.get(nodeId) ?? { recordsIn: 0, recordsOut: 0 };
      const s = sum(cell);
      t.recordsIn += s.recordsIn;
      t.recordsOut += s.recordsOut;
      totals.set(nodeId, t);
    }
    if (this.#lastSampleAt > 0) {
      const secs = Math.max(1e-3, (now - this.#lastSampleAt) / 1000);
      const rates = new Map<number, { inPerSec: number; outPerSec: number }>();
      for (const [nodeId, t] of totals) {
        const prev = this.#lastTotals.get(nodeId) ?? { recordsIn: 0, recordsOut: 0 };
        rates.set(nodeId, {
          inPerSec: Math.max(0, (t.recordsIn - prev.recordsIn) / secs),
          outPerSec: Math.max(0, (t.recordsOut - prev.recordsOut) / secs),
        });
      }
      this.#rates = rates;
    }
    this.#lastTotals = totals;
    this.#lastSampleAt = now;
    this.#changed();
  }

  /** A new attempt counts from zero: what the last one counted becomes the base. */
  #foldAttempt(): void {
    for (const cell of this.#cells.values()) {
      cell.base = sum(cell);
      cell.current = { recordsIn: 0, recordsOut: 0, counters: {} };
    }
    for (const load of this.#loads.values()) load.foldAttempt();
    this.#sourceLags.clear();
  }

  #changed(): void {
    this.#updatedAt = Date.now();
    for (const l of this.#listeners) l();
  }
}

function sum(c: Cell): { recordsIn: number; recordsOut: number; counters: Record<string, number> } {
  const counters: Record<string, number> = { ...c.base.counters };
  for (const [k, v] of Object.entries(c.current.counters)) counters[k] = (counters[k] ?? 0) + v;
  return {
    recordsIn: c.base.recordsIn + c.current.recordsIn,
    recordsOut: c.base.recordsOut + c.current.recordsOut,
    counters,
  };
}

/** Whether an aborted checkpoint counts as failed: not when it was subsumed or the job stopped. */
export function isFailure(reason: string): boolean {
  return reason !== 'subsumed' && reason !== 'job-stopping';
}

function push<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > HISTORY_LIMIT) list.shift();
}

/** Message and stack of a failure; a task failure's stack is the one from the worker. */
export function failureOf(e: unknown): FailureView {
  const at = Date.now();
  if (!(e instanceof Error)) return { at, message: String(e), stack: String(e) };
  const original = (e as { originalStack?: string }).originalStack;
  const cause = e.cause instanceof Error ? `\ncaused by: ${e.cause.stack ?? e.cause.message}` : '';
  return {
    at,
    message: e.message.split('\n')[0],
    stack: original ?? `${e.stack ?? e.message}${cause}`,
  };
}
