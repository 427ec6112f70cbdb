/**
 * The benchmark pipeline of the runtime issue, shared by every implementation so they all do the
 * same per-record work:
 *
 *   sequence(0..N) → map(i => ({ key: 'k' + (i % 10000), value: i * 2 }))
 *                  → filter(r => r.value % 3 !== 0)
 *                  → keyBy(key) → running sum per key (emit { key, sum } per record) → discard
 *
 * Two thirds of the records pass the filter; each emits one {@link KeyedSum}. Throughput is
 * quoted in *source* records per second (N / time), the same numerator for every implementation.
 */

/** Distinct keys: `'k0' … 'k9999'`. */
export const KEY_COUNT = 10_000;

export interface KeyedRecord {
  readonly key: string;
  readonly value: number;
}

export interface KeyedSum {
  readonly key: string;
  readonly sum: number;
}

/** The `map` step. Allocates one record and one key string, as a real job would. */
export function toRecord(i: number): KeyedRecord {
  return { key: `k${i % KEY_COUNT}`, value: i * 2 };
}

/** The `filter` step: keeps the records whose `value` is not a multiple of 3. */
export function keep(record: KeyedRecord): boolean {
  return record.value % 3 !== 0;
}
