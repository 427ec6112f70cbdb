/**
 * The member side of the coordinator's control messages, made durable: what a member learns from
 * the records the coordinator commits through the lease's fence (the coordinator bucket), read
 * back every `timeoutMs / 8` during a run, beside the core NATS messages on the run's `ctl`
 * subject (at most once). A pure `(state, facts) → { next, actions }`; cluster-job.ts reads the
 * keys and carries the actions out.
 *
 * | lost message | durable fact it is read from                                          |
 * | ------------ | --------------------------------------------------------------------- |
 * | `complete`   | `checkpoint` record of this run with a higher id than any completed   |
 * | `restart`    | `assignment` of another run; or this instance holds the lease although |
 * |              | the run's coordinator is another (it lost the lease)                   |
 * | `fail`       | `outcome` record of this job's lineage (`kind: 'failed'`)              |
 * | `stop`       | `outcome` record of this job's lineage (`kind: 'stopped'`): the stop    |
 * |              | of a stop-with-savepoint, committed before it is published             |
 * | `trigger`, `abort` | none needed: the checkpoint times out and the next one follows   |
 *
 * Reads are `get`s (a request each), not a watch: every read answers for itself after a
 * reconnect, so the bound is one period after the connection is back. Cost per member: three
 * `get`s per period (default 375 ms).
 *
 * Idempotent: `complete` is carried out once per checkpoint id and only upward (the `ctl` message
 * and the record go through the same {@link noteComplete}); a sink's `notifyCheckpointComplete(n)`
 * commits everything up to n, so a skipped id's output is committed with the next.
 */

/**
 * The committed end of a job (the coordinator bucket's `outcome` key): it failed, or it stops
 * with a savepoint. Committed through the lease's fence before it is told, so a member that
 * missed the message, or an instance that takes the lease over, reads it back; once it is there
 * no run of the job's lineage is assigned again.
 */
export type ClusterJobEnd = ClusterJobOutcome | ClusterJobStop;

/** The committed end of a job that failed. */
export interface ClusterJobOutcome {
  readonly kind: 'failed';
  /** The job's first run id (`PublishedAssignment.lineage`). */
  readonly lineage: string;
  /** The run that failed. */
  readonly run: string;
  readonly message: string;
  readonly reason: 'fatal-error' | 'restarts-exhausted';
  /** Restarts the job had made (every kind). */
  readonly restarts: number;
}

/**
 * The committed stop of a stop-with-savepoint (cluster-savepoint.ts): the savepoint `checkpointId`
 * exists at `path` and every member stops after its sinks committed up to it. A member that
 * misses the `stop` message must not run on, and the job must not restart: a run after the
 * savepoint would commit output that a restore of the savepoint commits again.
 */
export interface ClusterJobStop {
  readonly kind: 'stopped';
  readonly lineage: string;
  /** The run that took the savepoint. */
  readonly run: string;
  readonly requestId: string;
  readonly checkpointId: number;
  readonly path: string;
}

export interface RunControlState {
  /** The highest checkpoint id whose `complete` was carried out in this run (0: none). */
  readonly completedUpTo: number;
}

export interface RunControlFacts {
  readonly self: string;
  readonly run: string;
  readonly lineage: string;
  /** The run's coordinator (`PublishedAssignment.coordinator`). */
  readonly coordinator: string;
  /** The committed assignment's run, or null when the key is absent. */
  readonly assignmentRun: string | null;
  /** The committed checkpoint record, or null. */
  readonly checkpoint: { readonly run: string; readonly checkpointId: number } | null;
  readonly outcome: ClusterJobEnd | null;
  /** This instance holds the coordinator lease now. */
  readonly leaseHeld: boolean;
}

export type RunControlAction =
  | { readonly kind: 'complete'; readonly checkpointId: number }
  | { readonly kind: 'restart'; readonly reason: string }
  | { readonly kind: 'fail'; readonly outcome: ClusterJobOutcome }
  | { readonly kind: 'stop'; readonly stop: ClusterJobStop };

export const initialRunControl: RunControlState = { completedUpTo: 0 };

/** A `complete` for `checkpointId` (from either path): carry it out, or drop it as a repeat. */
export function noteComplete(
  state: RunControlState,
  checkpointId: number,
): { next: RunControlState; action: RunControlAction | null } {
  if (checkpointId <= state.completedUpTo) return { next: state, action: null };
  return { next: { completedUpTo: checkpointId }, action: { kind: 'complete', checkpointId } };
}

export function reconcileRunControl(
  state: RunControlState,
  f: RunControlFacts,
): { next: RunControlState; actions: RunControlAction[] } {
  const actions: RunControlAction[] = [];
  let next = state;
  // A complete first: a run that ends now may still commit the sinks of what completed before.
  if (f.checkpoint && f.checkpoint.run === f.run) {
    const c = noteComplete(next, f.checkpoint.checkpointId);
    next = c.next;
    if (c.action) actions.push(c.action);
  }
  // The job's committed end comes before any restart: a stopping job never restarts.
  if (f.outcome && f.outcome.lineage === f.lineage)
    actions.push(
      f.outcome.kind === 'stopped' ? { kind: 'stop', stop: f.outcome } : { kind: 'fail', outcome: f.outcome },
    );
  else if (f.assignmentRun !== null && f.assignmentRun !== f.run)
    actions.push({
      kind: 'restart',
      reason: `the coordinator published run ${f.assignmentRun} (this instance runs ${f.run}); restarting`,
    });
  else if (f.leaseHeld && f.coordinator !== f.self)
    actions.push({
      kind: 'restart',
      reason: `this instance took the coordinator lease over from ${f.coordinator}; restarting under it`,
    });
  return { next, actions };
}
