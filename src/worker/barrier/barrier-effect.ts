/**
 * The decisions of the pure barrier state machines, as values. A handler applies them, in
 * order, through {@link BarrierHandlerActions}.
 */

import type { CheckpointBarrier } from '../../channels/frame.js';
import type { CheckpointFailureReason } from '../../errors.js';
import { assertNever } from '../../util/assert-never.js';
import type {
  AbortOrigin,
  BarrierAlignmentMetrics,
  BarrierHandlerActions,
  ChannelStateActions,
} from './barrier-handler.js';

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
    }
  /** Unaligned: records from `channels` are now in-flight data of checkpoint `checkpointId`. */
  | {
      readonly kind: 'start-channel-state';
      readonly checkpointId: number;
      readonly channels: readonly number[];
    }
  /** Unaligned: `channelIndex` delivered the barrier; its in-flight data is complete. */
  | { readonly kind: 'stop-channel-state'; readonly checkpointId: number; readonly channelIndex: number }
  /** Unaligned: every channel delivered the barrier; the channel state can be persisted. */
  | { readonly kind: 'finish-channel-state'; readonly checkpointId: number };

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
      case 'start-channel-state':
        channelStateActions(actions).startChannelState(effect.checkpointId, effect.channels);
        break;
      case 'stop-channel-state':
        channelStateActions(actions).stopChannelState(effect.checkpointId, effect.channelIndex);
        break;
      case 'finish-channel-state':
        channelStateActions(actions).finishChannelState(effect.checkpointId);
        break;
      default:
        assertNever(effect, 'barrier effect');
    }
  }
}

function channelStateActions(actions: BarrierHandlerActions): Required<ChannelStateActions> {
  if (!actions.startChannelState || !actions.stopChannelState || !actions.finishChannelState) {
    throw new Error('unaligned checkpoints need a task that records channel state');
  }
  return actions as Required<ChannelStateActions>;
}
