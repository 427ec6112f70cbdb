/**
 * The keyed running-sum operator and the sink, shared by the baselines that keep keyed state in
 * a JS Map (loop, node:stream, RxJS, worker consumers).
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
}

/**
 * The sink of every baseline: keeps the last `{ key, sum }` per key (one `Map.set` per output
 * record) and counts what it receives; the checksum is the digest of those last sums. It does
 * what weir's bench sink (bench/jobs/keyed-sum-job.mjs, `digestReporter`) does per record, so the
 * ratios compare equal work: weir's sink cannot reach its keyed state's final sums, so it checks
 * its output, and until 2026-12-02 only weir paid that `Map.set` (the baselines' sink only
 * counted and their checksum came from the operator's own state `Map`).
 */
export class LastSumSink {
  /** Last sum received per key: a key's records arrive in order, so this is its final sum. */
  readonly #finals = new Map<string, number>();
  #count = 0;

  push(record: KeyedSum): void {
    this.#count++;
    this.#finals.set(record.key, record.sum);
  }

  pushBatch(records: readonly KeyedSum[]): void {
    for (let i = 0; i < records.length; i++) this.push(records[i]);
  }

  get count(): number {
    return this.#count;
  }

  /** Digest of the last sums received. O(keys); call it after the clock has stopped. */
  digest(): SumDigest {
    return digestOf(this.#finals, this.#count);
  }
}
