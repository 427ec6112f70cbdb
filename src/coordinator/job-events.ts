/**
 * Payloads of the job client's restore events, the decisions a user must know about:
 * - `restored` ({@link RestoredEvent}): the run continues from a checkpoint;
 * - `fresh-start` ({@link FreshStartEvent}): `restoreFrom: 'latest'` found nothing to restore,
 *   so the run starts from the beginning (a first start, or a mistyped directory: it says which);
 * - `warning` with a {@link JobWarning}: a fallback past damaged checkpoints, state dropped with
 *   `allowNonRestoredState`, stateful operators without an explicit uid, a stop-with-savepoint
 *   that stopped before the sinks committed the savepoint.
 * `weir run` prints each of them on stderr.
 */

import type { DamagedCheckpoint, OrphanedState } from '../errors.js';

export interface RestoredEvent {
  readonly checkpointId: number;
  /** The checkpoint directory it came from. */
  readonly dir: string;
}

export interface FreshStartEvent {
  readonly dir: string;
  /**
   * `no-directory`: the checkpoint directory does not exist (a first start, or a mistyped path);
   * `empty-directory`: it exists and is empty; `no-completed-checkpoint`: it holds checkpoint
   * storage but no checkpoint completed yet.
   */
  readonly reason: 'no-directory' | 'empty-directory' | 'no-completed-checkpoint';
  /** One line for a log. */
  readonly message: string;
}

export type JobWarningDetails =
  /** Restored an older checkpoint past damaged, committed ones (allowed by the user or at-least-once). */
  | {
      readonly kind: 'fallback-past-damaged';
      readonly dir: string;
      readonly restoredCheckpointId: number;
      readonly skipped: readonly DamagedCheckpoint[];
    }
  /** State no operator takes was dropped (`allowNonRestoredState`). */
  | {
      readonly kind: 'non-restored-state';
      readonly checkpointId: number;
      readonly operators: readonly OrphanedState[];
    }
  /** Stateful operators rely on default uids (state persists across runs in this job). */
  | {
      readonly kind: 'operators-without-uid';
      readonly operators: readonly { readonly name: string; readonly kind: string; readonly uid: string }[];
    }
  /**
   * Stop-with-savepoint stopped before every committing sink committed up to the savepoint
   * (`timeout`: not within the checkpoint timeout; `task-ended`: a task failed or ended first;
   * `not-recorded`: they committed, but the savepoint could not record it).
   * The output is not lost: a run restored from the savepoint commits it (again, for
   * `not-recorded`).
   */
  | {
      readonly kind: 'savepoint-commits-pending';
      readonly checkpointId: number;
      readonly reason: 'timeout' | 'task-ended' | 'not-recorded';
    };

/** What the job client emits as `warning` for restore decisions; `details.kind` says which. */
export class JobWarning extends Error {
  readonly code = 'WEIR_JOB_WARNING';
  constructor(
    readonly details: JobWarningDetails,
    message: string,
  ) {
    super(message);
    this.name = 'JobWarning';
  }

  get kind(): JobWarningDetails['kind'] {
    return this.details.kind;
  }
}

/** Stats of one completed checkpoint. */
export interface CompletedCheckpointStats {
  readonly checkpointId: number;
  readonly triggerTimestamp: number;
  readonly durationMs: number;
  readonly maxAlignmentDurationMs: number;
  /**
   * Some task's alignment exceeded `checkpointing.alignmentTimeout` (or followed an upstream
   * task that did), so the checkpoint was taken unaligned there, with channel state.
   */
  readonly switchedToUnaligned: boolean;
  readonly maxSyncDurationMs: number;
  readonly maxAsyncDurationMs: number;
  readonly bytes: number;
  /** Per subtask, in acknowledgement order (the dashboard's detail on click). */
  readonly subtasks: readonly SubtaskCheckpointStats[];
}

/** One subtask's part of a completed checkpoint. */
export interface SubtaskCheckpointStats {
  /** `vertexId/subtask`, as in {@link JobClient.subtaskMetrics}. */
  readonly task: string;
  readonly alignmentDurationMs: number;
  /** This subtask took the checkpoint unaligned after its alignment timed out (or followed an upstream one). */
  readonly switchedToUnaligned: boolean;
  readonly syncDurationMs: number;
  readonly asyncDurationMs: number;
  readonly bytes: number;
  /**
   * Where the time went (ms; absent for checkpoints adopted from an earlier run). Trigger → the
   * subtask's first barrier (a source: the trigger reached it): the trigger's path and the
   * barrier's travel through the rings. Then come `alignmentDurationMs` and `syncDurationMs`.
   */
  readonly startDelayMs?: number;
  /** Of `asyncDurationMs`: waiting for the channel state (unaligned: the last channel's barrier). */
  readonly channelStateWaitMs?: number;
  /** Of `asyncDurationMs`: serializing keyed state. */
  readonly serializeMs?: number;
  /** Of `asyncDurationMs`: writing the chunks (channel state encoded, storage commit, fsync). */
  readonly writeMs?: number;
  /** Acknowledgement posted by the subtask → received by the coordinator's thread. */
  readonly ackDelayMs?: number;
}
