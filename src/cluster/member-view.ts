/**
 * One reader's view of a cluster's live members: a pure `(view, event, now) → { next, changes }`
 * over what the watch of `members.>` delivers, plus ticks. The I/O (`cluster-membership.ts`) feeds
 * it and emits the changes.
 *
 * Timing is the reader's own monotonic clock, never the writer's or the server's: a member is gone
 * when the reader has seen no new revision of its key for the member's `timeoutMs`. That needs no
 * synchronized clocks, only clocks that run at about the same rate; a reader that is itself
 * stalled sees members late, never early.
 *
 * Keys the watch replays from before the reader started (revision ≤ `startRevision`, the stream's
 * last sequence read before the watch began) may belong to instances that died up to the bucket's
 * `max_age` ago. Such a key is `pending` until a newer revision proves its member alive; a key
 * written after the start joins at once. So a new reader never reports a dead member, and reports
 * a live one within one heartbeat interval.
 */

import { assertNever } from '../util/assert-never.js';
import type { MemberRecord } from './member-record.js';

export interface LiveMember {
  readonly record: MemberRecord;
  /** The key's revision last seen (the stream sequence of its last beat). */
  readonly revision: number;
  /** Reader's monotonic time when that revision was seen. */
  readonly seenAt: number;
  /** Server timestamp of the last beat, ms since the epoch (for display only). */
  readonly serverTime: number;
}

export interface MemberView {
  /** Invariant: an id is in at most one of `live` and `pending`. */
  readonly live: ReadonlyMap<string, LiveMember>;
  readonly pending: ReadonlyMap<string, LiveMember>;
  readonly startRevision: number;
}

export type MemberViewEvent =
  | {
      readonly kind: 'put';
      readonly record: MemberRecord;
      readonly revision: number;
      readonly serverTime: number;
    }
  | { readonly kind: 'delete'; readonly instanceId: string; readonly revision: number }
  | { readonly kind: 'tick' };

export type MembershipChange =
  | { readonly kind: 'join'; readonly member: LiveMember }
  | {
      readonly kind: 'leave';
      readonly instanceId: string;
      /** `left`: it deleted its key; `timeout`: no beat for its `timeoutMs`. */
      readonly reason: 'left' | 'timeout';
      readonly last: LiveMember;
    };

export function emptyMemberView(startRevision: number): MemberView {
  return { live: new Map(), pending: new Map(), startRevision };
}

export function stepMemberView(
  view: MemberView,
  event: MemberViewEvent,
  now: number,
): { next: MemberView; changes: MembershipChange[] } {
  const live = new Map(view.live);
  const pending = new Map(view.pending);
  const changes: MembershipChange[] = [];
  switch (event.kind) {
    case 'put': {
      const id = event.record.instanceId;
      const seen: LiveMember = {
        record: event.record,
        revision: event.revision,
        seenAt: now,
        serverTime: event.serverTime,
      };
      const known = live.get(id);
      if (known) {
        // A replayed or duplicate delivery does not refresh the member.
        if (event.revision > known.revision) live.set(id, seen);
        break;
      }
      const waiting = pending.get(id);
      if (event.revision > view.startRevision || (waiting && event.revision > waiting.revision)) {
        pending.delete(id);
        live.set(id, seen);
        changes.push({ kind: 'join', member: seen });
      } else if (!waiting) {
        pending.set(id, seen);
      }
      break;
    }
    case 'delete': {
      const known = live.get(event.instanceId);
      if (known && event.revision > known.revision) {
        live.delete(event.instanceId);
        changes.push({ kind: 'leave', instanceId: event.instanceId, reason: 'left', last: known });
      }
      pending.delete(event.instanceId);
      break;
    }
    case 'tick': {
      for (const [id, m] of live) {
        if (now - m.seenAt > m.record.timeoutMs) {
          live.delete(id);
          changes.push({ kind: 'leave', instanceId: id, reason: 'timeout', last: m });
        }
      }
      for (const [id, m] of pending) if (now - m.seenAt > m.record.timeoutMs) pending.delete(id);
      break;
    }
    default:
      assertNever(event, 'member view event');
  }
  return { next: { live, pending, startRevision: view.startRevision }, changes };
}
