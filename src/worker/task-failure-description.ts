/**
 * Turns the error a task failed with into the {@link TaskFailureDescription} that travels from its
 * worker thread to the scheduler (the type is in protocol/task-deployment.ts, which says why it is
 * plain strings and flags).
 */

import {
  AsyncUserFunctionError,
  ChannelClosedError,
  KeyNotSerializableError,
  ValueNotSerializableError,
  WeirError,
} from '../errors.js';
import type { TaskFailureDescription } from '../protocol/task-deployment.js';
import { UserCodeError } from './operators/stream-operator.js';

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
