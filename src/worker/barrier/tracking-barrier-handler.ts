/**
 * The at-least-once barrier handler (Flink's CheckpointBarrierTracker): never blocks a channel,
 * triggers a checkpoint when its barrier has arrived on every live channel. The decisions are
 * {@link trackingOnBarrier} and friends (pure); this class keeps the state, reads the clock and
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
  initialTrackingState,
  type TrackingState,
  type TrackingTransition,
  trackingOnBarrier,
  trackingOnCancelMarker,
  trackingOnEndOfPartition,
} from './tracking-state.js';

export class TrackingBarrierHandler implements BarrierHandler {
  readonly #actions: BarrierHandlerActions;
  readonly #clock: BarrierClock;
  #state: TrackingState;

  constructor(options: BarrierHandlerOptions) {
    this.#actions = options.actions;
    this.#clock = options.clock;
    this.#state = initialTrackingState(options.channelCount);
  }

  /** The current tracking state (immutable), for diagnostics and tests. */
  get state(): TrackingState {
    return this.#state;
  }

  get latestCheckpointId(): number {
    const newest = this.#state.pending.at(-1);
    return newest === undefined ? this.#state.latestCheckpointId : newest.checkpointId;
  }

  onBarrier(channelIndex: number, barrier: CheckpointBarrier): void {
    this.#apply(trackingOnBarrier(this.#state, channelIndex, barrier, this.#clock.now()));
  }

  onCancelMarker(channelIndex: number, checkpointId: number): void {
    this.#apply(trackingOnCancelMarker(this.#state, channelIndex, checkpointId, this.#clock.now()));
  }

  onEndOfPartition(channelIndex: number): void {
    this.#apply(trackingOnEndOfPartition(this.#state, channelIndex));
  }

  /** Checkpoints not yet triggered or aborted (aborted ones still swallowing barriers are left out). */
  pendingCheckpoints(): readonly PendingBarrierCheckpoint[] {
    return this.#state.pending
      .filter((p) => !p.aborted)
      .map((p) => ({
        checkpointId: p.checkpointId,
        firstBarrierAtMs: p.firstEventAtMs,
        channelsReceived: [...p.channels].sort((a, b) => a - b),
      }));
  }

  /** Always empty: tracking never blocks. */
  blockedChannels(): readonly number[] {
    return [];
  }

  #apply(transition: TrackingTransition): void {
    // Same contract as AligningBarrierHandler: state first, no synchronous re-entry from actions.
    this.#state = transition.next;
    applyBarrierEffects(transition.effects, this.#actions);
  }
}
