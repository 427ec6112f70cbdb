/**
 * The output every chained operator writes to: counts records for the task's metrics
 * (`recordsOut`), then passes them on. Cost: one increment per record.
 */

import type { Output } from '../operators/stream-operator.js';

/** Counts what an operator emits; wraps the real output only once, at chain build time. */
export class CountingOutput implements Output {
  count = 0;
  constructor(readonly target: Output) {}
  collect(value: unknown): void {
    this.count++;
    this.target.collect(value);
  }
}
