/**
 * The event-time side of a task's network outputs:
 * - {@link TimestampedRecordWriter}: the record writer of a timestamped edge. It partitions on
 *   the record itself and writes the envelope `[timestamp | null, value]`, the timestamp taken
 *   from the task's {@link TaskTime} (the element being emitted); on a hash edge with the
 *   record's key group, like the plain record writer. Plain edges keep the plain
 *   writer: the envelope costs one small array per record and is only paid with event time.
 * - {@link EdgeWatermarkWriter}: writes a watermark frame to every channel of one edge
 *   (watermarks are broadcast: every consumer takes the minimum over its channels).
 *
 * Watermarks and records of an edge share each channel's ring, in order: a watermark never
 * overtakes a record emitted before it, and a checkpoint barrier keeps its place among both.
 */

import type { ControlFrame } from '../../channels/frame.js';
import { ALL_CONSUMERS, HashPartitioner, type Partitioner } from '../../graph/partitioner.js';
import type { Output, WatermarkOutput } from '../operators/stream-operator.js';
import type { TaskTime } from './task-time.js';

/** What these writers need from a channel writer (src/channels/channel-writer.ts). */
export interface RecordChannel {
  /** `keyGroup`: the record's key group on a hash edge (see ChannelWriter.write). */
  write(value: unknown, keyGroup?: number): void;
  writeControl(frame: ControlFrame): void;
}

export class TimestampedRecordWriter implements Output {
  constructor(
    readonly writers: readonly RecordChannel[],
    readonly partitioner: Partitioner | null,
    readonly time: TaskTime,
  ) {}
  collect(value: unknown): void {
    const envelope = [this.time.timestamp ?? null, value];
    if (this.partitioner === null) {
      this.writers[0].write(envelope);
      return;
    }
    const target = this.partitioner.select(value);
    if (target === ALL_CONSUMERS) for (const w of this.writers) w.write(envelope);
    else if (this.partitioner instanceof HashPartitioner) {
      this.writers[target].write(envelope, this.partitioner.lastKeyGroup);
    } else this.writers[target].write(envelope);
  }
}

export class EdgeWatermarkWriter implements WatermarkOutput {
  constructor(readonly writers: readonly RecordChannel[]) {}
  emitWatermark(timestamp: number): void {
    for (const w of this.writers) w.writeControl({ kind: 'watermark', timestamp });
  }
}
