/**
 * The task side of the checkpoint protocol: what an input gate tells a barrier handler, and
 * what a barrier handler may ask of its task.
 *
 * The input gate only routes control frames (barriers, cancel markers, end of partition) to a
 * {@link BarrierHandler}; the handler decides, and acts through {@link BarrierHandlerActions}.
 * Two handlers exist: the aligning one (exactly-once, blocks channels) and the tracking one
 * (at-least-once, never blocks). Both are deterministic: given the same events and clock
 * readings they take the same actions, in the same order.
 */

import type { CheckpointBarrier } from '../../channels/frame.js';
import type { CheckpointFailureReason } from '../../errors.js';

/** Reads the time. Must be ms since the epoch (the barrier's `timestamp` clock) for start delays to mean anything. */
export interface BarrierClock {
  now(): number;
}

/** What a handler measured about one checkpoint when it triggers it. */
export interface BarrierAlignmentMetrics {
  /**
   * Time from the first barrier of the checkpoint to the last, ms, while channels were blocked.
   * 0 when nothing had to be blocked (one live input) and always 0 for the tracking handler.
   */
  readonly alignmentDurationMs: number;
  /** Time from the coordinator's trigger (`barrier.timestamp`) to this task's first barrier, ms, at least 0. */
  readonly checkpointStartDelayMs: number;
  /**
   * True when the alignment timed out (`checkpointing.alignmentTimeout`) or an upstream task's
   * unaligned barrier arrived, and this task took the checkpoint unaligned instead: the
   * alignment duration is then the time until the switch. Absent: not switched.
   */
  readonly switchedToUnaligned?: boolean;
}

/**
 * Where an abort started.
 * - `this-task`: this task decided (subsumed, end of input): decline to the coordinator and
 *   forward a cancel marker.
 * - `upstream`: an upstream task aborted first and sent a cancel marker; that task already
 *   declined to the coordinator. Forward the marker; a decline from here is redundant and, as
 *   `'declined'` counts against `tolerableFailures`, should not be sent (Flink declines with
 *   CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER, a reason that does not count; weir's
 *   {@link CheckpointFailureReason} has no such member).
 */
export type AbortOrigin = 'this-task' | 'upstream';

/**
 * Channel-state recording, for unaligned checkpoints (see unaligned-state.ts). Optional: only
 * tasks that support unaligned checkpoints implement them.
 */
export interface ChannelStateActions {
  /** From now on, records from `channels` are also recorded as in-flight data of `checkpointId`. */
  startChannelState?(checkpointId: number, channels: readonly number[]): void;
  /** Stop recording `channelIndex` for `checkpointId` (its barrier arrived). */
  stopChannelState?(checkpointId: number, channelIndex: number): void;
  /** The channel state of `checkpointId` is complete. */
  finishChannelState?(checkpointId: number): void;
}

/** What a barrier handler may ask of its task. Called synchronously, in decision order. */
export interface BarrierHandlerActions extends ChannelStateActions {
  /** Stop reading channel `channelIndex`; its frames stay in its ring (real backpressure). */
  blockChannel(channelIndex: number): void;
  unblockChannel(channelIndex: number): void;
  /** Snapshot the operators (sync part), forward the barrier on every output, start the async part. */
  triggerCheckpoint(barrier: CheckpointBarrier, metrics: BarrierAlignmentMetrics): void;
  /** Give up on a checkpoint: decline it (see {@link AbortOrigin}) and forward a CancelCheckpointMarker. */
  abortCheckpoint(checkpointId: number, reason: CheckpointFailureReason, origin: AbortOrigin): void;
}

/** A checkpoint whose barriers are arriving at this task but that has not triggered yet. */
export interface PendingBarrierCheckpoint {
  readonly checkpointId: number;
  /** Clock reading when its first barrier arrived. */
  readonly firstBarrierAtMs: number;
  /** Channels that delivered its barrier, ascending. */
  readonly channelsReceived: readonly number[];
}

/**
 * Receives the control events of one task's input gate. Every method is synchronous and throws
 * {@link BarrierProtocolError} for an event that breaks the protocol (a barrier twice on one
 * channel, barriers out of id order on one channel, anything after a channel's end of
 * partition) and `RangeError` for a channel index out of range; in both cases before any action.
 */
export interface BarrierHandler {
  onBarrier(channelIndex: number, barrier: CheckpointBarrier): void;
  onCancelMarker(channelIndex: number, checkpointId: number): void;
  onEndOfPartition(channelIndex: number): void;
  /** Checkpoints being collected, oldest first (at most one for the aligning handler). */
  pendingCheckpoints(): readonly PendingBarrierCheckpoint[];
  /** Channels this handler has blocked and not yet unblocked, ascending. */
  blockedChannels(): readonly number[];
  /** Highest checkpoint id this handler has triggered or aborted or is collecting; -1 before any. */
  readonly latestCheckpointId: number;
}
