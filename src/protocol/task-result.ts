/**
 * What a task's worker thread hands back to the scheduler when its run ends: its operators'
 * final metrics, or a description of its failure. A failure travels as plain strings and flags
 * (a structured clone of the original error could itself fail, e.g. on a function-valued
 * field), enough to rebuild the user's error on the main thread and to rank it among the
 * attempt's other failures (see coordinator/failure-attribution.ts); the worker builds it with
 * `describeFailure` (worker/task-failure-description.ts).
 */

import type { FailureKind } from '../errors.js';
import type { OperatorMetrics } from './task-deployment.js';

export type TaskResult =
  | { readonly state: 'finished'; readonly metrics: readonly OperatorMetrics[] }
  | {
      readonly state: 'failed';
      readonly failure: TaskFailureDescription;
    };

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
