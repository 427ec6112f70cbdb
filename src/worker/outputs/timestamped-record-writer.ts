/**
 * The record writer of a timestamped (event-time) edge. It partitions on the record itself and
 * writes the envelope `[timestamp | null, value]`, the timestamp taken from the task's
 * {@link TaskTime} (the element being emitted); on a hash edge with the record's key group, like
 * the plain `RecordWriter` (record-writer.ts). Plain edges keep the plain writer: the envelope
 * costs one small array per record and is only paid with event time.
 */

import { ALL_CONSUMERS, HashPartitioner, type Partitioner } from '../../graph/partitioner.js';
import type { Output } from '../operators/stream-operator.js';
import type { TaskTime } from '../timers/task-time.js';
import type { RecordChannel } from './record-channel.js';

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
