/**
 * A chained hop: the output of an operator whose successor runs in the same task. It counts the
 * records it passes (the operator's `recordsOut`, read by the task's metrics) and calls the next
 * operator's `processElement` directly. With the stuck-task watchdog it also stores the running
 * operator's chain index in and back (two plain int32 stores, busy-marker.ts).
 *
 * Cost: one increment, one branch on the watchdog, one call. A class and not a closure per hop:
 * closures made from one function literal share one feedback cell in V8, and an operator's
 * `out.collect` call site that had seen several hop closures ("many closures") was not inlined
 * (`--trace-turbo-inlining`); with one class, that call site sees one map and TurboFan inlines the
 * hop and, through its `next.processElement` (polymorphic over the few operator classes of the
 * thread's chains), the next operator. Measured on the source chain of the pipeline
 * (bench/pipeline/source-chain.mjs; bench/README.md "pipeline", "The source thread's chain").
 */

import type { BusyMarker } from '../busy-marker.js';
import type { Output, StreamOperator } from '../operators/stream-operator.js';

export class ChainedOutput implements Output {
  /** Records passed on (the upstream operator's `recordsOut` when this is its only output). */
  count = 0;
  constructor(
    readonly next: StreamOperator,
    /** The watchdog's marker, or null without one. */
    readonly busy: BusyMarker | null,
    /** Chain index of the operator that writes to this output. */
    readonly from: number,
    /** Chain index of `next`. */
    readonly to: number,
  ) {}
  collect(value: unknown): void {
    this.count++;
    const busy = this.busy;
    if (busy === null) {
      this.next.processElement(value, 0);
      return;
    }
    busy.operator = this.to;
    this.next.processElement(value, 0);
    busy.operator = this.from;
  }
}
