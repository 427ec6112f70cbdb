/**
 * When the coordinator of a running cluster job restarts it because instances joined (issue 17,
 * "rescale on join"). Pure: `(state, facts) → { next, decision }`; `cluster-job.ts` feeds it the
 * membership view on every `join` and on a timer, and carries out a `restart` the way a member's
 * timeout is carried out (a new run over every live member, restoring the last committed
 * checkpoint of the job, or starting afresh when none was committed — exact either way, because a
 * sink commits only after `complete`, which follows the checkpoint record's commit).
 *
 * Rules, in order:
 * 1. No live member outside the assignment: nothing to do (and the window resets).
 * 2. The job is finishing (every source ended, or the final checkpoint is under way): no restart;
 *    a joiner waits for the end and finishes without a share. Restarting then would rerun the
 *    tail of the input for no gain.
 * 3. Rate limit: not before `delayMs` after the first joiner was seen (joiners within that window
 *    share one restart), nor sooner than `delayMs` after this run was deployed (a run is not torn
 *    down while it is still starting; a joiner seen meanwhile waits for the next rebalance).
 * 4. A checkpoint's record is being committed: wait until that settles, so the restart restores
 *    whatever it is — committed or refused — and never races the write that decides it.
 * 5. Otherwise: restart over every live member.
 */

export interface RebalanceFacts {
  /** The members of the running assignment. */
  readonly assigned: readonly string[];
  /** The live members in the coordinator's view (itself among them). */
  readonly live: readonly string[];
  /** The coordinator's monotonic clock, ms. */
  readonly now: number;
  /** When this run was deployed, on the same clock. */
  readonly deployedAt: number;
  /** Every source ended or the final checkpoint is pending or done. */
  readonly finishing: boolean;
  /** A completed checkpoint's record is being committed through the lease. */
  readonly committing: boolean;
}

export interface RebalanceState {
  /** When a live member outside the assignment was first seen (null: none now). */
  readonly joinersSince: number | null;
}

export type RebalanceDecision =
  | { readonly kind: 'none' }
  | {
      readonly kind: 'wait';
      readonly joiners: readonly string[];
      readonly why: 'finishing' | 'window' | 'deploying' | 'committing';
    }
  | { readonly kind: 'restart'; readonly joiners: readonly string[] };

export const INITIAL_REBALANCE_STATE: RebalanceState = { joinersSince: null };

export function decideRebalance(
  state: RebalanceState,
  facts: RebalanceFacts,
  delayMs: number,
): { readonly next: RebalanceState; readonly decision: RebalanceDecision } {
  const assigned = new Set(facts.assigned);
  const joiners = facts.live.filter((m) => !assigned.has(m)).sort();
  if (joiners.length === 0) return { next: { joinersSince: null }, decision: { kind: 'none' } };
  const next = { joinersSince: state.joinersSince ?? facts.now };
  const wait = (why: 'finishing' | 'window' | 'deploying' | 'committing') => ({
    next,
    decision: { kind: 'wait', joiners, why } as const,
  });
  if (facts.finishing) return wait('finishing');
  if (facts.now - next.joinersSince < delayMs) return wait('window');
  if (facts.now - facts.deployedAt < delayMs) return wait('deploying');
  if (facts.committing) return wait('committing');
  return { next, decision: { kind: 'restart', joiners } };
}
