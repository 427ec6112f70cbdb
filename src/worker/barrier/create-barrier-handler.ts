/** Picks the barrier handler for a checkpointing mode. */

import { assertNever } from '../../channels/frame.js';
import { AligningBarrierHandler, type BarrierHandlerOptions } from './aligning-barrier-handler.js';
import type { BarrierHandler } from './barrier-handler.js';
import { TrackingBarrierHandler } from './tracking-barrier-handler.js';

export type CheckpointingMode = 'exactly-once' | 'at-least-once';

export function createBarrierHandler(
  mode: CheckpointingMode,
  options: BarrierHandlerOptions,
): BarrierHandler {
  switch (mode) {
    case 'exactly-once':
      return new AligningBarrierHandler(options);
    case 'at-least-once':
      return new TrackingBarrierHandler(options);
    default:
      return assertNever(mode, 'checkpointing mode');
  }
}
