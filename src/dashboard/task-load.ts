/**
 * One subtask's time split for the dashboard, from the cumulative counters its task reports with
 * every metrics sample (worker/task-time-meter.ts): the shares of the last sample interval spent
 * busy, idle and backpressured, and totals that stay monotonic across restarts (a new attempt's
 * task counts from zero; what the ended attempt counted becomes the base).
 *
 * Pure: the caller passes the sample's time. O(1) per sample.
 */

import type { RemoteEdgeMetrics, TaskLoadMetrics } from '../protocol/task-deployment.js';

export interface LoadShares {
  /** Shares of the last interval, each in [0, 1], summing to 1. */
  readonly busy: number;
  readonly idle: number;
  readonly backpressured: number;
}

export interface SubtaskLoadView {
  readonly subtask: number;
  /** Null before this attempt's second sample. */
  readonly shares: LoadShares | null;
  /** Share of the fullest output / input ring in use at the last sample; null: no such ring. */
  readonly outputFill: number | null;
  readonly inputFill: number | null;
  /** Totals over every attempt, seconds. */
  readonly idleSeconds: number;
  readonly backpressuredSeconds: number;
  /** The current attempt's remote edge flows at the last sample (cluster jobs; empty otherwise). */
  readonly remoteEdges: readonly RemoteEdgeMetrics[];
}

/**
 * Shares of the interval between two readings of one attempt, `dtMs` apart. Clamped: the two
 * counters are read at the task's sample time while `dtMs` is measured where the samples arrive,
 * so their difference can exceed `dtMs` by the jitter of the answer.
 */
export function loadShares(
  prev: Pick<TaskLoadMetrics, 'idleMs' | 'backpressuredMs'>,
  cur: Pick<TaskLoadMetrics, 'idleMs' | 'backpressuredMs'>,
  dtMs: number,
): LoadShares | null {
  if (!(dtMs > 0)) return null;
  const idle = clamp01((cur.idleMs - prev.idleMs) / dtMs);
  const backpressured = Math.min(1 - idle, clamp01((cur.backpressuredMs - prev.backpressuredMs) / dtMs));
  return { busy: 1 - idle - backpressured, idle, backpressured };
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

/** Tracks one subtask across samples and attempts. */
export class SubtaskLoad {
  readonly subtask: number;
  #baseIdleMs = 0;
  #baseBackpressuredMs = 0;
  #current: TaskLoadMetrics | null = null;
  /** The previous reading of this attempt and when it arrived (ms, any monotonic clock). */
  #prev: { load: TaskLoadMetrics; at: number } | null = null;
  #shares: LoadShares | null = null;

  constructor(subtask: number) {
    this.subtask = subtask;
  }

  /** A new reading of the current attempt, which arrived at `at` (ms). */
  sample(load: TaskLoadMetrics, at: number): void {
    const prev = this.#prev;
    // Counters of one attempt never go down: a drop means the attempt changed under us.
    if (prev && load.idleMs >= prev.load.idleMs && load.backpressuredMs >= prev.load.backpressuredMs)
      this.#shares = loadShares(prev.load, load, at - prev.at) ?? this.#shares;
    this.#current = load;
    this.#prev = { load, at };
  }

  /** The attempt ended: its totals become the base, the next one starts from zero. */
  foldAttempt(): void {
    this.#baseIdleMs += this.#current?.idleMs ?? 0;
    this.#baseBackpressuredMs += this.#current?.backpressuredMs ?? 0;
    this.#current = null;
    this.#prev = null;
    this.#shares = null;
  }

  view(): SubtaskLoadView {
    const c = this.#current;
    return {
      subtask: this.subtask,
      shares: this.#shares,
      outputFill: c?.outputFill ?? null,
      inputFill: c?.inputFill ?? null,
      idleSeconds: (this.#baseIdleMs + (c?.idleMs ?? 0)) / 1000,
      backpressuredSeconds: (this.#baseBackpressuredMs + (c?.backpressuredMs ?? 0)) / 1000,
      remoteEdges: c?.remoteEdges ?? [],
    };
  }
}

/**
 * A task's view over its subtasks, each figure from the subtask that shows most: highest busy,
 * backpressured and fill, lowest idle (Flink's vertex-level backpressure); so they need not sum to 1.
 */
export function taskLoad(subtasks: readonly SubtaskLoadView[]): {
  readonly shares: LoadShares | null;
  readonly outputFill: number | null;
  readonly inputFill: number | null;
} {
  let shares: { busy: number; idle: number; backpressured: number } | null = null;
  let outputFill: number | null = null;
  let inputFill: number | null = null;
  for (const s of subtasks) {
    if (s.shares) {
      shares = shares
        ? {
            busy: Math.max(shares.busy, s.shares.busy),
            idle: Math.min(shares.idle, s.shares.idle),
            backpressured: Math.max(shares.backpressured, s.shares.backpressured),
          }
        : { ...s.shares };
    }
    if (s.outputFill !== null) outputFill = Math.max(outputFill ?? 0, s.outputFill);
    if (s.inputFill !== null) inputFill = Math.max(inputFill ?? 0, s.inputFill);
  }
  return { shares, outputFill, inputFill };
}
