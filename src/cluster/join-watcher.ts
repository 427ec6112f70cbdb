/**
 * The coordinator's side of an instance joining a running job: watches the membership for live
 * members outside the run's assignment and asks `decideRebalance` (join-rebalance.ts) on every
 * `join` and every `period` ms until it answers `restart`, which it reports once through
 * `onRestart`; `cluster-job.ts` then restarts the run over the live members. Cost while nobody
 * joins: one sweep of the member view per period (a few members), nothing on NATS.
 */

import type { ClusterCheckpoints } from './cluster-checkpoints.js';
import type { ClusterMembership } from './cluster-membership.js';
import {
  decideRebalance,
  INITIAL_REBALANCE_STATE,
  type RebalanceDecision,
  type RebalanceState,
} from './join-rebalance.js';

export interface JoinWatcherOptions {
  readonly membership: Pick<ClusterMembership, 'members' | 'on' | 'off'>;
  /** The running assignment's members. */
  readonly assigned: readonly string[];
  readonly delayMs: number;
  readonly checkpoints: Pick<ClusterCheckpoints, 'finishing' | 'committing'>;
  /** A decision to wait whose reason changed (for the log). */
  readonly onWait?: (decision: Extract<RebalanceDecision, { kind: 'wait' }>) => void;
  /** Called once: restart the run over every live member. */
  readonly onRestart: (joiners: readonly string[]) => void;
  readonly now?: () => number;
}

/** Starts watching; returns the stop function (idempotent). */
export function watchJoiners(o: JoinWatcherOptions): () => void {
  const now = o.now ?? (() => performance.now());
  const deployedAt = now();
  let state: RebalanceState = INITIAL_REBALANCE_STATE;
  let lastWhy: string | null = null;
  let stopped = false;
  const check = () => {
    if (stopped) return;
    const { next, decision } = decideRebalance(
      state,
      {
        assigned: o.assigned,
        live: o.membership.members().map((m) => m.record.instanceId),
        now: now(),
        deployedAt,
        finishing: o.checkpoints.finishing,
        committing: o.checkpoints.committing,
      },
      o.delayMs,
    );
    state = next;
    switch (decision.kind) {
      case 'none':
        lastWhy = null;
        return;
      case 'wait':
        if (decision.why !== lastWhy) o.onWait?.(decision);
        lastWhy = decision.why;
        return;
      case 'restart':
        stop();
        o.onRestart(decision.joiners);
        return;
      default:
        decision satisfies never;
    }
  };
  const timer = setInterval(check, Math.max(20, Math.min(250, Math.floor(o.delayMs / 4))));
  o.membership.on('join', check);
  function stop() {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    o.membership.off('join', check);
  }
  return stop;
}
