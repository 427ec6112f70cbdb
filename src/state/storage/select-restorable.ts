/**
 * Which checkpoint to restore: a pure decision over verifications, newest first. The storage
 * does the I/O (it yields verifications lazily, so checking stops at the first usable one);
 * the runtime acts on the decision (restore, start fresh, or fail).
 */

import type { CheckpointMetadata } from './checkpoint-metadata.js';
import { type CheckpointVerification, describeProblems } from './checkpoint-verification.js';

/** A newer checkpoint that was passed over, and why (one line per missing/corrupt piece). */
export interface SkippedCheckpoint {
  readonly checkpointId: number;
  readonly state: Exclude<CheckpointVerification['state'], 'ok'>;
  readonly problems: readonly string[];
}

export type RestoreSelection =
  /** Restore `metadata`; every chunk it references verified. `skipped` lists newer checkpoints passed over. */
  | {
      readonly state: 'found';
      readonly metadata: CheckpointMetadata;
      readonly skipped: readonly SkippedCheckpoint[];
    }
  /**
   * Nothing restorable. With `skipped` empty the directory holds no committed checkpoint (a fresh
   * start is correct); otherwise every committed checkpoint is damaged and starting fresh would
   * silently lose state, so the runtime should fail (CheckpointStorageError).
   */
  | { readonly state: 'none'; readonly skipped: readonly SkippedCheckpoint[] };

export function selectRestorable(newestFirst: Iterable<CheckpointVerification>): RestoreSelection {
  const skipped: SkippedCheckpoint[] = [];
  for (const verification of newestFirst) {
    if (verification.state === 'ok') return { state: 'found', metadata: verification.metadata, skipped };
    skipped.push({
      checkpointId: verification.checkpointId,
      state: verification.state,
      problems: describeProblems(verification),
    });
  }
  return { state: 'none', skipped };
}
