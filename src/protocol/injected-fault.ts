/**
 * The failure schedule's vocabulary, shared by the side that plans faults (`weir verify`, the
 * `faultInjection` job option, the scheduler that ships them in each deployment) and the worker
 * that fires them (`worker/fault-injection.ts`).
 */

/** One failure of a verify schedule. Structured-clone safe (it crosses to the workers). */
export interface InjectedFault {
  readonly kind: 'throw' | 'exit';
  /** The attempt (`ctx.attempt`) in which the fault fires; later attempts run clean. */
  readonly attempt: number;
  /** Operator uid (as in the execution plan). */
  readonly operatorUid: string;
  /** Subtask of the operator (taken modulo its parallelism). */
  readonly subtaskIndex: number;
  /**
   * Fires before the operator processes its `atRecord`-th record (1-based) of the attempt, or the
   * first record after that once the attempt restored or completed a checkpoint.
   */
  readonly atRecord: number;
}
