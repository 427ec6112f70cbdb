/** Picks the barrier handler for a checkpointing mode. */

import type { CheckpointMode } from '../../api/source.js';
import { assertNever } from '../../util/assert-never.js';
import { AligningBarrierHandler, type BarrierHandlerOptions } from './aligning-barrier-handler.js';
import { AlternatingBarrierHandler } from './alternating-barrier-handler.js';
import type { BarrierHandler } from './barrier-handler.js';
import { TrackingBarrierHandler } from './tracking-barrier-handler.js';
import { UnalignedBarrierHandler } from './unaligned-barrier-handler.js';

/**
 * `unaligned` and `alignmentTimeoutMs` apply to exactly-once only (at-least-once never aligns
 * anyway); `unaligned` wins over a timeout (job options reject the pair).
 */
export function createBarrierHandler(
  mode: CheckpointMode,
  options: BarrierHandlerOptions & { readonly unaligned?: boolean; readonly alignmentTimeoutMs?: number },
): BarrierHandler {
  switch (mode) {
    case 'exactly-once':
      if (options.unaligned) return new UnalignedBarrierHandler(options);
      if (options.alignmentTimeoutMs !== undefined)
        return new AlternatingBarrierHandler({ ...options, alignmentTimeoutMs: options.alignmentTimeoutMs });
      return new AligningBarrierHandler(options);
    case 'at-least-once':
      return new TrackingBarrierHandler(options);
    default:
      return assertNever(mode, 'checkpointing mode');
  }
}
