/**
 * The seeded failure schedule of `weir verify` (pure: same seed and inputs, same schedule).
 * Failure `i` fires in attempt `i` (each restart runs the next one), in an operator with a user
 * function chosen among those that saw records in the reference run, in one of its subtasks,
 * before a record a share of the way into that subtask's input. Shares are drawn from
 * [0.05, 0.3] of the subtask's records in the reference run, so with up to three failures every
 * attempt still has input left to fail in (a later attempt restores from a checkpoint and sees
 * only the rest); a failure whose record never comes does not fire, and the report says so.
 *
 * Stop failures (`savepoint`, `rescale`) are carried out by verify on the main thread: in attempt
 * `i`, once `afterCheckpoints` (1–3) checkpoints of that attempt completed, stop-with-savepoint,
 * then a new run resumes from the savepoint (`rescale`: at another parallelism, one up or, when
 * above 1, one down). `sigkill` (also carried out by verify): in attempt `i`, once
 * `afterCheckpoints` checkpoints of that attempt completed, SIGKILL of the child process running
 * the job, then a new process restores the latest checkpoint retained in its checkpoint directory
 * (`--restore latest`), at the same parallelism. Each later failure counts its attempt on from there.
 */

import type { InjectedFault } from '../protocol/injected-fault.js';

/** The failure kinds `weir verify` can inject. */
export const FAILURE_KINDS = ['throw', 'exit', 'savepoint', 'rescale', 'sigkill'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/**
 * Carried out by verify itself, not in a worker: stop-with-savepoint and resume (`savepoint`,
 * `rescale`), or SIGKILL of the process running the job and a new process restoring the latest
 * retained checkpoint (`sigkill`).
 */
export interface StopFailure {
  readonly kind: 'savepoint' | 'rescale' | 'sigkill';
  /** The attempt (counted over the whole verify run) in which it fires. */
  readonly attempt: number;
  /** Checkpoints of that attempt that complete before the stop (`sigkill`: before the kill). */
  readonly afterCheckpoints: number;
  /** Parallelism of the resumed run (`savepoint`, `sigkill`: unchanged). */
  readonly parallelism: number;
}

/** One failure of a schedule. */
export type PlannedFailure = InjectedFault | StopFailure;

export function isStopFailure(f: PlannedFailure): f is StopFailure {
  return f.kind === 'savepoint' || f.kind === 'rescale' || f.kind === 'sigkill';
}

/** An operator a failure may target: one with a user function, with its reference record count. */
export interface FailureTarget {
  readonly uid: string;
  readonly name: string;
  readonly parallelism: number;
  /** Records the operator's subtasks received in the reference run, in total. */
  readonly recordsIn: number;
}

/** mulberry32: a small seeded generator with a full 2^32 period (tests and schedules only). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function planFailures(options: {
  readonly seed: number;
  readonly count: number;
  readonly kinds: readonly FailureKind[];
  readonly targets: readonly FailureTarget[];
  /** Parallelism of the first run (rescales start from it). Default 1. */
  readonly parallelism?: number;
}): PlannedFailure[] {
  const { seed, count, targets } = options;
  const candidates = targets.filter((t) => t.recordsIn / t.parallelism >= 2);
  // Without an operator to fail in, only stop failures are possible.
  const kinds =
    candidates.length > 0
      ? options.kinds
      : options.kinds.filter((k) => k === 'savepoint' || k === 'rescale' || k === 'sigkill');
  if (count === 0 || kinds.length === 0) return [];
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const faults: PlannedFailure[] = [];
  let parallelism = options.parallelism ?? 1;
  for (let attempt = 0; attempt < count; attempt++) {
    const kind = pick(kinds);
    if (kind === 'savepoint' || kind === 'rescale' || kind === 'sigkill') {
      const afterCheckpoints = 1 + Math.floor(rand() * 3);
      if (kind === 'rescale')
        parallelism = parallelism > 1 && rand() < 0.5 ? parallelism - 1 : parallelism + 1;
      faults.push({ kind, attempt, afterCheckpoints, parallelism });
      continue;
    }
    const target = pick(candidates);
    const subtaskIndex = Math.floor(rand() * target.parallelism);
    const share = 0.05 + rand() * 0.25;
    const perSubtask = target.recordsIn / target.parallelism;
    faults.push({
      kind,
      attempt,
      operatorUid: target.uid,
      subtaskIndex,
      atRecord: Math.max(1, Math.floor(share * perSubtask)),
    });
  }
  return faults;
}
