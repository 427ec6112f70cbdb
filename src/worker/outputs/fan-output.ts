/**
 * An operator with several successors (chained operators, network edges) writes to one fan
 * output, which calls each in order: one record, one watermark per target. Built only where an
 * operator has more than one target; a single target is written to directly.
 */

import type { Output, WatermarkOutput } from '../operators/stream-operator.js';

export class FanWatermarkOutput implements WatermarkOutput {
  constructor(readonly targets: readonly WatermarkOutput[]) {}
  emitWatermark(timestamp: number): void {
    for (const t of this.targets) t.emitWatermark(timestamp);
  }
}

export class FanOutput implements Output {
  constructor(readonly targets: readonly Output[]) {}
  collect(value: unknown): void {
    for (const t of this.targets) t.collect(value);
  }
}
