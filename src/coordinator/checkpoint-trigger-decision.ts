/**
 * Whether the coordinator may trigger a checkpoint now: a pure function of observed facts.
 * The coordinator re-asks after every event that can change the answer (a timer, a checkpoint
 * completing or aborting, the job starting or its sources finishing).
 */

import { type CheckpointKind, isForcedCheckpoint } from './checkpoint-kind.js';

export interface TriggerFacts {
  readonly kind: CheckpointKind;
  readonly nowMs: number;
  /** The coordinator is started and the job has tasks to trigger and to acknowledge. */
  readonly jobRunning: boolean;
  /** Every source has reached the end of its input: only the final checkpoint can still run. */
  readonly sourcesFinished: boolean;
  /** Periodic checkpoints are suspended (a savepoint that stops the job is on its way). Default false. */
  readonly periodicSuspended?: boolean;
  /** Checkpoints triggered and neither completed nor aborted (including those being committed). */
  readonly pendingCount: number;
  /** When the last checkpoint of any kind was triggered, or the coordinator started; undefined = never. */
  readonly lastTriggerMs: number | undefined;
  /** When the last checkpoint completed; undefined = none yet. */
  readonly lastCompletionMs: number | undefined;
  readonly intervalMs: number;
  readonly minPauseMs: number;
  readonly maxConcurrent: number;
}

export type TriggerWaitReason =
  | 'job-not-running'
  | 'sources-finished'
  | 'periodic-suspended'
  | 'max-concurrent'
  | 'min-pause'
  | 'interval';

export type TriggerDecision =
  | { readonly kind: 'trigger' }
  /** Ask again at `untilMs`; `Infinity` means: only after an event (a checkpoint ends, the job starts). */
  | { readonly kind: 'wait'; readonly untilMs: number; readonly reason: TriggerWaitReason };

/**
 * Rules, in order:
 * 1. Not running: wait for an event.
 * 2. Sources finished: wait for an event, unless this is the final checkpoint.
 * 2b. Periodic checkpoints suspended (stop-with-savepoint): periodic ones wait for good.
 * 3. Forced kinds (everything but `periodic`) trigger now.
 * 4. `pendingCount >= maxConcurrent`: wait for one to end. A `minPause > 0` makes the effective
 *    `maxConcurrent` 1 (Flink: a pause between checkpoints implies one at a time).
 * 5. Otherwise wait until both `lastCompletion + minPause` and `lastTrigger + interval` have
 *    passed; the reason names the later of the two.
 */
export function decideTrigger(facts: TriggerFacts): TriggerDecision {
  if (!facts.jobRunning) return { kind: 'wait', untilMs: Infinity, reason: 'job-not-running' };
  if (facts.sourcesFinished && facts.kind !== 'final') {
    return { kind: 'wait', untilMs: Infinity, reason: 'sources-finished' };
  }
  if (facts.kind === 'periodic' && facts.periodicSuspended) {
    return { kind: 'wait', untilMs: Infinity, reason: 'periodic-suspended' };
  }
  if (isForcedCheckpoint(facts.kind)) return { kind: 'trigger' };
  const maxConcurrent = facts.minPauseMs > 0 ? 1 : facts.maxConcurrent;
  if (facts.pendingCount >= maxConcurrent)
    return { kind: 'wait', untilMs: Infinity, reason: 'max-concurrent' };
  const pauseUntil =
    facts.lastCompletionMs === undefined ? -Infinity : facts.lastCompletionMs + facts.minPauseMs;
  const intervalUntil =
    facts.lastTriggerMs === undefined ? -Infinity : facts.lastTriggerMs + facts.intervalMs;
  const untilMs = Math.max(pauseUntil, intervalUntil);
  if (facts.nowMs >= untilMs) return { kind: 'trigger' };
  return { kind: 'wait', untilMs, reason: pauseUntil > intervalUntil ? 'min-pause' : 'interval' };
}
