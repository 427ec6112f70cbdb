/**
 * Writes a watermark frame to every channel of one edge (watermarks are broadcast: every consumer
 * takes the minimum over its channels). Watermarks and records of an edge share each channel's
 * ring, in order: a watermark never overtakes a record emitted before it, and a checkpoint
 * barrier keeps its place among both.
 */

import type { WatermarkOutput } from '../operators/stream-operator.js';
import type { RecordChannel } from './record-channel.js';

export class EdgeWatermarkWriter implements WatermarkOutput {
  constructor(readonly writers: readonly RecordChannel[]) {}
  emitWatermark(timestamp: number): void {
    for (const w of this.writers) w.writeControl({ kind: 'watermark', timestamp });
  }
}
