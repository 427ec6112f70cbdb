/**
 * Which of an attempt's failures is its cause. When one task fails, its peers fail too — a
 * producer writes into the channel the failed consumer closed, teardown cancels the rest, the
 * checkpoint coordinator gives up on a checkpoint that task will never acknowledge — and these
 * consequences can reach the scheduler first. The scheduler therefore collects every failure
 * until the attempt is torn down and then picks the root cause with {@link attributeFailure}:
 * the best-ranked failure, earliest first among equals, with the others attached as
 * `suppressed`. Pure: no I/O, no clock.
 */

import type { TaskFailureError } from '../errors.js';

/** Where the scheduler observed a failure. */
export type FailureOrigin =
  /** A task reported or its piscina run rejected (the worker died). */
  | 'task'
  /** A worker error piscina could not attribute to a running task (an asynchronous throw). */
  | 'worker'
  /** Raised outside the tasks: the checkpoint coordinator gave up, a watchdog, ... */
  | 'external';

export interface ObservedFailure {
  readonly error: TaskFailureError;
  readonly origin: FailureOrigin;
  /** The failure is a consequence of another one (see TaskFailureDescription.consequence). */
  readonly consequence: boolean;
}

/**
 * Lower is more likely the root cause: user code that threw (it names its operator), then any
 * other failure inside a task or worker, then failures decided outside the tasks (which usually
 * follow from a task that stopped answering), and last the consequences.
 */
export function failureRank(f: ObservedFailure): number {
  if (f.consequence) return 3;
  if (f.origin === 'external') return 2;
  if (f.origin === 'task' && f.error.operator !== undefined) return 0;
  return 1;
}

/** The root cause of `failures` (in arrival order), with every other failure in its `suppressed`. */
export function attributeFailure(failures: readonly ObservedFailure[]): TaskFailureError {
  if (failures.length === 0) throw new RangeError('attributeFailure needs at least one failure');
  let best = 0;
  for (let i = 1; i < failures.length; i++)
    if (failureRank(failures[i]) < failureRank(failures[best])) best = i;
  const primary = failures[best].error;
  for (let i = 0; i < failures.length; i++) if (i !== best) primary.suppressed.push(failures[i].error);
  return primary;
}
