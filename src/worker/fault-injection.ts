/**
 * Failure injection into a user's job without changing its code (`weir verify`, job option
 * `faultInjection`). Each {@link InjectedFault} names an operator by uid, a subtask and an
 * attempt; in that attempt the chain wraps the operator's `processElement` so that, before the
 * operator's function sees its `atRecord`-th record of the attempt (or the first one after that
 * once the attempt has a checkpoint to restore: see `armFault`), the task fails: `throw` raises
 * an {@link InjectedFailureError} as the operator's user-code error (the job restarts from its
 * latest completed checkpoint, like any user exception), `exit` ends the worker thread with
 * `process.exit(1)` (a crash the task cannot report).
 *
 * The schedule travels in the deployment, not in worker statics (a worker's statics die with it,
 * and a reused thread must not fire twice): the attempt number selects the faults, so a restarted
 * attempt never repeats an earlier attempt's fault. Cost: none for operators without a fault;
 * one counter increment and compare per record for the one operator that has one.
 */

import { InjectedFailureError } from '../errors.js';
import type { InjectedFault } from '../protocol/injected-fault.js';
import { type StreamOperator, UserCodeError } from './operators/stream-operator.js';

/**
 * Wraps `operator.processElement` when a fault of `faults` targets it in this attempt and
 * subtask; returns whether it did. The wrapper is an own property, so chained hops, which look
 * the method up at call time, go through it too.
 */
export function armFault(
  operator: StreamOperator,
  faults: readonly InjectedFault[] | undefined,
  where: {
    readonly attempt: number;
    readonly subtaskIndex: number;
    readonly parallelism: number;
    /** Whether this attempt restored state from a checkpoint. */
    readonly restored: boolean;
  },
): boolean {
  const fault = faults?.find(
    (f) =>
      f.attempt === where.attempt &&
      f.operatorUid === operator.uid &&
      f.subtaskIndex % where.parallelism === where.subtaskIndex,
  );
  if (fault === undefined) return false;
  // A failure before the attempt has any checkpoint to return to only restarts the job from the
  // beginning, which proves little: the fault waits until the attempt restored one or saw one
  // complete, then fires at the first record from `atRecord` on.
  let recoverable = where.restored;
  const notifyCheckpointComplete = operator.notifyCheckpointComplete.bind(operator);
  operator.notifyCheckpointComplete = (checkpointId) => {
    recoverable = true;
    notifyCheckpointComplete(checkpointId);
  };
  const processElement = operator.processElement.bind(operator);
  let seen = 0;
  let fired = false;
  operator.processElement = (value, inputIndex) => {
    if (++seen >= fault.atRecord && recoverable && !fired) {
      fired = true;
      if (fault.kind === 'exit') process.exit(1);
      throw new UserCodeError(
        operator.name,
        new InjectedFailureError(operator.name, where.subtaskIndex, where.attempt, seen),
      );
    }
    processElement(value, inputIndex);
  };
  return true;
}
