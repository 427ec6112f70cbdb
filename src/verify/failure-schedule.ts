/**
 * The seeded failure schedule of `weir verify` (pure: same seed and inputs, same schedule).
 * Failure `i` fires in attempt `i` (each restart runs the next one), in an operator with a user
 * function chosen among those that saw records in the reference run, in one of its subtasks,
 * before a record a share of the way into that subtask's input. Shares are drawn from
 * [0.05, 0.3] of the subtask's records in the reference run, so with up to three failures every
 * attempt still has input left to fail in (a later attempt restores from a checkpoint and sees
 * only the rest); a failure whose record never comes does not fire, and the report says so.
 */

import type { InjectedFault } from '../protocol/injected-fault.js';

/** The failure kinds `weir verify` can inject today. */
export const FAILURE_KINDS = ['throw', 'exit'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

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
}): InjectedFault[] {
  const { seed, count, kinds, targets } = options;
  const candidates = targets.filter((t) => t.recordsIn / t.parallelism >= 2);
  if (count === 0 || candidates.length === 0 || kinds.length === 0) return [];
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const faults: InjectedFault[] = [];
  for (let attempt = 0; attempt < count; attempt++) {
    const kind = pick(kinds);
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
