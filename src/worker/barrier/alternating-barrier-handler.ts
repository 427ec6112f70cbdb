/**
 * The exactly-once barrier handler with an alignment timeout (`checkpointing.alignmentTimeout`):
 * aligns like {@link AligningBarrierHandler}, and switches a checkpoint whose alignment at this
 * task lasted `alignmentTimeoutMs` to unaligned (Flink's alternating aligned/unaligned
 * controller). The decisions are {@link timeoutOnBarrier} and friends (pure); this class keeps the
 * state, reads the clock and applies the effects.
 *
 * Nothing here runs by itself: the task calls {@link onAlignmentTimer} when
 * {@link msUntilAlignmentTimeout} has passed (it parks no longer than that), and every event
 * checks the timeout too.
 */

import type { CheckpointBarrier } from '../../channels/frame.js';
import { assertNever } from '../../util/assert-never.js';
import type { BarrierHandlerOptions } from './aligning-barrier-handler.js';
import {
  alignmentDeadline,
  type BarrierPull,
  barriersToPull,
  initialTimeoutAlignmentState,
  type TimeoutAlignmentState,
  type TimeoutAlignmentTransition,
  timeoutOnBarrier,
  timeoutOnCancelMarker,
  timeoutOnEndOfPartition,
  timeoutOnTimer,
} from './alignment-timeout-state.js';
import { applyBarrierEffects } from './barrier-effect.js';
import type {
  BarrierClock,
  BarrierHandler,
  BarrierHandlerActions,
  PendingBarrierCheckpoint,
} from './barrier-handler.js';

export interface AlternatingBarrierHandlerOptions extends BarrierHandlerOptions {
  /** Alignment longer than this (ms, at least 0) switches the checkpoint to unaligned at this task. */
  readonly alignmentTimeoutMs: number;
}

export class AlternatingBarrierHandler implements BarrierHandler {
  readonly #actions: BarrierHandlerActions;
  readonly #clock: BarrierClock;
  readonly #timeoutMs: number;
  #state: TimeoutAlignmentState;

  constructor(options: AlternatingBarrierHandlerOptions) {
    const t = options.alignmentTimeoutMs;
    if (typeof t !== 'number' || !Number.isFinite(t) || t < 0) {
      throw new RangeError(`alignmentTimeoutMs must be a finite number >= 0, got ${t}`);
    }
    this.#actions = options.actions;
    this.#clock = options.clock;
    this.#timeoutMs = t;
    this.#state = initialTimeoutAlignmentState(options.channelCount);
  }

  /** The current state (immutable), for diagnostics and tests. */
  get state(): TimeoutAlignmentState {
    return this.#state;
  }

  get latestCheckpointId(): number {
    return this.#state.latestCheckpointId;
  }

  onBarrier(channelIndex: number, barrier: CheckpointBarrier): void {
    this.#apply(timeoutOnBarrier(this.#state, channelIndex, barrier, this.#clock.now(), this.#timeoutMs));
  }

  onCancelMarker(channelIndex: number, checkpointId: number): void {
    this.#apply(timeoutOnCancelMarker(this.#state, channelIndex, checkpointId));
  }

  onEndOfPartition(channelIndex: number): void {
    this.#apply(timeoutOnEndOfPartition(this.#state, channelIndex, this.#clock.now(), this.#timeoutMs));
  }

  /** Switches the alignment in progress to unaligned if it has lasted the timeout; else nothing. */
  onAlignmentTimer(): void {
    if (alignmentDeadline(this.#state, this.#timeoutMs) === Infinity) return;
    this.#apply(timeoutOnTimer(this.#state, this.#clock.now(), this.#timeoutMs));
  }

  /** In-band barriers worth pulling ahead of the ring's frames now (see {@link barriersToPull}). */
  barriersToPull(): BarrierPull | null {
    return barriersToPull(this.#state);
  }

  /** Ms until the alignment in progress times out (0 when overdue); Infinity when none is aligning. */
  msUntilAlignmentTimeout(): number {
    const deadline = alignmentDeadline(this.#state, this.#timeoutMs);
    return deadline === Infinity ? Infinity : Math.max(0, deadline - this.#clock.now());
  }

  pendingCheckpoints(): readonly PendingBarrierCheckpoint[] {
    const s = this.#state;
    switch (s.state) {
      case 'waiting-for-first-barrier':
        return [];
      case 'collecting-barriers':
        return [
          {
            checkpointId: s.barrier.checkpointId,
            firstBarrierAtMs: s.startTimeMs,
            channelsReceived: [...s.seenChannels].sort((a, b) => a - b),
          },
        ];
      case 'recording': {
        const received: number[] = [];
        for (let c = 0; c < s.channels.count; c++)
          if (!s.recording.has(c) && !s.channels.ended.has(c)) received.push(c);
        return [
          {
            checkpointId: s.barrier.checkpointId,
            firstBarrierAtMs: s.startTimeMs,
            channelsReceived: received,
          },
        ];
      }
      default:
        return assertNever(s, 'alignment state');
    }
  }

  blockedChannels(): readonly number[] {
    const s = this.#state;
    return s.state === 'collecting-barriers' ? [...s.seenChannels].sort((a, b) => a - b) : [];
  }

  #apply(transition: TimeoutAlignmentTransition): void {
    // State first, as in AligningBarrierHandler: a throwing action leaves the decided state.
    this.#state = transition.next;
    applyBarrierEffects(transition.effects, this.#actions);
  }
}
