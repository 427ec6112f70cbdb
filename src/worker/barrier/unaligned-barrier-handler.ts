/**
 * The unaligned exactly-once barrier handler: triggers on the first barrier of a checkpoint and
 * records the other channels' in-flight records until their barriers arrive. The decisions are
 * {@link unalignedOnBarrier} and friends (pure); this class keeps the state, reads the clock and
 * applies the effects.
 */

import type { CheckpointBarrier } from '../../channels/frame.js';
import type { BarrierHandlerOptions } from './aligning-barrier-handler.js';
import { applyBarrierEffects } from './barrier-effect.js';
import type {
  BarrierClock,
  BarrierHandler,
  BarrierHandlerActions,
  PendingBarrierCheckpoint,
} from './barrier-handler.js';
import {
  initialUnalignedState,
  type UnalignedState,
  type UnalignedTransition,
  unalignedOnBarrier,
  unalignedOnCancelMarker,
  unalignedOnEndOfPartition,
} from './unaligned-state.js';

export class UnalignedBarrierHandler implements BarrierHandler {
  readonly #actions: BarrierHandlerActions;
  readonly #clock: BarrierClock;
  #state: UnalignedState;

  constructor(options: BarrierHandlerOptions) {
    this.#actions = options.actions;
    this.#clock = options.clock;
    this.#state = initialUnalignedState(options.channelCount);
  }

  get state(): UnalignedState {
    return this.#state;
  }

  get latestCheckpointId(): number {
    return this.#state.latestCheckpointId;
  }

  onBarrier(channelIndex: number, barrier: CheckpointBarrier): void {
    this.#apply(unalignedOnBarrier(this.#state, channelIndex, barrier, this.#clock.now()));
  }

  onCancelMarker(channelIndex: number, checkpointId: number): void {
    this.#apply(unalignedOnCancelMarker(this.#state, channelIndex, checkpointId));
  }

  onEndOfPartition(channelIndex: number): void {
    this.#apply(unalignedOnEndOfPartition(this.#state, channelIndex));
  }

  pendingCheckpoints(): readonly PendingBarrierCheckpoint[] {
    const s = this.#state;
    if (s.state !== 'recording') return [];
    const received: number[] = [];
    for (let c = 0; c < s.channels.count; c++)
      if (!s.recording.has(c) && !s.channels.ended.has(c)) received.push(c);
    return [
      { checkpointId: s.barrier.checkpointId, firstBarrierAtMs: s.startTimeMs, channelsReceived: received },
    ];
  }

  /** Never blocks. */
  blockedChannels(): readonly number[] {
    return [];
  }

  #apply(transition: UnalignedTransition): void {
    this.#state = transition.next;
    applyBarrierEffects(transition.effects, this.#actions);
  }
}
