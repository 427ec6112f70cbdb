/** A checkpoint that every task acknowledged and whose metadata is durable (or being made so). */

import type { CheckpointKind } from './checkpoint-kind.js';

/** What one task reports with its acknowledgement. All durations in ms, sizes in bytes. */
export interface TaskCheckpointMetrics {
  /** Time the task's inputs were blocked for alignment (0 for at-least-once and one-input tasks). */
  readonly alignmentDurationMs: number;
  /**
   * The task's alignment timed out (`checkpointing.alignmentTimeout`) or an upstream task's
   * unaligned barrier came, and it took this checkpoint unaligned; absent: it did not.
   */
  readonly switchedToUnaligned?: boolean;
  /** Trigger to the task's first barrier; optional, counted as 0 when absent. */
  readonly checkpointStartDelayMs?: number;
  /** Synchronous part of the snapshot (processing stopped). */
  readonly syncDurationMs: number;
  /** Asynchronous part (serialising and persisting while processing went on). */
  readonly asyncDurationMs: number;
  /** Bytes persisted for this checkpoint by this task. */
  readonly stateSizeBytes: number;
  /** Async part waiting for channel state (unaligned: until the last barrier); absent when not measured. */
  readonly channelStateWaitMs?: number;
  /** Async part serializing keyed state. */
  readonly serializeMs?: number;
  /** Async part writing chunks (channel state encoded, storage commit and fsync). */
  readonly writeMs?: number;
  /** Acknowledgement posted by the task → received by the coordinator. */
  readonly ackDelayMs?: number;
}

/** A task's acknowledgement: where its state went, and how long it took. */
export interface TaskAcknowledgement {
  /** Opaque to the coordinator: handed back to the task on restore. */
  readonly stateHandles: unknown;
  readonly metrics: TaskCheckpointMetrics;
}

export interface DurationStats {
  readonly max: number;
  readonly sum: number;
}

export interface CheckpointStats {
  /** Trigger to the last acknowledgement. */
  readonly endToEndDurationMs: number;
  readonly maxAlignmentDurationMs: number;
  /** Some task switched from aligned to unaligned for this checkpoint (see {@link TaskCheckpointMetrics}). */
  readonly switchedToUnaligned: boolean;
  readonly maxCheckpointStartDelayMs: number;
  readonly syncDurationMs: DurationStats;
  readonly asyncDurationMs: DurationStats;
  /** Sum over tasks. */
  readonly stateSizeBytes: number;
  readonly acknowledgedTasks: number;
  /**
   * Per task (`taskKey(id)`, in acknowledgement order): its own alignment, sync and async parts and
   * bytes (Flink's per-subtask checkpoint detail). Empty for checkpoints adopted from an earlier run.
   */
  readonly tasks: readonly TaskCheckpointStats[];
}

/** One task's share of a completed checkpoint. */
export interface TaskCheckpointStats extends TaskCheckpointMetrics {
  readonly taskKey: string;
}

export interface CompletedCheckpoint {
  readonly checkpointId: number;
  readonly kind: CheckpointKind;
  /** Trigger time, ms since the epoch (the barrier's timestamp). */
  readonly timestamp: number;
  /** When the last acknowledgement arrived, ms since the epoch. */
  readonly completionTimestamp: number;
  /** Task key (`taskKey(id)`) → the state handles it acknowledged. */
  readonly taskStates: Readonly<Record<string, unknown>>;
  readonly stats: CheckpointStats;
}
