/**
 * Counts consecutive checkpoint failures against `tolerableFailures` and says when the job must
 * fail (Flink's CheckpointFailureManager).
 *
 * Classification ({@link countsAsCheckpointFailure}), after Flink: only failures that say
 * something about the health of checkpointing count — `'expired'` (CHECKPOINT_EXPIRED),
 * `'declined'` (CHECKPOINT_DECLINED), `'async-snapshot-failed'` (CHECKPOINT_ASYNC_EXCEPTION) and
 * `'storage-failed'` (IO_EXCEPTION / FINALIZE_CHECKPOINT_FAILURE). `'subsumed'`,
 * `'too-many-concurrent'`, `'job-stopping'`, `'end-of-input'` and `'task-failure'` do not (a task
 * failure already fails the job through failover; counting it too would double-fail).
 *
 * Further Flink rules: each checkpoint counts at most once; failures of savepoints never count;
 * a failure of a checkpoint older than the newest success does not count; a success resets the
 * count only if it is newer than the last success. The job fails when the count exceeds
 * `tolerableFailures` (so the default 0 fails it on the first counted failure), after which the
 * count restarts from 0.
 */

import type { CheckpointFailureReason } from '../errors.js';
import { CheckpointFailureThresholdError, InvalidOptionError } from '../errors.js';
import { assertNever } from '../util/assert-never.js';
import type { CheckpointKind } from './checkpoint-kind.js';

export type CheckpointFailureDecision =
  | { readonly kind: 'continue' }
  | {
      readonly kind: 'fail-job';
      /** The reason of the failure that crossed the threshold. */
      readonly reason: CheckpointFailureReason;
      readonly error: CheckpointFailureThresholdError;
    };

export function countsAsCheckpointFailure(reason: CheckpointFailureReason): boolean {
  switch (reason) {
    case 'expired':
    case 'declined':
    case 'async-snapshot-failed':
    case 'storage-failed':
      return true;
    case 'subsumed':
    case 'too-many-concurrent':
    case 'job-stopping':
    case 'end-of-input':
    case 'task-failure':
      return false;
    default:
      return assertNever(reason, 'checkpoint failure reason');
  }
}

export class CheckpointFailureManager {
  /** Integer >= 0, or Infinity (never fail the job for checkpoint failures). */
  readonly tolerableFailures: number;
  /** Checkpoint ids counted since the last reset; its size is the consecutive failure count. */
  readonly #counted = new Set<number>();
  #lastSucceededId = -1;

  constructor(tolerableFailures = 0) {
    if (!(Number.isInteger(tolerableFailures) && tolerableFailures >= 0) && tolerableFailures !== Infinity) {
      throw new InvalidOptionError(
        'checkpointing.tolerableFailures',
        `must be an integer >= 0 or Infinity, got ${String(tolerableFailures)}`,
      );
    }
    this.tolerableFailures = tolerableFailures;
  }

  get consecutiveFailures(): number {
    return this.#counted.size;
  }

  onFailure(
    checkpointId: number,
    reason: CheckpointFailureReason,
    kind: CheckpointKind,
    cause?: unknown,
  ): CheckpointFailureDecision {
    if (kind === 'savepoint' || !countsAsCheckpointFailure(reason) || checkpointId <= this.#lastSucceededId) {
      return { kind: 'continue' };
    }
    this.#counted.add(checkpointId);
    if (this.#counted.size <= this.tolerableFailures) return { kind: 'continue' };
    const error = new CheckpointFailureThresholdError(this.#counted.size, this.tolerableFailures, { cause });
    this.#counted.clear();
    return { kind: 'fail-job', reason, error };
  }

  onSuccess(checkpointId: number): void {
    if (checkpointId <= this.#lastSucceededId) return;
    this.#lastSucceededId = checkpointId;
    this.#counted.clear();
  }
}
