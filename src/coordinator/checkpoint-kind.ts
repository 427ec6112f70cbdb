/** Why a checkpoint was taken. */

import type { CheckpointType } from '../channels/frame.js';
import { assertNever } from '../util/assert-never.js';

/**
 * - `periodic`: the coordinator's own schedule (`interval`).
 * - `manual`: asked for through the API; the caller awaits it.
 * - `savepoint`: a user-owned snapshot (`stopWithSavepoint`).
 * - `final`: the last checkpoint of a bounded job, after end of input, so two-phase-commit sinks
 *   commit their last data. Triggered on every task, not only on the sources.
 *
 * Every kind but `periodic` is *forced*: it ignores `interval`, `minPause` and `maxConcurrent`
 * (Flink forces savepoints the same way), because someone is waiting for exactly this one.
 */
export type CheckpointKind = 'periodic' | 'manual' | 'savepoint' | 'final';

/** The barrier's `checkpointType` for a checkpoint of `kind`. */
export function checkpointTypeOf(kind: CheckpointKind): CheckpointType {
  switch (kind) {
    case 'savepoint':
      return 'savepoint';
    case 'periodic':
    case 'manual':
    case 'final':
      return 'checkpoint';
    default:
      return assertNever(kind, 'checkpoint kind');
  }
}

export function isForcedCheckpoint(kind: CheckpointKind): boolean {
  return kind !== 'periodic';
}
