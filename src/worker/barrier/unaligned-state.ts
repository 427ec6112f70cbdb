/**
 * Unaligned exactly-once checkpoints as a pure state machine (same shape as alignment-state.ts:
 * state + event → next state + effects; no I/O, no clock, no mutation).
 *
 * This is Chandy-Lamport's snapshot with channel state, on the input side: the task snapshots
 * its operators as soon as the FIRST barrier of a checkpoint arrives (on any channel) and
 * forwards the barrier at once — no channel is ever blocked. The records that arrive afterwards
 * on channels that have not yet delivered that barrier were in flight at the cut: they are
 * processed normally AND recorded as the checkpoint's channel state. Once the barrier has
 * arrived on every live channel the channel state is complete and the snapshot can be
 * persisted. On restore, the recorded records are replayed into the operators before any new
 * input, so every record is reflected exactly once.
 *
 * The barrier overtakes the frames already in a ring (priority slot, channel-reader.ts): the
 * frames it passed come with it and are recorded by the task before this machine sees the
 * barrier; this machine only decides when recording the channels that follow starts and ends.
 *
 * States:
 * - `idle`: no checkpoint in progress.
 * - `recording`: barrier `barrier.checkpointId` triggered on its first channel; `recording` are
 *   the live channels whose barrier has not arrived yet (their records are channel state).
 *
 * Rules:
 * - First barrier of a checkpoint newer than anything seen: trigger (snapshot + forward), then
 *   start recording every other live channel; with one live channel the checkpoint is complete
 *   at once (trigger + finish, nothing recorded).
 * - Its barrier on a recording channel: stop recording that channel; on the last one: finish.
 * - A newer barrier while recording: the older checkpoint is subsumed (abort, recording
 *   dropped) and the newer one starts with this barrier.
 * - A barrier not newer than the latest seen: a leftover; ignored.
 * - Cancel marker for the recording checkpoint: abort (origin upstream). For a newer one: abort
 *   the current ('subsumed'), then the newer ('upstream'). Older: ignored.
 * - EndOfPartition on a recording channel: it counts as having delivered the barrier (FLIP-147,
 *   checkpoints after tasks finish): its producer snapshotted this checkpoint as a finished task,
 *   with its final state, so every record it sent and this task has not processed before the
 *   cut is in flight — already recorded. Stop recording it; on the last one: finish.
 */

import type { CheckpointBarrier } from '../../channels/frame.js';
import { assertNever } from '../../util/assert-never.js';
import type { BarrierEffect } from './barrier-effect.js';
import {
  acceptBarrier,
  checkCancelMarker,
  createInputChannels,
  endChannel,
  type InputChannels,
} from './input-channels.js';

interface UnalignedCommon {
  readonly channels: InputChannels;
  /** Highest checkpoint id triggered, aborted or recording; -1 before any. */
  readonly latestCheckpointId: number;
}

export interface UnalignedIdle extends UnalignedCommon {
  readonly state: 'idle';
}

export interface UnalignedRecording extends UnalignedCommon {
  readonly state: 'recording';
  readonly barrier: CheckpointBarrier;
  /** Live channels that have not delivered `barrier` yet; never empty. */
  readonly recording: ReadonlySet<number>;
  /** Clock reading when the first barrier arrived. */
  readonly startTimeMs: number;
}

export type UnalignedState = UnalignedIdle | UnalignedRecording;

export interface UnalignedTransition {
  readonly next: UnalignedState;
  readonly effects: readonly BarrierEffect[];
}

export function initialUnalignedState(channelCount: number): UnalignedIdle {
  return { state: 'idle', channels: createInputChannels(channelCount), latestCheckpointId: -1 };
}

export function unalignedOnBarrier(
  state: UnalignedState,
  channelIndex: number,
  barrier: CheckpointBarrier,
  nowMs: number,
): UnalignedTransition {
  const channels = acceptBarrier(state.channels, channelIndex, barrier.checkpointId);
  const id = barrier.checkpointId;
  switch (state.state) {
    case 'idle':
      if (id <= state.latestCheckpointId) return { next: { ...state, channels }, effects: [] };
      return start(channels, channelIndex, barrier, nowMs, []);
    case 'recording': {
      const current = state.barrier.checkpointId;
      if (id < current) return { next: { ...state, channels }, effects: [] };
      if (id > current) {
        return start(channels, channelIndex, barrier, nowMs, [
          { kind: 'abort-checkpoint', checkpointId: current, reason: 'subsumed', origin: 'this-task' },
        ]);
      }
      const recording = new Set(state.recording);
      recording.delete(channelIndex);
      const effects: BarrierEffect[] = [{ kind: 'stop-channel-state', checkpointId: current, channelIndex }];
      if (recording.size === 0) {
        effects.push({ kind: 'finish-channel-state', checkpointId: current });
        return { next: { state: 'idle', channels, latestCheckpointId: current }, effects };
      }
      return { next: { ...state, channels, recording }, effects };
    }
    default:
      return assertNever(state, 'unaligned state');
  }
}

export function unalignedOnCancelMarker(
  state: UnalignedState,
  channelIndex: number,
  checkpointId: number,
): UnalignedTransition {
  checkCancelMarker(state.channels, channelIndex, checkpointId);
  switch (state.state) {
    case 'idle':
      if (checkpointId <= state.latestCheckpointId) return { next: state, effects: [] };
      return {
        next: { ...state, latestCheckpointId: checkpointId },
        effects: [{ kind: 'abort-checkpoint', checkpointId, reason: 'declined', origin: 'upstream' }],
      };
    case 'recording': {
      const current = state.barrier.checkpointId;
      if (checkpointId < current) return { next: state, effects: [] };
      const next: UnalignedIdle = {
        state: 'idle',
        channels: state.channels,
        latestCheckpointId: checkpointId,
      };
      if (checkpointId === current) {
        return {
          next,
          effects: [{ kind: 'abort-checkpoint', checkpointId, reason: 'declined', origin: 'upstream' }],
        };
      }
      return {
        next,
        effects: [
          { kind: 'abort-checkpoint', checkpointId: current, reason: 'subsumed', origin: 'this-task' },
          { kind: 'abort-checkpoint', checkpointId, reason: 'declined', origin: 'upstream' },
        ],
      };
    }
    default:
      return assertNever(state, 'unaligned state');
  }
}

export function unalignedOnEndOfPartition(state: UnalignedState, channelIndex: number): UnalignedTransition {
  const channels = endChannel(state.channels, channelIndex);
  switch (state.state) {
    case 'idle':
      return { next: { ...state, channels }, effects: [] };
    case 'recording': {
      // A channel that already delivered the barrier just ends: its in-flight data is complete.
      if (!state.recording.has(channelIndex)) return { next: { ...state, channels }, effects: [] };
      const current = state.barrier.checkpointId;
      const recording = new Set(state.recording);
      recording.delete(channelIndex);
      const effects: BarrierEffect[] = [{ kind: 'stop-channel-state', checkpointId: current, channelIndex }];
      if (recording.size === 0) {
        effects.push({ kind: 'finish-channel-state', checkpointId: current });
        return { next: { state: 'idle', channels, latestCheckpointId: current }, effects };
      }
      return { next: { ...state, channels, recording }, effects };
    }
    default:
      return assertNever(state, 'unaligned state');
  }
}

function start(
  channels: InputChannels,
  channelIndex: number,
  barrier: CheckpointBarrier,
  nowMs: number,
  effects: BarrierEffect[],
): UnalignedTransition {
  const id = barrier.checkpointId;
  const recording = new Set<number>();
  for (let c = 0; c < channels.count; c++) if (c !== channelIndex && !channels.ended.has(c)) recording.add(c);
  effects.push({
    kind: 'trigger-checkpoint',
    barrier,
    metrics: { alignmentDurationMs: 0, checkpointStartDelayMs: Math.max(0, nowMs - barrier.timestamp) },
  });
  effects.push({ kind: 'start-channel-state', checkpointId: id, channels: [...recording] });
  if (recording.size === 0) {
    effects.push({ kind: 'finish-channel-state', checkpointId: id });
    return { next: { state: 'idle', channels, latestCheckpointId: id }, effects };
  }
  return {
    next: { state: 'recording', channels, latestCheckpointId: id, barrier, recording, startTimeMs: nowMs },
    effects,
  };
}
