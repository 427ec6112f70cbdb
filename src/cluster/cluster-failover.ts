/**
 * What the coordinator of a cluster job does when a member's execution failed by itself (a task's
 * error; cluster-checkpoints.ts `onMemberFailed`): restart the run over the live members from the
 * last committed checkpoint, as its restart strategy says, or fail the job. Pure; the same rule as
 * a job of one process (restore-planning.ts `decideFailover`): a `fatal` failure is never
 * restarted and uses up no attempt.
 *
 * The strategy is an object of the coordinator instance. Its count survives a coordinator change
 * through the assignment (`taskRestarts`): a new coordinator replays that many failures into its
 * own strategy first ({@link catchUpRestarts}), so a job never gets more restarts than the strategy
 * grants. The replayed failures carry the replay's time, which for `exponential-delay` starts the
 * backoff from there (a longer wait, never a shorter one).
 */

import type { RestartStrategy } from '../coordinator/restart-strategy.js';
import type { FailureKind } from '../errors.js';

export type MemberFailureDecision =
  | { readonly kind: 'restart'; readonly delayMs: number; readonly attempt: number }
  | { readonly kind: 'fail-job'; readonly reason: 'fatal-error' | 'restarts-exhausted' };

export function decideMemberFailure(
  kind: FailureKind,
  strategy: RestartStrategy,
  nowMs: number,
): MemberFailureDecision {
  if (kind === 'fatal') return { kind: 'fail-job', reason: 'fatal-error' };
  const d = strategy.onFailure(nowMs);
  return d.kind === 'give-up'
    ? { kind: 'fail-job', reason: 'restarts-exhausted' }
    : { kind: 'restart', delayMs: d.delayMs, attempt: d.attempt };
}

/** Replays failures into `strategy` until it granted `granted` restarts (or gives up). */
export function catchUpRestarts(strategy: RestartStrategy, granted: number, nowMs: number): void {
  while (strategy.restarts < granted) {
    if (strategy.onFailure(nowMs).kind === 'give-up') return;
  }
}
