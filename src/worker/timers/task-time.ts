/**
 * Time as the operators of one task see it: the timestamp of the element being processed and the
 * processing-time deadline the task loop must wake up for. One instance per task, shared by the
 * whole chain (operators of a chain call each other synchronously, so "the element being
 * processed" is well defined, as with Flink's `StreamRecord` timestamp being carried along).
 *
 * Costs: reading or setting `timestamp` is a field access; the loop reads the clock only while a
 * deadline is pending (`nextDeadline < Infinity`), so jobs without timers never read it.
 */
export class TaskTime {
  /**
   * Event timestamp (ms) of the element being processed, `undefined` when it has none (no
   * `assignTimestampsAndWatermarks` upstream). Set by the task loop before every record of a
   * timestamped channel, by the timestamp assigner for its output, and by operators that emit
   * from timers (a window result carries `window.end - 1`).
   */
  timestamp: number | undefined = undefined;

  /**
   * Earliest processing time (ms since the epoch) at which some operator of the chain wants
   * `onProcessingTime`. The loop resets it to `Infinity` before calling the operators, which
   * request their next deadline again.
   */
  nextDeadline = Infinity;

  /** Asks the loop to call `onProcessingTime` on the chain at or after `deadline`. */
  requestAt(deadline: number): void {
    if (deadline < this.nextDeadline) this.nextDeadline = deadline;
  }

  /** Processing time: wall-clock ms since the epoch (as Flink's processing time). */
  now(): number {
    return Date.now();
  }
}
