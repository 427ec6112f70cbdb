import { ALL_CONSUMERS, HashPartitioner, type Partitioner } from '../../graph/partitioner.js';
import type { Output } from '../operators/stream-operator.js';
import type { RecordChannel } from './record-channel.js';

/**
 * Routes records of one edge to its channels. Broadcast writes (and encodes) once per channel. On a
 * hash edge each record goes with the key group the partitioner computed for it (the keyed
 * consumer then does not hash the key again).
 */
export class RecordWriter implements Output {
  readonly #hash: HashPartitioner | null;
  constructor(
    readonly writers: readonly RecordChannel[],
    readonly partitioner: Partitioner | null,
  ) {
    this.#hash = partitioner instanceof HashPartitioner ? partitioner : null;
  }
  collect(value: unknown): void {
    if (this.partitioner === null) {
      this.writers[0].write(value);
      return;
    }
    const hash = this.#hash;
    if (hash !== null) {
      const target = hash.select(value);
      this.writers[target].write(value, hash.lastKeyGroup);
      return;
    }
    const target = this.partitioner.select(value);
    if (target === ALL_CONSUMERS) for (const w of this.writers) w.write(value);
    else this.writers[target].write(value);
  }
}
