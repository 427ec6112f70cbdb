/**
 * The receiver's side of a remote edge's ordering protocol, as a pure function:
 * `(state, event) → { next, action }`; violations throw before anything is applied.
 *
 * Every data message carries (generation, seq). Sequence numbers count the flow's data messages
 * from 0, across generations. A generation is one resume: the receiver opens generation g+1 by
 * sending `resume(g+1, nextSeq)`; the producer answers `resumed(g+1, firstSeq, producerNext)` and
 * then (re)sends its messages from `firstSeq` on, in generation g+1. So within the current
 * generation seqs must arrive exactly in order; messages of older generations are in-flight
 * leftovers of a superseded send and are dropped (`stale`, counted by the receiver): every one of
 * them is either already delivered or resent in the new generation.
 *
 * Decisions:
 * - data in the current generation, seq = expected → `deliver`.
 * - data with seq > expected → a gap (messages lost on a cut connection): `resume`. Nothing is
 *   delivered past a gap; the receiver remembers that the producer must have sent up to
 *   `seq` (`mustReach`) and checks it against the producer's answer.
 * - data with seq < expected in the current generation → RemoteEdgeSequenceError 'duplicate'
 *   (core NATS delivers at most once per connection: a second publisher or a bug).
 * - data of a generation not issued yet → RemoteEdgeProtocolError.
 * - data of the current generation before its `resumed` → the `resumed` was lost: `resume`.
 * - `resumed` whose firstSeq ≠ expected (the producer no longer holds the missing messages) or
 *   whose producerNext < mustReach (a message the producer never sent was seen) →
 *   RemoteEdgeSequenceError 'gap'. A gap is repaired or raised, never skipped.
 */

import { RemoteEdgeProtocolError, RemoteEdgeSequenceError } from '../errors.js';
import { assertNever } from '../util/assert-never.js';

export interface SequenceState {
  /** The latest generation this receiver issued (0: none yet, the producer sends nothing). */
  readonly generation: number;
  /** The next sequence number to deliver. Every message below it was delivered, in order. */
  readonly expectedSeq: number;
  /** True between issuing a generation and receiving its `resumed`. */
  readonly awaitingResumed: boolean;
  /** One past the highest sequence number seen (a gap proves the producer sent up to it). */
  readonly mustReach: number;
}

export const INITIAL_SEQUENCE_STATE: SequenceState = Object.freeze({
  generation: 0,
  expectedSeq: 0,
  awaitingResumed: true,
  mustReach: 0,
});

export type SequenceEvent =
  | { readonly kind: 'data'; readonly generation: number; readonly seq: number }
  | {
      readonly kind: 'resumed';
      readonly generation: number;
      readonly firstSeq: number;
      readonly producerNext: number;
    }
  /** The receiver opens a new generation (at start, after a reconnect, a gap, a sync). */
  | { readonly kind: 'issue-resume' };

export type SequenceAction =
  | 'deliver'
  | 'stale'
  /** Open a new generation (apply `issue-resume` and send its `resume`). */
  | 'resume'
  | 'resumed'
  /** `issue-resume` applied: send `resume(next.generation, next.expectedSeq)`. */
  | 'send-resume';

export interface SequenceDecision {
  readonly next: SequenceState;
  readonly action: SequenceAction;
}

export function decideSequence(flow: string, state: SequenceState, event: SequenceEvent): SequenceDecision {
  switch (event.kind) {
    case 'issue-resume':
      return {
        next: { ...state, generation: state.generation + 1, awaitingResumed: true },
        action: 'send-resume',
      };
    case 'resumed': {
      if (event.generation > state.generation) {
        throw new RemoteEdgeProtocolError(
          flow,
          `resumed for generation ${event.generation}, which was never issued (latest ${state.generation})`,
        );
      }
      if (event.generation < state.generation || !state.awaitingResumed)
        return { next: state, action: 'stale' };
      if (event.firstSeq !== state.expectedSeq) {
        throw new RemoteEdgeSequenceError(
          flow,
          'gap',
          state.expectedSeq,
          event.firstSeq,
          `asked the producer to resend from ${state.expectedSeq}, it can only resend from ${event.firstSeq}`,
        );
      }
      if (event.producerNext < state.mustReach) {
        throw new RemoteEdgeSequenceError(
          flow,
          'gap',
          state.mustReach - 1,
          event.producerNext,
          `message ${state.mustReach - 1} was received but the producer has sent only up to ${event.producerNext - 1}`,
        );
      }
      return { next: { ...state, awaitingResumed: false }, action: 'resumed' };
    }
    case 'data': {
      if (event.generation > state.generation) {
        throw new RemoteEdgeProtocolError(
          flow,
          `data of generation ${event.generation}, which was never issued (latest ${state.generation})`,
        );
      }
      if (event.generation < state.generation) return { next: state, action: 'stale' };
      const mustReach = Math.max(state.mustReach, event.seq + 1);
      if (state.awaitingResumed) return { next: { ...state, mustReach }, action: 'resume' };
      if (event.seq === state.expectedSeq) {
        return { next: { ...state, expectedSeq: event.seq + 1, mustReach }, action: 'deliver' };
      }
      if (event.seq < state.expectedSeq) {
        throw new RemoteEdgeSequenceError(
          flow,
          'duplicate',
          state.expectedSeq,
          event.seq,
          `message ${event.seq} arrived again in generation ${event.generation} (next expected ${state.expectedSeq})`,
        );
      }
      return { next: { ...state, mustReach }, action: 'resume' };
    }
    default:
      return assertNever(event, 'sequence event');
  }
}
