/**
 * Barrier tracking (at-least-once) as a pure state machine: never blocks a channel; counts the
 * barriers of each checkpoint and triggers it when its barrier has arrived on every live
 * channel. Records behind an early barrier flow on, so they land in this checkpoint's state and
 * may be replayed after a restore: at-least-once.
 *
 * Several checkpoints may be pending at once (ascending by id). An entry stays after it was
 * aborted (`aborted: true`) so that its late barriers are swallowed; it leaves when it or a
 * newer checkpoint *settles*: has an event (barrier or cancel marker) from every live channel.
 *
 * Rules (after Flink's CheckpointBarrierTracker, made exact where Flink is lossy):
 * - A barrier newer than every pending checkpoint starts tracking one; the barrier of a pending
 *   one adds its channel; any other barrier (up to `latestCheckpointId`, or older than a pending
 *   one and unknown, so skipped by a channel and unable to complete) is ignored.
 * - When a checkpoint settles it triggers (unless aborted), and every older pending checkpoint is
 *   aborted first ('subsumed'): some live channel passed it without its barrier, so it can never
 *   complete. The checkpoint and all older ones leave.
 * - Cancel marker for checkpoint k on channel c (k newer than `latestCheckpointId`): abort k
 *   (origin 'upstream'), and abort ('subsumed') the older pending checkpoints c did not deliver
 *   (c passed them, so they can never complete). Older ones c did deliver may still complete;
 *   Flink aborts them too, which loses checkpoints for no reason.
 * - EndOfPartition on c: c no longer counts, for pending checkpoints too (FLIP-147, checkpoints
 *   after tasks finish): its producer snapshotted them as a finished task, with its final state,
 *   so every record c carried is covered. A pending checkpoint that now has an event from every
 *   live channel settles. (Before, the ones c did not deliver were aborted.)
 */

import type { CheckpointBarrier } from '../../channels/frame.js';
import type { BarrierEffect } from './barrier-effect.js';
import {
  acceptBarrier,
  checkCancelMarker,
  createInputChannels,
  endChannel,
  type InputChannels,
  liveChannelCount,
} from './input-channels.js';

export interface TrackedCheckpoint {
  readonly checkpointId: number;
  /** The first barrier that arrived, forwarded on trigger; undefined if only cancel markers came. */
  readonly barrier: CheckpointBarrier | undefined;
  /** Live channels that delivered its barrier or cancel marker. */
  readonly channels: ReadonlySet<number>;
  /** Clock reading at its first barrier or cancel marker. */
  readonly firstEventAtMs: number;
  /** Aborted already (no trigger, no second abort); kept to swallow its late barriers. */
  readonly aborted: boolean;
}

export interface TrackingState {
  readonly channels: InputChannels;
  /** Ascending by checkpoint id; every id is greater than `latestCheckpointId`. */
  readonly pending: readonly TrackedCheckpoint[];
  /** Highest checkpoint id settled (triggered or removed); -1 before any. Events up to it are ignored. */
  readonly latestCheckpointId: number;
}

export interface TrackingTransition {
  readonly next: TrackingState;
  readonly effects: readonly BarrierEffect[];
}

export function initialTrackingState(channelCount: number): TrackingState {
  return { channels: createInputChannels(channelCount), pending: [], latestCheckpointId: -1 };
}

export function trackingOnBarrier(
  state: TrackingState,
  channelIndex: number,
  barrier: CheckpointBarrier,
  nowMs: number,
): TrackingTransition {
  const channels = acceptBarrier(state.channels, channelIndex, barrier.checkpointId);
  const id = barrier.checkpointId;
  const ignore = { next: { ...state, channels }, effects: [] };
  if (id <= state.latestCheckpointId) return ignore;
  const at = state.pending.findIndex((p) => p.checkpointId === id);
  let pending: TrackedCheckpoint[];
  if (at >= 0) {
    const p = state.pending[at];
    pending = state.pending.with(at, {
      ...p,
      barrier: p.barrier ?? barrier,
      channels: new Set(p.channels).add(channelIndex),
    });
  } else if (id > (state.pending.at(-1)?.checkpointId ?? -1)) {
    pending = [
      ...state.pending,
      { checkpointId: id, barrier, channels: new Set([channelIndex]), firstEventAtMs: nowMs, aborted: false },
    ];
  } else {
    return ignore;
  }
  return settle({ ...state, channels, pending }, []);
}

export function trackingOnCancelMarker(
  state: TrackingState,
  channelIndex: number,
  checkpointId: number,
  nowMs: number,
): TrackingTransition {
  checkCancelMarker(state.channels, channelIndex, checkpointId);
  if (checkpointId <= state.latestCheckpointId) return { next: state, effects: [] };
  const effects: BarrierEffect[] = [];
  const pending: TrackedCheckpoint[] = [];
  let found = false;
  for (const p of state.pending) {
    if (p.checkpointId === checkpointId) {
      found = true;
      if (!p.aborted) effects.push(abortEffect(p.checkpointId, 'declined', 'upstream'));
      pending.push({ ...p, channels: new Set(p.channels).add(channelIndex), aborted: true });
    } else if (p.checkpointId < checkpointId && !p.aborted && !p.channels.has(channelIndex)) {
      effects.push(abortEffect(p.checkpointId, 'subsumed', 'this-task'));
      pending.push({ ...p, aborted: true });
    } else {
      pending.push(p);
    }
  }
  if (!found) {
    effects.push(abortEffect(checkpointId, 'declined', 'upstream'));
    pending.push({
      checkpointId,
      barrier: undefined,
      channels: new Set([channelIndex]),
      firstEventAtMs: nowMs,
      aborted: true,
    });
    pending.sort((a, b) => a.checkpointId - b.checkpointId);
  }
  return settle({ ...state, pending }, effects);
}

export function trackingOnEndOfPartition(state: TrackingState, channelIndex: number): TrackingTransition {
  const channels = endChannel(state.channels, channelIndex);
  const pending = state.pending.map((p): TrackedCheckpoint => {
    if (!p.channels.has(channelIndex)) return p;
    const rest = new Set(p.channels);
    rest.delete(channelIndex);
    return { ...p, channels: rest };
  });
  return settle({ ...state, channels, pending }, []);
}

/**
 * Settles the newest pending checkpoint that has an event from every live channel, if any:
 * aborts the older ones that are still live, triggers it unless aborted, drops them all.
 */
function settle(state: TrackingState, effects: BarrierEffect[]): TrackingTransition {
  const live = liveChannelCount(state.channels);
  const at = state.pending.findLastIndex((p) => p.channels.size >= live);
  if (at < 0) return { next: state, effects };
  const done = state.pending[at];
  for (const older of state.pending.slice(0, at)) {
    if (!older.aborted) effects.push(abortEffect(older.checkpointId, 'subsumed', 'this-task'));
  }
  if (!done.aborted && done.barrier !== undefined) {
    effects.push({
      kind: 'trigger-checkpoint',
      barrier: done.barrier,
      metrics: {
        alignmentDurationMs: 0,
        checkpointStartDelayMs: Math.max(0, done.firstEventAtMs - done.barrier.timestamp),
      },
    });
  }
  return {
    next: { ...state, pending: state.pending.slice(at + 1), latestCheckpointId: done.checkpointId },
    effects,
  };
}

function abortEffect(
  checkpointId: number,
  reason: 'declined' | 'subsumed',
  origin: 'this-task' | 'upstream',
): BarrierEffect {
  return { kind: 'abort-checkpoint', checkpointId, reason, origin };
}
