/**
 * Aligned checkpoints with an alignment timeout (Flink's `aligned-checkpoint-timeout`), as a pure
 * state machine of the same shape as alignment-state.ts: state + event (+ the clock reading and
 * the timeout, passed in) → next state + effects. No I/O, no clock, no mutation.
 *
 * A checkpoint starts aligned (alignment-state.ts). When its alignment at this task has lasted
 * `timeoutMs` — measured from its first barrier here — it switches, at this task and for this
 * checkpoint only, to unaligned (unaligned-state.ts):
 * - trigger now (snapshot the operators, forward the barrier marked `unaligned`), then record the
 *   live channels whose barrier has not arrived as the checkpoint's channel state, then unblock
 *   the blocked channels. Their queued records follow the barrier: they belong to the next
 *   checkpoint and are not recorded. The order matters: the snapshot is taken before any record
 *   of a blocked channel is read.
 * - from then on, the unaligned rules apply until the checkpoint's barrier (or end of partition)
 *   arrived on every recorded channel; the next checkpoint starts aligned again.
 *
 * So a stalled input no longer holds the task's other inputs: they flow as soon as the timeout
 * expires. The checkpoint still completes only once the stalled channel's barrier arrives (weir's
 * barriers do not overtake the frames queued in a ring), but the task no longer waits for it.
 *
 * Further rules:
 * - A barrier marked `unaligned` (an upstream task switched, or an unaligned checkpoint) switches
 *   at once when it would start or continue an alignment: the checkpoint is unaligned anyway and
 *   waiting for the timeout again at every task would only add up (Flink does the same).
 * - Savepoints never switch: they stay aligned (Flink's rule: a savepoint has no channel state).
 * - `timeoutMs` 0 switches every checkpoint that has to align at its first barrier.
 * - The timeout is checked on every event and by {@link timeoutOnTimer}, which the task calls
 *   once {@link alignmentDeadline} has passed; a late check switches late, never wrongly.
 * - In the switched phase a newer barrier subsumes the recording checkpoint (abort, its channel
 *   state is dropped) and starts aligning the newer one; cancel markers and end of partition
 *   follow the unaligned rules.
 */

import type { CheckpointBarrier } from '../../channels/frame.js';
import { assertNever } from '../../util/assert-never.js';
import {
  type AlignmentState,
  alignmentOnBarrier,
  alignmentOnCancelMarker,
  alignmentOnEndOfPartition,
  type CollectingBarriers,
  initialAlignmentState,
  type WaitingForFirstBarrier,
} from './alignment-state.js';
import type { BarrierEffect } from './barrier-effect.js';
import {
  type UnalignedRecording,
  type UnalignedState,
  unalignedOnBarrier,
  unalignedOnCancelMarker,
  unalignedOnEndOfPartition,
} from './unaligned-state.js';

/**
 * `waiting-for-first-barrier` and `collecting-barriers` as in alignment-state.ts; `recording`:
 * the checkpoint switched to unaligned at this task (unaligned-state.ts's recording state).
 */
export type TimeoutAlignmentState = AlignmentState | UnalignedRecording;

export interface TimeoutAlignmentTransition {
  readonly next: TimeoutAlignmentState;
  readonly effects: readonly BarrierEffect[];
}

export function initialTimeoutAlignmentState(channelCount: number): WaitingForFirstBarrier {
  return initialAlignmentState(channelCount);
}

/** When the alignment in progress times out (ms, the handler's clock); Infinity when none can. */
export function alignmentDeadline(state: TimeoutAlignmentState, timeoutMs: number): number {
  if (state.state !== 'collecting-barriers' || !switchable(state.barrier)) return Infinity;
  return state.startTimeMs + timeoutMs;
}

export function timeoutOnBarrier(
  state: TimeoutAlignmentState,
  channelIndex: number,
  barrier: CheckpointBarrier,
  nowMs: number,
  timeoutMs: number,
): TimeoutAlignmentTransition {
  switch (state.state) {
    case 'waiting-for-first-barrier':
    case 'collecting-barriers':
      return afterBarrier(alignmentOnBarrier(state, channelIndex, barrier, nowMs), barrier, nowMs, timeoutMs);
    case 'recording': {
      const current = state.barrier.checkpointId;
      if (barrier.checkpointId > current) {
        // Subsumed while recording: drop it, then align the newer one from scratch. The alignment
        // transition checks the barrier against the channels as they were (nothing accepted yet).
        const aligned = alignmentOnBarrier(
          { state: 'waiting-for-first-barrier', channels: state.channels, latestCheckpointId: current },
          channelIndex,
          barrier,
          nowMs,
        );
        const switched = afterBarrier(aligned, barrier, nowMs, timeoutMs);
        return {
          next: switched.next,
          effects: [
            { kind: 'abort-checkpoint', checkpointId: current, reason: 'subsumed', origin: 'this-task' },
            ...switched.effects,
          ],
        };
      }
      return fromUnaligned(unalignedOnBarrier(state, channelIndex, barrier, nowMs));
    }
    default:
      return assertNever(state, 'alignment state');
  }
}

export function timeoutOnCancelMarker(
  state: TimeoutAlignmentState,
  channelIndex: number,
  checkpointId: number,
): TimeoutAlignmentTransition {
  switch (state.state) {
    case 'waiting-for-first-barrier':
    case 'collecting-barriers':
      return alignmentOnCancelMarker(state, channelIndex, checkpointId);
    case 'recording':
      return fromUnaligned(unalignedOnCancelMarker(state, channelIndex, checkpointId));
    default:
      return assertNever(state, 'alignment state');
  }
}

export function timeoutOnEndOfPartition(
  state: TimeoutAlignmentState,
  channelIndex: number,
  nowMs: number,
  timeoutMs: number,
): TimeoutAlignmentTransition {
  switch (state.state) {
    case 'waiting-for-first-barrier':
    case 'collecting-barriers':
      return afterAligned(alignmentOnEndOfPartition(state, channelIndex, nowMs), nowMs, timeoutMs, false);
    case 'recording':
      return fromUnaligned(unalignedOnEndOfPartition(state, channelIndex));
    default:
      return assertNever(state, 'alignment state');
  }
}

/** The clock moved: switches the alignment in progress if it has lasted `timeoutMs`. */
export function timeoutOnTimer(
  state: TimeoutAlignmentState,
  nowMs: number,
  timeoutMs: number,
): TimeoutAlignmentTransition {
  return afterAligned({ next: state, effects: [] }, nowMs, timeoutMs, false);
}

/** After an aligned transition on `barrier`: an unaligned barrier of the collected checkpoint forces the switch. */
function afterBarrier(
  t: { readonly next: TimeoutAlignmentState; readonly effects: readonly BarrierEffect[] },
  barrier: CheckpointBarrier,
  nowMs: number,
  timeoutMs: number,
): TimeoutAlignmentTransition {
  const s = t.next;
  const force =
    barrier.unaligned && s.state === 'collecting-barriers' && s.barrier.checkpointId === barrier.checkpointId;
  return afterAligned(t, nowMs, timeoutMs, force);
}

/**
 * Applies the switch to a transition that landed in `collecting-barriers`, if due: the timeout
 * elapsed, or `force` (an unaligned barrier of that checkpoint arrived).
 */
function afterAligned(
  t: { readonly next: TimeoutAlignmentState; readonly effects: readonly BarrierEffect[] },
  nowMs: number,
  timeoutMs: number,
  force: boolean,
): TimeoutAlignmentTransition {
  const s = t.next;
  if (s.state !== 'collecting-barriers' || !switchable(s.barrier)) return t;
  if (!force && nowMs - s.startTimeMs < timeoutMs) return t;
  const switched = switchToUnaligned(s, nowMs);
  return { next: switched.next, effects: [...t.effects, ...switched.effects] };
}

/** Savepoints stay aligned. */
/**
 * Which in-band barriers the task should pull ahead of the frames queued before them in its input
 * rings, and on which channels (null: none). Only a switched checkpoint (`recording`) pulls: its
 * barrier on every channel still recorded. Waiting for those channels to drain up to their
 * barrier is what kept a switched checkpoint pending; pulled (ChannelReader.pullBarrier), the
 * barrier overtakes, the records before it becoming channel state as for an unaligned barrier.
 * Before the switch barriers travel in band, as aligned ones do. (Pulling, as Flink does, any
 * barrier whose trigger is older than the timeout would also cut the first barrier's wait behind a
 * full ring, but it switches checkpoints that are merely slow under load; not done.)
 */
export interface BarrierPull {
  readonly channels: readonly number[];
  readonly match: (barrier: CheckpointBarrier) => boolean;
}

export function barriersToPull(state: TimeoutAlignmentState): BarrierPull | null {
  if (state.state !== 'recording') return null;
  const id = state.barrier.checkpointId;
  return { channels: [...state.recording], match: (b) => b.checkpointId === id };
}

function switchable(barrier: CheckpointBarrier): boolean {
  return barrier.checkpointType === 'checkpoint';
}

function switchToUnaligned(s: CollectingBarriers, nowMs: number): TimeoutAlignmentTransition {
  const barrier: CheckpointBarrier = { ...s.barrier, unaligned: true };
  const recording = new Set<number>();
  for (let c = 0; c < s.channels.count; c++)
    if (!s.seenChannels.has(c) && !s.channels.ended.has(c)) recording.add(c);
  // Invariant of collecting-barriers: fewer seen channels than live ones, so `recording` is not empty.
  if (recording.size === 0) {
    throw new Error(`alignment of checkpoint ${s.barrier.checkpointId} has no channel left to record`);
  }
  const effects: BarrierEffect[] = [
    {
      kind: 'trigger-checkpoint',
      barrier,
      metrics: {
        alignmentDurationMs: Math.max(0, nowMs - s.startTimeMs),
        checkpointStartDelayMs: Math.max(0, s.startTimeMs - s.barrier.timestamp),
        switchedToUnaligned: true,
      },
    },
    { kind: 'start-channel-state', checkpointId: barrier.checkpointId, channels: [...recording] },
  ];
  for (const c of [...s.seenChannels].sort((a, b) => a - b))
    effects.push({ kind: 'unblock-channel', channelIndex: c });
  return {
    next: {
      state: 'recording',
      channels: s.channels,
      latestCheckpointId: s.latestCheckpointId,
      barrier,
      recording,
      startTimeMs: s.startTimeMs,
    },
    effects,
  };
}

/** An unaligned transition, with its `idle` state read as aligned `waiting-for-first-barrier`. */
function fromUnaligned(t: { readonly next: UnalignedState; readonly effects: readonly BarrierEffect[] }) {
  const s = t.next;
  if (s.state === 'recording') return { next: s, effects: t.effects };
  return {
    next: {
      state: 'waiting-for-first-barrier',
      channels: s.channels,
      latestCheckpointId: s.latestCheckpointId,
    } satisfies WaitingForFirstBarrier,
    effects: t.effects,
  };
}
