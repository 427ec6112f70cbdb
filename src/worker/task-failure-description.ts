/**
 * How a task's failure travels from its worker thread to the scheduler: plain strings and flags
 * (a structured clone of the original error could itself fail, e.g. on a function-valued field),
 * enough to rebuild the user's error on the main thread and to rank it among the attempt's other
 * failures (see coordinator/failure-attribution.ts).
 */

import {
  AsyncUserFunctionError,
  ChannelClosedError,
  type FailureKind,
  KeyNotSerializableError,
  ValueNotSerializableError,
  WeirError,
} from '../errors.js';
import { UserCodeError } from './operators/stream-operator.js';

export interface TaskFailureDescription {
  /** The operator whose user code threw, if the failure came from user code. */
  readonly operator: string | undefined;
  /** `Name: message` of the original error. */
  readonly message: string;
  readonly stack: string | undefined;
  /** The original error's `name` and `message`, to rebuild it as the failure's `cause`. */
  readonly errorName: string;
  readonly errorMessage: string;
  /**
   * True when this failure is a consequence of another one: a peer closed a channel this task
   * used (it failed, or teardown closed it), or teardown cancelled this task. The scheduler never
   * reports such a failure as the attempt's cause while it knows a root cause.
   */
  readonly consequence: boolean;
  /** The original error's kind (a WeirError's own, else `task`): `fatal` ends the job without restarts. */
  readonly failureKind: FailureKind;
  /** The original error's `code`, when it had one (`ERR_WEIR_ASYNC_USER_FUNCTION`, ...). */
  readonly errorCode: string | undefined;
}

/** Name of the error a task's loop throws when the scheduler cancels it (see stream-task.ts). */
const TASK_CANCELLED = 'TaskCancelledError';

export function describeFailure(e: unknown): TaskFailureDescription {
  const orig = e instanceof UserCodeError ? e.original : e;
  // A state value that cannot be serialized names its operator (the snapshot runs outside it).
  const operator =
    orig instanceof ValueNotSerializableError && orig.operator !== undefined
      ? orig.operator
      : e instanceof UserCodeError
        ? e.operator
        : // Raised by a partitioner outside any operator's guard (a source's output): names one.
          e instanceof AsyncUserFunctionError || e instanceof KeyNotSerializableError
          ? e.operator
          : undefined;
  const code = (orig as { code?: unknown } | null | undefined)?.code;
  const errorName = orig instanceof Error ? orig.name : typeof orig;
  const errorMessage = orig instanceof Error ? orig.message : String(orig);
  return {
    operator,
    message: orig instanceof Error ? `${errorName}: ${errorMessage}` : errorMessage,
    stack: orig instanceof Error ? orig.stack : undefined,
    errorName,
    errorMessage,
    // A user function that called out.collect() into a closed channel rethrows the channel's
    // error: still a consequence, even though it passed through user code.
    consequence:
      orig instanceof ChannelClosedError || (orig instanceof Error && orig.name === TASK_CANCELLED),
    failureKind: orig instanceof WeirError ? orig.failureKind : 'task',
    errorCode: typeof code === 'string' ? code : undefined,
  };
}
