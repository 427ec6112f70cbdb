/**
 * Barrier alignment (exactly-once) as a pure state machine: each handler takes the current
 * state and one control event and returns the next state plus the effects to carry out. No
 * I/O, no clock (the caller passes `nowMs`), no mutation.
 *
 * States:
 * - `waiting-for-first-barrier`: no checkpoint in progress, no channel blocked.
 * - `collecting-barriers`: barrier `barrier.checkpointId` arrived on `seenChannels`, which are
 *   exactly the blocked channels; waiting for it on every other live channel.
 *
 * Rules (Flink's SingleCheckpointBarrierHandler with checkpoints after tasks finish enabled):
 * - Barrier `id` on channel c, `id` newer than anything seen: start aligning — block c, or
 *   trigger at once when c is the only live channel (a one-input task never blocks).
 * - The barrier of the checkpoint being aligned on c: block c; when it has arrived on every live
 *   channel, trigger, then unblock every blocked channel. The last channel is never blocked.
 * - A newer barrier while aligning: the older checkpoint is subsumed — abort it ('subsumed'),
 *   unblock, and start aligning the newer one with this barrier as its first.
 * - A barrier not newer than the latest checkpoint seen (triggered, aborted or in progress) on a
 *   channel that has not delivered it: a leftover of a finished or aborted checkpoint; ignored.
 * - Cancel marker for the checkpoint being aligned: abort it (origin 'upstream'), unblock.
 *   For a newer checkpoint: abort the one being aligned ('subsumed'), then abort the newer one
 *   (origin 'upstream') so downstream tasks learn of it, and ignore its barriers from now on.
 *   For an older or finished one: ignored (every upstream sends one per channel).
 * - EndOfPartition while aligning: the ended channel counts as aligned (Flink's FLIP-147,
 *   checkpoints after tasks finish). Everything its producer sent precedes the end, and that
 *   producer's snapshot of this checkpoint is its final state (taken directly, as a finished
 *   task, without a barrier), so the cut is consistent. When the barrier has then arrived on
 *   every channel still live, trigger and unblock; otherwise keep collecting. Ended channels
 *   never count again. (Before FLIP-147 the checkpoint was aborted, which stopped every
 *   checkpoint after the first producer ended: one source subtask without input was enough.)
 * - Protocol violations (see {@link acceptBarrier}) throw before any effect.
 */

import type { CheckpointBarrier } from '../../channels/frame.js';
import { BarrierProtocolError } from '../../errors.js';
import { assertNever } from '../../util/assert-never.js';
import type { BarrierEffect } from './barrier-effect.js';
import {
  acceptBarrier,
  checkCancelMarker,
  createInputChannels,
  endChannel,
  type InputChannels,
  liveChannelCount,
} from './input-channels.js';

interface AlignmentCommon {
  readonly channels: InputChannels;
  /** Highest checkpoint id triggered, aborted or being aligned; -1 before any. Older barriers are ignored. */
  readonly latestCheckpointId: number;
}

export interface WaitingForFirstBarrier extends AlignmentCommon {
  readonly state: 'waiting-for-first-barrier';
}

export interface CollectingBarriers extends AlignmentCommon {
  readonly state: 'collecting-barriers';
  /** The first barrier that arrived; the one forwarded when the checkpoint triggers. */
  readonly barrier: CheckpointBarrier;
  /** Channels that delivered `barrier.checkpointId`. Invariant: these are exactly the blocked channels, all live. */
  readonly seenChannels: ReadonlySet<number>;
  /** Clock reading when the first barrier arrived. */
  readonly startTimeMs: number;
}

export type AlignmentState = WaitingForFirstBarrier | CollectingBarriers;

export interface AlignmentTransition {
  readonly next: AlignmentState;
  readonly effects: readonly BarrierEffect[];
}

export function initialAlignmentState(channelCount: number): WaitingForFirstBarrier {
  return {
    state: 'waiting-for-first-barrier',
    channels: createInputChannels(channelCount),
    latestCheckpointId: -1,
  };
}

export function alignmentOnBarrier(
  state: AlignmentState,
  channelIndex: number,
  barrier: CheckpointBarrier,
  nowMs: number,
): AlignmentTransition {
  const channels = acceptBarrier(state.channels, channelIndex, barrier.checkpointId);
  const id = barrier.checkpointId;
  switch (state.state) {
    case 'waiting-for-first-barrier':
      if (id <= state.latestCheckpointId) return { next: { ...state, channels }, effects: [] };
      return startAlignment(channels, channelIndex, barrier, nowMs, []);
    case 'collecting-barriers': {
      const current = state.barrier.checkpointId;
      if (id < current) return { next: { ...state, channels }, effects: [] };
      if (id > current) {
        const effects: BarrierEffect[] = [
          { kind: 'abort-checkpoint', checkpointId: current, reason: 'subsumed', origin: 'this-task' },
          ...unblockAll(state.seenChannels),
        ];
        return startAlignment(channels, channelIndex, barrier, nowMs, effects);
      }
      const seenChannels = new Set(state.seenChannels).add(channelIndex);
      if (seenChannels.size === liveChannelCount(channels)) {
        return {
          next: { state: 'waiting-for-first-barrier', channels, latestCheckpointId: current },
          effects: [
            {
              kind: 'trigger-checkpoint',
              barrier: state.barrier,
              metrics: metricsOf(state.barrier, state.startTimeMs, nowMs),
            },
            ...unblockAll(state.seenChannels),
          ],
        };
      }
      return {
        next: { ...state, channels, seenChannels },
        effects: [{ kind: 'block-channel', channelIndex }],
      };
    }
    default:
      return assertNever(state, 'alignment state');
  }
}

export function alignmentOnCancelMarker(
  state: AlignmentState,
  channelIndex: number,
  checkpointId: number,
): AlignmentTransition {
  checkCancelMarker(state.channels, channelIndex, checkpointId);
  switch (state.state) {
    case 'waiting-for-first-barrier':
      if (checkpointId <= state.latestCheckpointId) return { next: state, effects: [] };
      return {
        next: { ...state, latestCheckpointId: checkpointId },
        effects: [{ kind: 'abort-checkpoint', checkpointId, reason: 'declined', origin: 'upstream' }],
      };
    case 'collecting-barriers': {
      const current = state.barrier.checkpointId;
      if (checkpointId < current) return { next: state, effects: [] };
      const next: WaitingForFirstBarrier = {
        state: 'waiting-for-first-barrier',
        channels: state.channels,
        latestCheckpointId: checkpointId,
      };
      if (checkpointId === current) {
        return {
          next,
          effects: [
            { kind: 'abort-checkpoint', checkpointId, reason: 'declined', origin: 'upstream' },
            ...unblockAll(state.seenChannels),
          ],
        };
      }
      return {
        next,
        effects: [
          { kind: 'abort-checkpoint', checkpointId: current, reason: 'subsumed', origin: 'this-task' },
          ...unblockAll(state.seenChannels),
          { kind: 'abort-checkpoint', checkpointId, reason: 'declined', origin: 'upstream' },
        ],
      };
    }
    default:
      return assertNever(state, 'alignment state');
  }
}

export function alignmentOnEndOfPartition(
  state: AlignmentState,
  channelIndex: number,
  nowMs: number,
): AlignmentTransition {
  const channels = endChannel(state.channels, channelIndex);
  switch (state.state) {
    case 'waiting-for-first-barrier':
      return { next: { ...state, channels }, effects: [] };
    case 'collecting-barriers': {
      if (state.seenChannels.has(channelIndex)) {
        // The gate never reads a blocked channel, and a channel is blocked once it delivered
        // the barrier: its end can only come after the checkpoint triggered.
        throw new BarrierProtocolError(
          channelIndex,
          state.barrier.checkpointId,
          'end of partition arrived on a channel blocked for alignment',
        );
      }
      if (state.seenChannels.size < liveChannelCount(channels))
        return { next: { ...state, channels }, effects: [] };
      return {
        next: { state: 'waiting-for-first-barrier', channels, latestCheckpointId: state.latestCheckpointId },
        effects: [
          {
            kind: 'trigger-checkpoint',
            barrier: state.barrier,
            metrics: metricsOf(state.barrier, state.startTimeMs, nowMs),
          },
          ...unblockAll(state.seenChannels),
        ],
      };
    }
    default:
      return assertNever(state, 'alignment state');
  }
}

/** `barrier` is the first of its checkpoint and newer than anything seen; nothing is blocked. */
function startAlignment(
  channels: InputChannels,
  channelIndex: number,
  barrier: CheckpointBarrier,
  nowMs: number,
  effects: BarrierEffect[],
): AlignmentTransition {
  const latestCheckpointId = barrier.checkpointId;
  if (liveChannelCount(channels) === 1) {
    // The only live input: nothing to align with, so nothing is blocked.
    effects.push({ kind: 'trigger-checkpoint', barrier, metrics: metricsOf(barrier, nowMs, nowMs) });
    return { next: { state: 'waiting-for-first-barrier', channels, latestCheckpointId }, effects };
  }
  effects.push({ kind: 'block-channel', channelIndex });
  return {
    next: {
      state: 'collecting-barriers',
      channels,
      latestCheckpointId,
      barrier,
      seenChannels: new Set([channelIndex]),
      startTimeMs: nowMs,
    },
    effects,
  };
}

function unblockAll(channels: ReadonlySet<number>): BarrierEffect[] {
  return [...channels]
    .sort((a, b) => a - b)
    .map((channelIndex) => ({ kind: 'unblock-channel', channelIndex }));
}

function metricsOf(barrier: CheckpointBarrier, startTimeMs: number, nowMs: number) {
  return {
    alignmentDurationMs: Math.max(0, nowMs - startTimeMs),
    checkpointStartDelayMs: Math.max(0, startTimeMs - barrier.timestamp),
  };
}
