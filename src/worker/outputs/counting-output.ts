/**
 * The counting wrapper of an operator's output for the task's metrics (`recordsOut`): in front of
 * a network edge's record writer, a fan of several targets, or nothing. An operator whose only
 * output is a chained successor writes to that hop directly, which counts itself
 * (chained-output.ts). Cost: one increment and one call per record.
 */

import type { Output } from '../operators/stream-operator.js';

/** What the task's metrics read an operator's `recordsOut` from. */
export interface RecordsOutCounter {
  readonly count: number;
}

/** Counts what an operator emits; wraps the real output only once, at chain build time. */
export class CountingOutput implements Output, RecordsOutCounter {
  count = 0;
  constructor(readonly target: Output) {}
  collect(value: unknown): void {
    this.count++;
    this.target.collect(value);
  }
}
