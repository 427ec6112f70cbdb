/**
 * The coordinator lease as pure decisions: given what an instance last observed of the `lease` key
 * and its own role, what it does now. `coordinator-lease.ts` does the I/O.
 *
 * Protocol (all writes to the coordinator bucket, whose stream sequence is the fence):
 * - Acquire: KV `create` of `lease` when it is absent or deleted; or, when the observed revision
 *   has not changed for the holder's `leaseMs` on the observer's own monotonic clock, KV `update`
 *   with that revision as the expected one (CAS). Two contenders: the server applies one, the other
 *   gets "wrong last sequence". The epoch is the revision of the acquiring write.
 * - Renew every `leaseMs / 4`, as a write that expects the stream's last sequence to be the
 *   holder's own last write. The holder counts itself coordinator only until `sentAt + 0.8 ×
 *   leaseMs`, where `sentAt` is when it sent its last successful renewal: a contender starts its
 *   `leaseMs` only when it has seen that renewal, so it is later than `sentAt`; the holder knows it
 *   lost the lease before anyone can take it (clocks only need to run at rates within 20%).
 * - Fenced commit: every coordinator write expects the stream's last sequence to be the holder's
 *   own last write. A takeover is a write by another instance, so after it every write of the old
 *   holder fails on the server, whatever the old holder's clock says (a paused process, a frozen
 *   VM). Timing keeps a lost holder from trying; the fence makes its trying harmless.
 */

/** What an instance last read of the lease key. */
export interface ObservedLease {
  /** The key's revision (its last write's stream sequence), 0 if it never existed. */
  readonly revision: number;
  /** The holder named, null when absent or deleted. */
  readonly holder: string | null;
  /** The holder's lease length, ms (from the value; 0 when there is no holder). */
  readonly leaseMs: number;
  /** Observer's monotonic time when it first saw this revision. */
  readonly observedAt: number;
}

export type LeaseState =
  | { readonly role: 'follower'; readonly observed: ObservedLease | null }
  | {
      readonly role: 'holder';
      /** Revision of the acquiring write; the same for every renewal and commit of this tenure. */
      readonly epoch: number;
      /** Revision of the lease key's last write (acquire or renew): the CAS of `release`. */
      readonly leaseRevision: number;
      /** Stream sequence of this holder's last write to the bucket: what its next write expects. */
      readonly lastSeq: number;
      /** When the last successful renewal (or the acquire) was sent, monotonic ms. */
      readonly renewSentAt: number;
      /** `renewSentAt + HOLDER_VALIDITY_FRACTION × leaseMs`: coordinator only before this. */
      readonly validUntil: number;
    };

export type LeaseAction =
  | { readonly kind: 'create' }
  | { readonly kind: 'take-over'; readonly revision: number }
  | { readonly kind: 'renew' }
  | { readonly kind: 'expire' }
  | { readonly kind: 'wait' };

/** The share of `leaseMs` a holder trusts after sending a renewal (margin for clock rate and delivery). */
export const HOLDER_VALIDITY_FRACTION = 0.8;

/** Renewals (and followers' polls) per lease length. */
export const RENEWALS_PER_LEASE = 4;

/** Folds a fresh read of the key into the observation: the clock restarts only on a new revision. */
export function observeLease(
  previous: ObservedLease | null,
  read: { revision: number; holder: string | null; leaseMs: number },
  now: number,
): ObservedLease {
  if (previous && previous.revision === read.revision) return previous;
  return { ...read, observedAt: now };
}

export function holderAfterWrite(
  epoch: number,
  seq: number,
  sentAt: number,
  leaseMs: number,
): Extract<LeaseState, { role: 'holder' }> {
  return {
    role: 'holder',
    epoch,
    leaseRevision: seq,
    lastSeq: seq,
    renewSentAt: sentAt,
    validUntil: sentAt + HOLDER_VALIDITY_FRACTION * leaseMs,
  };
}

export function decideLease(state: LeaseState, now: number, leaseMs: number): LeaseAction {
  if (state.role === 'holder') {
    if (now >= state.validUntil) return { kind: 'expire' };
    if (now >= state.renewSentAt + leaseMs / RENEWALS_PER_LEASE) return { kind: 'renew' };
    return { kind: 'wait' };
  }
  const o = state.observed;
  if (o === null) return { kind: 'wait' };
  if (o.holder === null) return { kind: 'create' };
  // The holder's own lease length counts, not ours: it renews on its schedule.
  if (now - o.observedAt >= o.leaseMs) return { kind: 'take-over', revision: o.revision };
  return { kind: 'wait' };
}
