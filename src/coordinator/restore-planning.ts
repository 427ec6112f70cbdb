/**
 * Pure decisions about recovery: which checkpoint to restore ({@link planRestore}) and what to
 * do after a job failure ({@link decideFailover}). They take observed facts and return a
 * decision value; the caller does the I/O.
 */

import { type FailureKind, WeirError } from '../errors.js';
import type { RestartDecision } from './restart-strategy.js';

/** A checkpoint found in storage (or in the store). `problem` set means it cannot be used. */
export interface RestoreCandidate {
  readonly checkpointId: number;
  /** Why it is unusable (corrupt metadata, a missing or bad chunk, ...); undefined when usable. */
  readonly problem?: string;
}

export interface RestoreWarning {
  readonly kind: 'skipped-unusable-checkpoint';
  readonly checkpointId: number;
  readonly problem: string;
}

export type RestorePlan<C extends RestoreCandidate = RestoreCandidate> =
  | { readonly kind: 'restore'; readonly checkpoint: C; readonly warnings: readonly RestoreWarning[] }
  /** Nothing to restore: run from the beginning (and say so). */
  | {
      readonly kind: 'fresh-start';
      readonly reason: 'no-checkpoints';
      readonly warnings: readonly RestoreWarning[];
    }
  /** Checkpoints exist but none is usable: a fatal error, see {@link planRestore}. */
  | { readonly kind: 'fail'; readonly message: string; readonly warnings: readonly RestoreWarning[] };

export interface RestoreFacts<C extends RestoreCandidate> {
  /** In any order. */
  readonly candidates: readonly C[];
  /**
   * `latest`: the newest usable checkpoint, if any (`restoreFrom: 'latest'`, and failover).
   * `explicit`: the user named a location; it must hold a usable checkpoint.
   */
  readonly request: 'latest' | 'explicit';
}

/**
 * Picks the newest usable candidate; every newer unusable one becomes a warning.
 * - None at all: `fresh-start` for `latest` (the process died before its first checkpoint
 *   completed), `fail` for `explicit` (the user named a location that holds nothing).
 * - Some, none usable: `fail` for both. Starting fresh would replay input whose output
 *   transactional sinks already committed, which breaks exactly-once; a human must decide.
 */
export function planRestore<C extends RestoreCandidate>(facts: RestoreFacts<C>): RestorePlan<C> {
  const newestFirst = [...facts.candidates].sort((a, b) => b.checkpointId - a.checkpointId);
  const warnings: RestoreWarning[] = [];
  for (const candidate of newestFirst) {
    if (candidate.problem === undefined) return { kind: 'restore', checkpoint: candidate, warnings };
    warnings.push({
      kind: 'skipped-unusable-checkpoint',
      checkpointId: candidate.checkpointId,
      problem: candidate.problem,
    });
  }
  if (newestFirst.length === 0) {
    return facts.request === 'latest'
      ? { kind: 'fresh-start', reason: 'no-checkpoints', warnings }
      : { kind: 'fail', message: 'the location holds no checkpoint', warnings };
  }
  return {
    kind: 'fail',
    message: `none of the ${newestFirst.length} checkpoint(s) is usable (newest: ${newestFirst[0].checkpointId}: ${newestFirst[0].problem})`,
    warnings,
  };
}

export type FailoverDecision =
  | {
      readonly kind: 'restart';
      readonly delayMs: number;
      /** 1 for the first restart. */
      readonly attempt: number;
      readonly restoreFrom:
        | { readonly kind: 'checkpoint'; readonly checkpointId: number }
        | { readonly kind: 'fresh-start' };
    }
  | {
      readonly kind: 'fail-job';
      readonly reason: 'fatal-error' | 'restarts-exhausted';
      readonly error: unknown;
    }
  /** A checkpoint decline reached the failover path: it does not fail the job. */
  | { readonly kind: 'continue' };

export interface FailoverFacts {
  readonly error: unknown;
  readonly nowMs: number;
  /** Consulted only for restartable failures (it counts attempts). */
  readonly strategy: { onFailure(nowMs: number): RestartDecision };
  /** Id of the newest completed checkpoint in the store, if any. */
  readonly latestCompletedCheckpointId: number | undefined;
}

/** A {@link WeirError}'s own kind; anything else thrown (user code, a crash) is a task failure. */
export function failureKindOf(error: unknown): FailureKind {
  return error instanceof WeirError ? error.failureKind : 'task';
}

/**
 * After a failure: fatal errors fail the job without consulting the strategy (restarting
 * cannot help, and must not use up an attempt); declines do not fail the job; task failures
 * restart as the strategy says, from the latest completed checkpoint or from the beginning.
 */
export function decideFailover(facts: FailoverFacts): FailoverDecision {
  const kind = failureKindOf(facts.error);
  if (kind === 'decline') return { kind: 'continue' };
  if (kind === 'fatal') return { kind: 'fail-job', reason: 'fatal-error', error: facts.error };
  const decision = facts.strategy.onFailure(facts.nowMs);
  if (decision.kind === 'give-up')
    return { kind: 'fail-job', reason: 'restarts-exhausted', error: facts.error };
  return {
    kind: 'restart',
    delayMs: decision.delayMs,
    attempt: decision.attempt,
    restoreFrom:
      facts.latestCompletedCheckpointId === undefined
        ? { kind: 'fresh-start' }
        : { kind: 'checkpoint', checkpointId: facts.latestCompletedCheckpointId },
  };
}
