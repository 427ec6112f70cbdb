/**
 * Pure decisions about recovery: which checkpoint to restore ({@link planRestore}) and what to
 * do after a job failure ({@link decideFailover}). They take observed facts and return a
 * decision value; the caller does the I/O.
 */

import type { CheckpointMode } from '../api/source.js';
import {
  CheckpointStorageError,
  type FailureKind,
  RestoreFallbackRefusedError,
  WeirError,
} from '../errors.js';
import type { ExecutionPlan } from '../graph/execution-plan.js';
import { DEFAULT_UID_SCHEME } from '../graph/operator-uid.js';
import type { CheckpointMetadata } from '../state/storage/checkpoint-metadata.js';
import type { RestoreSelection } from '../state/storage/select-restorable.js';
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
  /** `warnings` non-empty: a fallback past damaged checkpoints the user allowed. */
  | { readonly kind: 'restore'; readonly checkpoint: C; readonly warnings: readonly RestoreWarning[] }
  /** Nothing to restore: run from the beginning (and say so). */
  | {
      readonly kind: 'fresh-start';
      readonly reason: 'no-checkpoints';
      readonly warnings: readonly RestoreWarning[];
    }
  /** A fatal error, see {@link planRestore}; `reason` says which. */
  | {
      readonly kind: 'fail';
      readonly reason: 'location-empty' | 'none-usable';
      readonly message: string;
      readonly warnings: readonly RestoreWarning[];
    }
  /** A usable checkpoint exists, but only behind committed, damaged ones: restoring it could duplicate output. */
  | {
      readonly kind: 'fail';
      readonly reason: 'fallback-past-committed';
      readonly message: string;
      /** The checkpoint restore would have fallen back to. */
      readonly fallback: C;
      /** The newer, damaged checkpoints, newest first. */
      readonly warnings: readonly RestoreWarning[];
    };

export interface RestoreFacts<C extends RestoreCandidate> {
  /**
   * In any order. Every candidate is a committed checkpoint (its metadata was written, so
   * `notifyCheckpointComplete` — and with it the sinks' commits — may have run for it).
   */
  readonly candidates: readonly C[];
  /**
   * `latest`: the newest usable checkpoint, if any (`restoreFrom: 'latest'`, and failover).
   * `explicit`: the user named a location; it must hold a usable checkpoint.
   */
  readonly request: 'latest' | 'explicit';
  /**
   * The run's guarantee. Under `at-least-once` duplicates after a restore are within the
   * contract, so a fallback past damaged checkpoints is allowed (with a warning).
   */
  readonly mode: CheckpointMode;
  /** The user accepted duplicates from a fallback (`allowFallbackPastDamaged`). */
  readonly allowFallbackPastDamaged: boolean;
}

/** A restore candidate read from checkpoint storage: usable ones carry their metadata. */
export interface StoredCandidate extends RestoreCandidate {
  readonly metadata?: CheckpointMetadata;
}

/**
 * {@link planRestore} over what a checkpoint directory holds (`CheckpointStorage.findRestorable`):
 * the checkpoints it skipped as damaged, newest first, then the usable one, if any.
 */
export function planStoredRestore(
  found: RestoreSelection,
  request: RestoreFacts<StoredCandidate>['request'],
  mode: CheckpointMode,
  allowFallbackPastDamaged: boolean,
): RestorePlan<StoredCandidate> {
  const candidates: StoredCandidate[] = found.skipped.map((s) => ({
    checkpointId: s.checkpointId,
    problem: s.problems.join('; '),
  }));
  if (found.state === 'found')
    candidates.push({ checkpointId: found.metadata.checkpointId, metadata: found.metadata });
  return planRestore({ candidates, request, mode, allowFallbackPastDamaged });
}

/**
 * Picks the newest usable candidate; every newer unusable one becomes a warning.
 * - None at all: `fresh-start` for `latest` (the process died before its first checkpoint
 *   completed), `fail` for `explicit` (the user named a location that holds nothing).
 * - Some, none usable: `fail` for both. Starting fresh would replay input whose output
 *   transactional sinks already committed, which breaks exactly-once; a human must decide.
 * - The newest usable one is older than some unusable ones: `fail` (`fallback-past-committed`)
 *   under exactly-once unless the user allowed it. Every candidate is committed, and a
 *   committed checkpoint's transactions may have been committed by the sinks (commit runs
 *   right after completion), so restoring an older one would commit that output a second time.
 *   Proving the fallback safe would need to know what each sink committed, and the damaged
 *   checkpoint is exactly the record that could have said so.
 */
export function planRestore<C extends RestoreCandidate>(facts: RestoreFacts<C>): RestorePlan<C> {
  const newestFirst = [...facts.candidates].sort((a, b) => b.checkpointId - a.checkpointId);
  const warnings: RestoreWarning[] = [];
  for (const candidate of newestFirst) {
    if (candidate.problem === undefined) {
      const allowed =
        warnings.length === 0 || facts.allowFallbackPastDamaged || facts.mode === 'at-least-once';
      if (allowed) return { kind: 'restore', checkpoint: candidate, warnings };
      return {
        kind: 'fail',
        reason: 'fallback-past-committed',
        message:
          `checkpoint(s) ${warnings.map((w) => w.checkpointId).join(', ')} failed verification; ` +
          `falling back to checkpoint ${candidate.checkpointId} could commit their output again`,
        fallback: candidate,
        warnings,
      };
    }
    warnings.push({
      kind: 'skipped-unusable-checkpoint',
      checkpointId: candidate.checkpointId,
      problem: candidate.problem,
    });
  }
  if (newestFirst.length === 0) {
    return facts.request === 'latest'
      ? { kind: 'fresh-start', reason: 'no-checkpoints', warnings }
      : { kind: 'fail', reason: 'location-empty', message: 'the location holds no checkpoint', warnings };
  }
  return {
    kind: 'fail',
    reason: 'none-usable',
    message: `none of the ${newestFirst.length} checkpoint(s) is usable (newest: ${newestFirst[0].checkpointId}: ${newestFirst[0].problem})`,
    warnings,
  };
}

/**
 * What `restoreFrom: 'latest'` finds in the job's checkpoint directory before it is opened (and
 * so created): `entries` is its listing, `null` when it does not exist.
 * - missing or empty: a first start (README's service pattern restores `latest` on every start),
 *   reported as a fresh start;
 * - `data.mdb` present: checkpoint storage, restore from it;
 * - anything else: refused. `lock.mdb` without `data.mdb` is a checkpoint directory that lost
 *   its data; other content means a mistyped directory. Starting fresh would commit every output
 *   again.
 */
export type CheckpointDirState =
  | { readonly kind: 'missing' }
  | { readonly kind: 'empty' }
  | { readonly kind: 'storage' }
  | { readonly kind: 'refuse'; readonly reason: string };

export function classifyCheckpointDir(entries: readonly string[] | null): CheckpointDirState {
  if (entries === null) return { kind: 'missing' };
  if (entries.length === 0) return { kind: 'empty' };
  if (entries.includes('data.mdb')) return { kind: 'storage' };
  if (entries.includes('lock.mdb')) {
    return {
      kind: 'refuse',
      reason:
        'it holds lock.mdb but no data.mdb: it is a checkpoint directory whose data file was deleted or lost',
    };
  }
  const shown = entries.slice(0, 3).join(', ') + (entries.length > 3 ? ', ...' : '');
  return {
    kind: 'refuse',
    reason: `it is not empty (${shown}) but holds no checkpoint storage (data.mdb): a mistyped directory?`,
  };
}

export type FailoverDecision =
  | {
      readonly kind: 'restart';
      readonly delayMs: number;
      /** 1 for the first restart. */
      readonly attempt: number;
    }
  | {
      readonly kind: 'fail-job';
      readonly reason: 'fatal-error' | 'restarts-exhausted';
      readonly error: unknown;
    };

export interface FailoverFacts {
  /** What failed the execution (a {@link TaskFailureError} carries the original's kind). */
  readonly error: unknown;
  readonly nowMs: number;
  /** Consulted only for restartable failures (it counts attempts). */
  readonly strategy: { onFailure(nowMs: number): RestartDecision };
}

/** A {@link WeirError}'s own kind; anything else thrown (user code, a crash) is a task failure. */
export function failureKindOf(error: unknown): FailureKind {
  return error instanceof WeirError ? error.failureKind : 'task';
}

/**
 * After an execution failed: fatal errors fail the job without consulting the strategy
 * (restarting runs the same code or configuration again, and must not use up an attempt);
 * everything else restarts as the strategy says. A `decline` that reached this path failed its
 * execution (its tasks are gone), so it restarts like a task failure. Where the restart restores
 * from (the latest completed checkpoint) is the checkpointing's decision, not this one.
 */
export function decideFailover(facts: FailoverFacts): FailoverDecision {
  if (failureKindOf(facts.error) === 'fatal') {
    return { kind: 'fail-job', reason: 'fatal-error', error: facts.error };
  }
  const decision = facts.strategy.onFailure(facts.nowMs);
  if (decision.kind === 'give-up') {
    return { kind: 'fail-job', reason: 'restarts-exhausted', error: facts.error };
  }
  return { kind: 'restart', delayMs: decision.delayMs, attempt: decision.attempt };
}

/** The typed error for a restore plan that fails. */
export function restoreFailure(decision: Extract<RestorePlan, { kind: 'fail' }>, dir: string): Error {
  switch (decision.reason) {
    case 'fallback-past-committed':
      return new RestoreFallbackRefusedError(
        dir,
        decision.warnings.map((w) => ({ checkpointId: w.checkpointId, problem: w.problem })),
        decision.fallback.checkpointId,
      );
    case 'location-empty':
      return new CheckpointStorageError(`no checkpoint in ${dir} to restore from`);
    case 'none-usable':
      return new CheckpointStorageError(
        `no usable checkpoint in ${dir} to restore from: ${decision.message}`,
      );
    default: {
      const unreachable: never = decision;
      return unreachable;
    }
  }
}

/**
 * The job part of a checkpoint's metadata: what a restore checks the new plan against. One
 * definition for the checkpoints of a job of one process and of a cluster job (cluster-restore.ts).
 */
export function jobMetadataOf(plan: ExecutionPlan): CheckpointMetadata['job'] {
  return {
    maxParallelism: plan.maxParallelism,
    defaultUidScheme: DEFAULT_UID_SCHEME,
    operators: plan.vertices.flatMap((v) =>
      v.operators.map((op) => ({
        operatorUid: op.uid,
        parallelism: v.parallelism,
        vertexId: v.vertexId,
        name: op.name,
      })),
    ),
  };
}
