/**
 * The decisions of the pure barrier state machines, as values. A handler applies them, in
 * order, through {@link BarrierHandlerActions}.
 */

import type { CheckpointBarrier } from '../../channels/frame.js';
import { assertNever } from '../../channels/frame.js';
import type { CheckpointFailureReason } from '../../errors.js';
import type { AbortOrigin, BarrierAlignmentMetrics, BarrierHandlerActions } from './barrier-handler.js';

export type BarrierEffect =
  | { readonly kind: 'block-channel'; readonly channelIndex: number }
  | { readonly kind: 'unblock-channel'; readonly channelIndex: number }
  | {
      readonly kind: 'trigger-checkpoint';
      readonly barrier: CheckpointBarrier;
      readonly metrics: BarrierAlignmentMetrics;
    }
  | {
      readonly kind: 'abort-checkpoint';
      readonly checkpointId: number;
      readonly reason: CheckpointFailureReason;
      readonly origin: AbortOrigin;
    };

/** Carries out `effects` in order. */
export function applyBarrierEffects(effects: readonly BarrierEffect[], actions: BarrierHandlerActions): void {
  for (const effect of effects) {
    switch (effect.kind) {
      case 'block-channel':
        actions.blockChannel(effect.channelIndex);
        break;
      case 'unblock-channel':
        actions.unblockChannel(effect.channelIndex);
        break;
      case 'trigger-checkpoint':
        actions.triggerCheckpoint(effect.barrier, effect.metrics);
        break;
      case 'abort-checkpoint':
        actions.abortCheckpoint(effect.checkpointId, effect.reason, effect.origin);
        break;
      default:
        assertNever(effect, 'barrier effect');
    }
  }
}
