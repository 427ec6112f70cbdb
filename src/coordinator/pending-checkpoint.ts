/**
 * A triggered checkpoint collecting acknowledgements: it knows which tasks must acknowledge,
 * answers every acknowledgement with a value, and turns into a {@link CompletedCheckpoint} once
 * all have. Pure bookkeeping: no clock, no timers, no I/O.
 */

import type { CheckpointFailureReason } from '../errors.js';
import type { CheckpointKind } from './checkpoint-kind.js';
import type {
  CompletedCheckpoint,
  DurationStats,
  TaskAcknowledgement,
  TaskCheckpointStats,
} from './completed-checkpoint.js';

/**
 * - `success`: recorded.
 * - `duplicate`: this task already acknowledged this checkpoint; ignored.
 * - `unknown`: this task is not one that must acknowledge (or the checkpoint was never triggered).
 * - `discarded`: the checkpoint was aborted or already finalized; the state is not used.
 */
export type AcknowledgeResult = 'success' | 'duplicate' | 'unknown' | 'discarded';

export type PendingCheckpointStatus =
  | { readonly state: 'pending' }
  | { readonly state: 'aborted'; readonly reason: CheckpointFailureReason }
  | { readonly state: 'finalized' };

export interface PendingCheckpointInit {
  readonly checkpointId: number;
  /** Trigger time, ms since the epoch. */
  readonly timestamp: number;
  readonly kind: CheckpointKind;
  /** Task keys that must acknowledge. */
  readonly tasksToAcknowledge: Iterable<string>;
}

export class PendingCheckpoint {
  readonly checkpointId: number;
  readonly timestamp: number;
  readonly kind: CheckpointKind;
  /** Invariant: disjoint from `#acknowledged`; their union is the set given at construction. */
  readonly #notYetAcknowledged: Set<string>;
  /** In acknowledgement order. */
  readonly #acknowledged = new Map<string, TaskAcknowledgement>();
  #status: PendingCheckpointStatus = { state: 'pending' };

  constructor(init: PendingCheckpointInit) {
    this.checkpointId = init.checkpointId;
    this.timestamp = init.timestamp;
    this.kind = init.kind;
    this.#notYetAcknowledged = new Set(init.tasksToAcknowledge);
  }

  get status(): PendingCheckpointStatus {
    return this.#status;
  }

  get isFullyAcknowledged(): boolean {
    return this.#status.state === 'pending' && this.#notYetAcknowledged.size === 0;
  }

  /** Task keys still to acknowledge. */
  get notYetAcknowledged(): ReadonlySet<string> {
    return this.#notYetAcknowledged;
  }

  get acknowledgedCount(): number {
    return this.#acknowledged.size;
  }

  acknowledgeTask(taskKey: string, ack: TaskAcknowledgement): AcknowledgeResult {
    if (this.#status.state !== 'pending') return 'discarded';
    if (this.#notYetAcknowledged.delete(taskKey)) {
      this.#acknowledged.set(taskKey, ack);
      return 'success';
    }
    return this.#acknowledged.has(taskKey) ? 'duplicate' : 'unknown';
  }

  /** Marks the checkpoint aborted. Returns false (and changes nothing) unless it was pending. */
  abort(reason: CheckpointFailureReason): boolean {
    if (this.#status.state !== 'pending') return false;
    this.#status = { state: 'aborted', reason };
    return true;
  }

  /**
   * Turns a fully acknowledged checkpoint into a completed one; afterwards every acknowledgement
   * is `discarded`. Throws if it is not fully acknowledged (a coordinator bug).
   */
  finalize(completionTimestamp: number): CompletedCheckpoint {
    if (!this.isFullyAcknowledged) {
      throw new Error(
        `checkpoint ${this.checkpointId} cannot be finalized: ${this.#status.state}, ` +
          `${this.#notYetAcknowledged.size} task(s) not acknowledged`,
      );
    }
    this.#status = { state: 'finalized' };
    const taskStates: Record<string, unknown> = {};
    const sync = durationStats();
    const async = durationStats();
    let maxAlignmentDurationMs = 0;
    let maxCheckpointStartDelayMs = 0;
    let switchedToUnaligned = false;
    let stateSizeBytes = 0;
    const tasks: TaskCheckpointStats[] = [];
    for (const [taskKey, { stateHandles, metrics }] of this.#acknowledged) {
      taskStates[taskKey] = stateHandles;
      tasks.push({ taskKey, ...metrics });
      maxAlignmentDurationMs = Math.max(maxAlignmentDurationMs, metrics.alignmentDurationMs);
      maxCheckpointStartDelayMs = Math.max(maxCheckpointStartDelayMs, metrics.checkpointStartDelayMs ?? 0);
      if (metrics.switchedToUnaligned) switchedToUnaligned = true;
      sync.add(metrics.syncDurationMs);
      async.add(metrics.asyncDurationMs);
      stateSizeBytes += metrics.stateSizeBytes;
    }
    return {
      checkpointId: this.checkpointId,
      kind: this.kind,
      timestamp: this.timestamp,
      completionTimestamp,
      taskStates,
      stats: {
        endToEndDurationMs: Math.max(0, completionTimestamp - this.timestamp),
        maxAlignmentDurationMs,
        switchedToUnaligned,
        maxCheckpointStartDelayMs,
        syncDurationMs: sync.stats(),
        asyncDurationMs: async.stats(),
        stateSizeBytes,
        acknowledgedTasks: this.#acknowledged.size,
        tasks,
      },
    };
  }
}

function durationStats() {
  let max = 0;
  let sum = 0;
  return {
    add(value: number) {
      max = Math.max(max, value);
      sum += value;
    },
    stats: (): DurationStats => ({ max, sum }),
  };
}
