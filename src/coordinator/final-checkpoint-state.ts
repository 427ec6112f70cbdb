/**
 * When a bounded job's final checkpoint is triggered, as a pure state machine over one job's
 * executions: each step takes the state and one event and returns the next state plus the
 * effects to carry out (JobCheckpointing carries them out). No I/O, no mutation.
 *
 * Rules:
 * - Each execution (attempt) is numbered by its attach. Every event about tasks or about a
 *   trigger names the execution it belongs to; an event of another execution than the attached
 *   one is stale and changes nothing: a task of a failed attempt that reports its end late, or
 *   the rejection of a final checkpoint that the failover aborted, must neither count toward the
 *   restored attempt's end of input nor trigger (or fail) anything on it. Only `attached` resets.
 * - Once every task of the attached execution reported end of input, the final checkpoint is
 *   triggered, once: while it is pending or after it completed, nothing triggers it again (a
 *   second one would wait for tasks that exit after the first and fail a finished job).
 * - A rejected final checkpoint is retried, up to {@link FINAL_CHECKPOINT_ATTEMPTS} triggers per
 *   execution; the rejection of the last one fails the execution (the restart strategy decides).
 *   Each trigger carries its attempt number, so only the rejection of the pending one counts.
 * - Stop-with-savepoint: while a savepoint that stops the job is under way or taken
 *   (`savepoint-started`), no final checkpoint is triggered (it would commit output the savepoint
 *   does not cover); the tasks wait at their end of input until they are cancelled. A refused
 *   savepoint (`savepoint-failed`) lets the job end normally: the final checkpoint is triggered
 *   then if every task ended and none is pending or completed. The flag belongs to the job, not
 *   to an execution: it survives a restart.
 * - An `input-ended` of the attached execution naming a task that is not one of its tasks is a
 *   protocol violation: it throws before any effect.
 */

import { assertNever } from '../util/assert-never.js';

/** Final checkpoints triggered per execution before a rejection fails it (each rejection is warned about). */
export const FINAL_CHECKPOINT_ATTEMPTS = 3;

export interface FinalCheckpointState {
  /** Number of the attached execution; null after `detached` (every execution event is then stale). */
  readonly execution: number | null;
  /** Task keys of the attached execution. */
  readonly tasks: ReadonlySet<string>;
  /** The attached execution's tasks that reported end of input. Invariant: a subset of `tasks`. */
  readonly inputEnded: ReadonlySet<string>;
  /**
   * `waiting`: not triggered, or its last trigger was rejected; `pending`: trigger number
   * `attempts` is under way; `completed`: the tasks exit.
   */
  readonly phase: 'waiting' | 'pending' | 'completed';
  /** Final checkpoints triggered for the attached execution; the pending one is number `attempts`. */
  readonly attempts: number;
  /** A savepoint that stops the job is under way or taken. */
  readonly stopping: boolean;
}

export type FinalCheckpointEvent =
  | { readonly kind: 'attached'; readonly execution: number; readonly tasks: readonly string[] }
  | { readonly kind: 'detached' }
  | { readonly kind: 'input-ended'; readonly execution: number; readonly task: string }
  | { readonly kind: 'completed'; readonly execution: number; readonly attempt: number }
  | {
      readonly kind: 'rejected';
      readonly execution: number;
      readonly attempt: number;
      readonly error: unknown;
    }
  | { readonly kind: 'savepoint-started' }
  | { readonly kind: 'savepoint-failed' };

export type FinalCheckpointEffect =
  /** Trigger the final checkpoint on every task of `execution`; report its outcome with `attempt`. */
  | { readonly kind: 'trigger'; readonly execution: number; readonly attempt: number }
  /** A rejected final checkpoint that is retried: tell the user why. */
  | { readonly kind: 'warn'; readonly error: unknown }
  /** The last final checkpoint allowed was rejected: fail the execution with `error` as the cause. */
  | { readonly kind: 'fail-execution'; readonly error: unknown };

export interface FinalCheckpointTransition {
  readonly next: FinalCheckpointState;
  readonly effects: readonly FinalCheckpointEffect[];
}

export function initialFinalCheckpointState(): FinalCheckpointState {
  return {
    execution: null,
    tasks: new Set(),
    inputEnded: new Set(),
    phase: 'waiting',
    attempts: 0,
    stopping: false,
  };
}

export function finalCheckpointStep(
  state: FinalCheckpointState,
  event: FinalCheckpointEvent,
): FinalCheckpointTransition {
  switch (event.kind) {
    case 'attached':
      return {
        next: {
          execution: event.execution,
          tasks: new Set(event.tasks),
          inputEnded: new Set(),
          phase: 'waiting',
          attempts: 0,
          stopping: state.stopping,
        },
        effects: [],
      };
    case 'detached':
      return { next: { ...state, execution: null }, effects: [] };
    case 'input-ended': {
      if (event.execution !== state.execution) return unchanged(state);
      if (!state.tasks.has(event.task)) {
        throw new RangeError(
          `final checkpoint: task ${event.task} reported end of input but is not a task of execution ${event.execution}`,
        );
      }
      if (state.inputEnded.has(event.task)) return unchanged(state);
      const inputEnded = new Set(state.inputEnded).add(event.task);
      return triggerIfDue({ ...state, inputEnded });
    }
    case 'completed':
      if (!isPendingTrigger(state, event)) return unchanged(state);
      return { next: { ...state, phase: 'completed' }, effects: [] };
    case 'rejected': {
      if (!isPendingTrigger(state, event)) return unchanged(state);
      const waiting: FinalCheckpointState = { ...state, phase: 'waiting' };
      if (state.attempts >= FINAL_CHECKPOINT_ATTEMPTS) {
        return { next: waiting, effects: [{ kind: 'fail-execution', error: event.error }] };
      }
      const retried = triggerIfDue(waiting);
      return { next: retried.next, effects: [{ kind: 'warn', error: event.error }, ...retried.effects] };
    }
    case 'savepoint-started':
      return { next: { ...state, stopping: true }, effects: [] };
    case 'savepoint-failed':
      return triggerIfDue({ ...state, stopping: false });
    default:
      return assertNever(event, 'final checkpoint event');
  }
}

/** Every task of the attached execution ended and nothing holds the final checkpoint back. */
export function finalCheckpointDue(state: FinalCheckpointState): boolean {
  return (
    state.execution !== null &&
    state.phase === 'waiting' &&
    !state.stopping &&
    state.tasks.size > 0 &&
    state.inputEnded.size === state.tasks.size
  );
}

function triggerIfDue(state: FinalCheckpointState): FinalCheckpointTransition {
  if (!finalCheckpointDue(state)) return { next: state, effects: [] };
  const attempt = state.attempts + 1;
  return {
    next: { ...state, phase: 'pending', attempts: attempt },
    effects: [{ kind: 'trigger', execution: state.execution!, attempt }],
  };
}

function isPendingTrigger(
  state: FinalCheckpointState,
  event: { execution: number; attempt: number },
): boolean {
  return state.execution === event.execution && state.phase === 'pending' && state.attempts === event.attempt;
}

function unchanged(state: FinalCheckpointState): FinalCheckpointTransition {
  return { next: state, effects: [] };
}
