/** Picks the barrier handler for a checkpointing mode. */

import type { CheckpointMode } from '../../api/source.js';
import { assertNever } from '../../util/assert-never.js';
import { AligningBarrierHandler, type BarrierHandlerOptions } from './aligning-barrier-handler.js';
import type { BarrierHandler } from './barrier-handler.js';
import { TrackingBarrierHandler } from './tracking-barrier-handler.js';
import { UnalignedBarrierHandler } from './unaligned-barrier-handler.js';

/** `unaligned` applies to exactly-once only (at-least-once never aligns anyway). */
export function createBarrierHandler(
  mode: CheckpointMode,
  options: BarrierHandlerOptions & { readonly unaligned?: boolean },
): BarrierHandler {
  switch (mode) {
    case 'exactly-once':
      return options.unaligned ? new UnalignedBarrierHandler(options) : new AligningBarrierHandler(options);
    case 'at-least-once':
      return new TrackingBarrierHandler(options);
    default:
      return assertNever(mode, 'checkpointing mode');
  }
}
