/**
 * The keyed running-sum operator and the discard sink, shared by the baselines that keep keyed
 * state in a JS Map (loop, node:stream, RxJS map, worker consumers).
 *
 * Cost per record: one Map get + set on a string key and one `{ key, sum }` allocation.
 */

import type { KeyedRecord, KeyedSum } from './pipeline-spec.js';
import { digestOf, type SumDigest } from './sum-digest.js';

export class RunningSum {
  /** Final sum per key so far; owned by this operator instance only. */
  readonly #sums = new Map<string, number>();

  /** Adds `record.value` to its key's sum and returns the new `{ key, sum }`. */
  apply(record: KeyedRecord): KeyedSum {
    const sum = (this.#sums.get(record.key) ?? 0) + record.value;
    this.#sums.set(record.key, sum);
    return { key: record.key, sum };
  }

  /** Digest of the sums, given how many records the sink received. */
  digest(emitted: number): SumDigest {
    return digestOf(this.#sums, emitted);
  }
}

/**
 * The `discard` sink: counts what it receives and drops it. Only the count is kept; in the
 * single-thread loop V8 may therefore elide the `{ key, sum }` allocation (escape analysis), which
 * is part of why the loop is the ceiling rather than a like-for-like competitor.
 */
export class DiscardSink {
  #count = 0;

  push(_record: KeyedSum): void {
    this.#count++;
  }

  pushBatch(records: readonly KeyedSum[]): void {
    this.#count += records.length;
  }

  get count(): number {
    return this.#count;
  }
}
