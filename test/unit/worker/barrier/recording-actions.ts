/**
 * Test double for BarrierHandlerActions: records every action in order and keeps the gate's
 * view of blocked channels. Blocking a blocked channel or unblocking an unblocked one throws:
 * handlers must keep the gate's state exact.
 */

import type { CheckpointBarrier } from '../../../../src/channels/frame.js';
import type { CheckpointFailureReason } from '../../../../src/errors.js';
import type {
  AbortOrigin,
  BarrierAlignmentMetrics,
  BarrierHandlerActions,
} from '../../../../src/worker/barrier/barrier-handler.js';

export interface TriggerRecord {
  readonly barrier: CheckpointBarrier;
  readonly metrics: BarrierAlignmentMetrics;
}

export interface AbortRecord {
  readonly checkpointId: number;
  readonly reason: CheckpointFailureReason;
  readonly origin: AbortOrigin;
}

export class RecordingActions implements BarrierHandlerActions {
  /** `block 0`, `unblock 0`, `trigger 1`, `abort 1 subsumed this-task`. */
  readonly log: string[] = [];
  readonly blocked = new Set<number>();
  readonly triggered: TriggerRecord[] = [];
  readonly aborted: AbortRecord[] = [];
  /** Called on every trigger, before it is recorded. */
  onTrigger: (barrier: CheckpointBarrier) => void = () => {};

  blockChannel(channelIndex: number): void {
    if (this.blocked.has(channelIndex)) throw new Error(`channel ${channelIndex} blocked twice`);
    this.blocked.add(channelIndex);
    this.log.push(`block ${channelIndex}`);
  }

  unblockChannel(channelIndex: number): void {
    if (!this.blocked.delete(channelIndex))
      throw new Error(`channel ${channelIndex} unblocked but not blocked`);
    this.log.push(`unblock ${channelIndex}`);
  }

  triggerCheckpoint(barrier: CheckpointBarrier, metrics: BarrierAlignmentMetrics): void {
    this.onTrigger(barrier);
    this.triggered.push({ barrier, metrics });
    this.log.push(`trigger ${barrier.checkpointId}`);
  }

  abortCheckpoint(checkpointId: number, reason: CheckpointFailureReason, origin: AbortOrigin): void {
    this.aborted.push({ checkpointId, reason, origin });
    this.log.push(`abort ${checkpointId} ${reason} ${origin}`);
  }

  /** Returns the log so far and clears it. */
  take(): string[] {
    return this.log.splice(0);
  }
}

/** RecordingActions plus channel-state recording, logged in the same order. */
export class UnalignedActions extends RecordingActions {
  /** checkpoint id → channels currently recorded. */
  readonly recording = new Map<number, Set<number>>();
  readonly finished: number[] = [];
  startChannelState(checkpointId: number, channels: readonly number[]): void {
    this.recording.set(checkpointId, new Set(channels));
    this.log.push(`start ${checkpointId} [${channels.join(',')}]`);
  }
  stopChannelState(checkpointId: number, channelIndex: number): void {
    const set = this.recording.get(checkpointId);
    if (!set?.delete(channelIndex)) throw new Error(`stop ${checkpointId}/${channelIndex} not recording`);
    this.log.push(`stop ${checkpointId} ${channelIndex}`);
  }
  finishChannelState(checkpointId: number): void {
    const set = this.recording.get(checkpointId);
    if (!set || set.size > 0) throw new Error(`finish ${checkpointId} with channels still recording`);
    this.recording.delete(checkpointId);
    this.finished.push(checkpointId);
    this.log.push(`finish ${checkpointId}`);
  }
  override abortCheckpoint(...args: Parameters<RecordingActions['abortCheckpoint']>): void {
    this.recording.delete(args[0]);
    super.abortCheckpoint(...args);
  }
}

export function barrier(checkpointId: number, timestamp = 0): CheckpointBarrier {
  return { kind: 'barrier', checkpointId, timestamp, checkpointType: 'checkpoint', unaligned: false };
}

/** A clock the test sets by hand. */
export class ManualClock {
  constructor(public nowMs = 0) {}
  now(): number {
    return this.nowMs;
  }
}
