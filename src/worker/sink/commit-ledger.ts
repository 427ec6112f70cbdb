/**
 * The bookkeeping of a committing sink subtask (two-phase commit), as a pure protocol:
 * `step(ledger, event) → { next, effects }`. The operator
 * ({@link import('./committing-sink-operator.js').CommittingSinkOperator}) feeds it what happened
 * (a pre-commit started or resolved, a checkpoint completed, a commit settled) and carries out
 * the effects (start a commit, retry one later, fail the task). Violations throw before any effect.
 *
 * Invariants:
 * - A committable stays in `pending` until its commit succeeded, so every snapshot taken before
 *   that lists it, and a restore of such a snapshot commits it again (idempotent commits).
 * - The snapshot of checkpoint `n` lists only committables of checkpoints `<= n`: a later one's
 *   records are replayed after a restore of `n`, so committing it too would duplicate them.
 * - At most one commit is in flight, and commits run in checkpoint order per subtask: a
 *   committable is eligible only when no pre-commit of an earlier checkpoint is still sealing
 *   (under at-least-once a later pre-commit can resolve first), so a marker row holding the
 *   highest committed checkpoint id never skips an earlier one.
 */

import type { CheckpointingMode } from '../../api/source.js';

/** One committable awaiting its commit. */
export interface PendingCommittable {
  readonly checkpointId: number;
  /** The writer subtask that produced it (markers and ids are keyed by it). */
  readonly subtaskIndex: number;
  readonly committable: unknown;
  /** From the restored checkpoint (committed again on restore). */
  readonly restored: boolean;
}

export interface CommitRetryPolicy {
  readonly retries: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
}

export interface CommitLedger {
  readonly mode: CheckpointingMode;
  /** Checkpoints whose pre-commit was called and has not resolved yet. */
  readonly sealing: readonly number[];
  /** Committables not yet committed, ordered by (checkpointId, subtaskIndex). */
  readonly pending: readonly PendingCommittable[];
  /** Highest checkpoint known complete (restored, or notified); 0 when none. */
  readonly completedUpTo: number;
  /** The commit in flight (the head of `pending`), with its try count; null when idle. */
  readonly inFlight: { readonly entry: PendingCommittable; readonly retry: number } | null;
  /** A commit waits for a retry timer; no other commit starts meanwhile. */
  readonly retryScheduled: boolean;
}

export type LedgerEvent =
  | {
      readonly kind: 'restored';
      readonly checkpointId: number;
      readonly entries: readonly PendingCommittable[];
    }
  | { readonly kind: 'pre-commit-started'; readonly checkpointId: number }
  /** `committable === undefined`: nothing to commit for this checkpoint. */
  | {
      readonly kind: 'pre-committed';
      readonly checkpointId: number;
      readonly subtaskIndex: number;
      readonly committable: unknown;
    }
  | { readonly kind: 'checkpoint-complete'; readonly checkpointId: number }
  | { readonly kind: 'commit-succeeded' }
  | { readonly kind: 'commit-failed'; readonly error: unknown }
  | { readonly kind: 'retry-due' };

export type LedgerEffect =
  | { readonly kind: 'commit'; readonly entry: PendingCommittable; readonly retry: number }
  | { readonly kind: 'schedule-retry'; readonly delayMs: number }
  | {
      readonly kind: 'give-up';
      readonly entry: PendingCommittable;
      readonly tries: number;
      readonly error: unknown;
    };

export function emptyLedger(mode: CheckpointingMode): CommitLedger {
  return { mode, sealing: [], pending: [], completedUpTo: 0, inFlight: null, retryScheduled: false };
}

/** Delay before retry number `retry` (1-based), or null when the retries are used up. */
export function commitRetryDelay(policy: CommitRetryPolicy, retry: number): number | null {
  if (retry > policy.retries) return null;
  return Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** (retry - 1));
}

function byCheckpoint(a: PendingCommittable, b: PendingCommittable): number {
  return a.checkpointId - b.checkpointId || a.subtaskIndex - b.subtaskIndex;
}

/** Whether `entry` may be committed now (see the ordering invariant in the file comment). */
function eligible(ledger: CommitLedger, entry: PendingCommittable): boolean {
  if (ledger.sealing.some((id) => id < entry.checkpointId)) return false;
  if (entry.restored) return true; // its checkpoint is the restored, completed one (or older)
  return ledger.mode !== 'exactly-once' || entry.checkpointId <= ledger.completedUpTo;
}

/** Starts the next commit when nothing is in flight and the head of `pending` is eligible. */
function next(ledger: CommitLedger, effects: LedgerEffect[]): CommitLedger {
  if (ledger.inFlight !== null || ledger.retryScheduled) return ledger;
  const head = ledger.pending[0];
  if (head === undefined || !eligible(ledger, head)) return ledger;
  effects.push({ kind: 'commit', entry: head, retry: 0 });
  return { ...ledger, inFlight: { entry: head, retry: 0 } };
}

export function step(
  ledger: CommitLedger,
  event: LedgerEvent,
  policy: CommitRetryPolicy,
): { next: CommitLedger; effects: LedgerEffect[] } {
  const effects: LedgerEffect[] = [];
  switch (event.kind) {
    case 'restored': {
      if (ledger.pending.length > 0 || ledger.sealing.length > 0 || ledger.completedUpTo > 0) {
        throw new Error('commit ledger: restore after the sink started');
      }
      for (const e of event.entries) {
        if (e.checkpointId > event.checkpointId) {
          throw new Error(
            `commit ledger: restored checkpoint ${event.checkpointId} holds a committable of later checkpoint ${e.checkpointId}`,
          );
        }
      }
      const pending = event.entries.map((e) => ({ ...e, restored: true })).sort(byCheckpoint);
      return { next: next({ ...ledger, pending, completedUpTo: event.checkpointId }, effects), effects };
    }
    case 'pre-commit-started': {
      const last = ledger.sealing[ledger.sealing.length - 1] ?? 0;
      const lastPending = ledger.pending[ledger.pending.length - 1]?.checkpointId ?? 0;
      // Id 0 is the single end-of-input pre-commit without checkpointing.
      if (event.checkpointId !== 0 && (event.checkpointId <= last || event.checkpointId <= lastPending)) {
        throw new Error(`commit ledger: pre-commit of checkpoint ${event.checkpointId} out of order`);
      }
      return { next: { ...ledger, sealing: [...ledger.sealing, event.checkpointId] }, effects };
    }
    case 'pre-committed': {
      if (!ledger.sealing.includes(event.checkpointId)) {
        throw new Error(`commit ledger: checkpoint ${event.checkpointId} resolved without a pre-commit`);
      }
      const sealing = ledger.sealing.filter((id) => id !== event.checkpointId);
      const pending =
        event.committable === undefined
          ? ledger.pending
          : [
              ...ledger.pending,
              {
                checkpointId: event.checkpointId,
                subtaskIndex: event.subtaskIndex,
                committable: event.committable,
                restored: false,
              },
            ].sort(byCheckpoint);
      return { next: next({ ...ledger, sealing, pending }, effects), effects };
    }
    case 'checkpoint-complete': {
      const completedUpTo = Math.max(ledger.completedUpTo, event.checkpointId);
      return { next: next({ ...ledger, completedUpTo }, effects), effects };
    }
    case 'commit-succeeded': {
      if (ledger.inFlight === null)
        throw new Error('commit ledger: a commit succeeded while none was in flight');
      const done = ledger.inFlight.entry;
      const pending = ledger.pending.filter((e) => e !== done);
      return { next: next({ ...ledger, pending, inFlight: null }, effects), effects };
    }
    case 'commit-failed': {
      if (ledger.inFlight === null)
        throw new Error('commit ledger: a commit failed while none was in flight');
      const retry = ledger.inFlight.retry + 1;
      const delayMs = commitRetryDelay(policy, retry);
      if (delayMs === null) {
        effects.push({ kind: 'give-up', entry: ledger.inFlight.entry, tries: retry, error: event.error });
        return { next: ledger, effects };
      }
      effects.push({ kind: 'schedule-retry', delayMs });
      return {
        next: { ...ledger, inFlight: { entry: ledger.inFlight.entry, retry }, retryScheduled: true },
        effects,
      };
    }
    case 'retry-due': {
      if (ledger.inFlight === null || !ledger.retryScheduled) {
        throw new Error('commit ledger: a retry fired while none was scheduled');
      }
      effects.push({ kind: 'commit', entry: ledger.inFlight.entry, retry: ledger.inFlight.retry });
      return { next: { ...ledger, retryScheduled: false }, effects };
    }
    default: {
      const never: never = event;
      throw new Error(`commit ledger: unknown event ${JSON.stringify(never)}`);
    }
  }
}

/** The committables checkpoint `checkpointId` stores: every uncommitted one of checkpoints `<= checkpointId`. */
export function committablesFor(ledger: CommitLedger, checkpointId: number): PendingCommittable[] {
  return ledger.pending.filter((e) => e.checkpointId <= checkpointId);
}

/** Nothing left to commit that could be committed: the sink may end (end of input). */
export function idle(ledger: CommitLedger): boolean {
  return (
    ledger.inFlight === null &&
    ledger.sealing.length === 0 &&
    ledger.pending.every((e) => !eligible(ledger, e))
  );
}

/**
 * Everything of checkpoints `<= checkpointId` is committed: no committable of them is pending
 * and no pre-commit of them is still sealing.
 */
export function committedThrough(ledger: CommitLedger, checkpointId: number): boolean {
  return (
    ledger.sealing.every((id) => id > checkpointId) &&
    ledger.pending.every((e) => e.checkpointId > checkpointId)
  );
}
