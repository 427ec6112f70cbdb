/**
 * The exactly-once barrier handler: aligns barriers across input channels by blocking each
 * channel once it delivered the checkpoint's barrier, and triggers the checkpoint when the
 * barrier has arrived on every live channel. The decisions are {@link alignmentOnBarrier} and
 * friends (pure); this class only keeps the state, reads the clock and applies the effects.
 */

import type { CheckpointBarrier } from '../../channels/frame.js';
import {
  type AlignmentState,
  type AlignmentTransition,
  alignmentOnBarrier,
  alignmentOnCancelMarker,
  alignmentOnEndOfPartition,
  initialAlignmentState,
} from './alignment-state.js';
import { applyBarrierEffects } from './barrier-effect.js';
import type {
  BarrierClock,
  BarrierHandler,
  BarrierHandlerActions,
  PendingBarrierCheckpoint,
} from './barrier-handler.js';

export interface BarrierHandlerOptions {
  /** Number of input channels of the task's gate, at least 1. */
  readonly channelCount: number;
  readonly actions: BarrierHandlerActions;
  readonly clock: BarrierClock;
}

export class AligningBarrierHandler implements BarrierHandler {
  readonly #actions: BarrierHandlerActions;
  readonly #clock: BarrierClock;
  #state: AlignmentState;

  constructor(options: BarrierHandlerOptions) {
    this.#actions = options.actions;
    this.#clock = options.clock;
    this.#state = initialAlignmentState(options.channelCount);
  }

  /** The current alignment state (immutable), for diagnostics and tests. */
  get state(): AlignmentState {
    return this.#state;
  }

  get latestCheckpointId(): number {
    return this.#state.latestCheckpointId;
  }

  onBarrier(channelIndex: number, barrier: CheckpointBarrier): void {
    this.#apply(alignmentOnBarrier(this.#state, channelIndex, barrier, this.#clock.now()));
  }

  onCancelMarker(channelIndex: number, checkpointId: number): void {
    this.#apply(alignmentOnCancelMarker(this.#state, channelIndex, checkpointId));
  }

  onEndOfPartition(channelIndex: number): void {
    this.#apply(alignmentOnEndOfPartition(this.#state, channelIndex, this.#clock.now()));
  }

  pendingCheckpoints(): readonly PendingBarrierCheckpoint[] {
    const s = this.#state;
    if (s.state !== 'collecting-barriers') return [];
    return [
      {
        checkpointId: s.barrier.checkpointId,
        firstBarrierAtMs: s.startTimeMs,
        channelsReceived: [...s.seenChannels].sort((a, b) => a - b),
      },
    ];
  }

  blockedChannels(): readonly number[] {
    const s = this.#state;
    return s.state === 'collecting-barriers' ? [...s.seenChannels].sort((a, b) => a - b) : [];
  }

  #apply(transition: AlignmentTransition): void {
    // State first: if an action throws (a task failure), the handler still holds the decided state.
    // Actions must not call back into this handler synchronously: the remaining effects of this
    // transition would then run after those of the nested one.
    this.#state = transition.next;
    applyBarrierEffects(transition.effects, this.#actions);
  }
}
