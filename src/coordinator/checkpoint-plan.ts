/**
 * Which tasks a checkpoint triggers directly and which must acknowledge it, once some tasks may
 * have finished their input (Flink's FLIP-147 "checkpoints after tasks finish", its
 * `CheckpointPlan`). Pure functions of observed facts; the coordinator carries them out.
 *
 * A task that reported end of input stays alive in weir until the final checkpoint completed
 * (two-phase-commit sinks still need its notification), its state final and its channels
 * drained. So, unlike Flink, which records a finished task's final snapshot once and waits only
 * for running tasks, weir keeps asking finished tasks: each checkpoint triggers them directly
 * (no barrier: nothing is downstream of an ended channel) and they acknowledge with their final
 * state. That keeps every checkpoint self-contained — a finished source's final positions and a
 * finished sink's transactions are in every later checkpoint, so a restore never re-reads a
 * finished split — at the cost of re-snapshotting final state (small for sources; an
 * incremental backend writes an empty delta).
 *
 * Consumers of finished producers align only on their channels still open (an ended channel
 * counts as aligned, see src/worker/barrier/). A task whose inputs all end without a barrier of a
 * pending checkpoint reaches end of input without snapshotting it: the coordinator then
 * triggers it directly ({@link lateTriggersOnInputEnd}), which Flink does up front by triggering
 * "the first running tasks whose inputs all finished". A task that snapshotted the checkpoint
 * through a barrier already ignores such a trigger.
 */

import type { CheckpointKind } from './checkpoint-kind.js';

export interface CheckpointPlanFacts {
  readonly kind: CheckpointKind;
  /** Every task of the deployment (task keys), in deployment order. */
  readonly tasks: readonly string[];
  /** The source tasks among them. */
  readonly sources: readonly string[];
  /** Tasks that reported end of input: alive, quiescent, their state final. */
  readonly inputEnded: ReadonlySet<string>;
}

export interface CheckpointPlan {
  /**
   * Triggered directly, in deployment order: running sources (snapshot, then barrier on every
   * output) and tasks whose input ended (final state, no barrier). A `final` checkpoint triggers
   * every task: all of them ended.
   */
  readonly tasksToTrigger: readonly string[];
  /** Every task: running ones through barriers, ended ones through the direct trigger. */
  readonly tasksToAcknowledge: readonly string[];
}

export function calculateCheckpointPlan(facts: CheckpointPlanFacts): CheckpointPlan {
  const tasksToAcknowledge = [...new Set(facts.tasks)];
  if (facts.kind === 'final') return { tasksToTrigger: tasksToAcknowledge, tasksToAcknowledge };
  const sources = new Set(facts.sources);
  return {
    tasksToTrigger: tasksToAcknowledge.filter((t) => sources.has(t) || facts.inputEnded.has(t)),
    tasksToAcknowledge,
  };
}

/** True when every source reported end of input: only the final checkpoint can follow. */
export function allSourcesEnded(sources: readonly string[], inputEnded: ReadonlySet<string>): boolean {
  return sources.length > 0 && sources.every((s) => inputEnded.has(s));
}

/** What the coordinator knows of one acknowledging checkpoint. */
export interface AcknowledgingCheckpoint {
  readonly checkpointId: number;
  /** Tasks whose acknowledgement is still missing. */
  readonly notYetAcknowledged: ReadonlySet<string>;
  /** Tasks it already triggered directly. */
  readonly triggered: ReadonlySet<string>;
}

/**
 * `taskKey` just reported end of input: the acknowledging checkpoints it still owes and that
 * never triggered it directly, ascending by id. It may have ended without their barrier (all
 * its producers finished and snapshotted them without one), so nothing else would ever reach
 * it. If a barrier did reach it, the task ignores the trigger (its acknowledgement is on the
 * way).
 */
export function lateTriggersOnInputEnd(
  taskKey: string,
  checkpoints: readonly AcknowledgingCheckpoint[],
): number[] {
  return checkpoints
    .filter((c) => c.notYetAcknowledged.has(taskKey) && !c.triggered.has(taskKey))
    .map((c) => c.checkpointId)
    .sort((a, b) => a - b);
}
