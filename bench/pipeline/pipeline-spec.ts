/**
 * The benchmark pipeline of the runtime issue, shared by every implementation so they all do the
 * same per-record work:
 *
 *   sequence(0..N) → map(i => ({ key: 'k' + (i % 10000), value: i * 2 }))
 *                  → filter(r => r.value % 3 !== 0)
 *                  → keyBy(key) → running sum per key (emit { key, sum } per record) → sink (last sum per key)
 *
 * Two thirds of the records pass the filter; each emits one {@link KeyedSum}. Throughput is
 * quoted in *source* records per second (N / time), the same numerator for every implementation.
 *
 * The `cpu-heavy` workload swaps the map for real per-record work (~2 µs here): build a JSON line,
 * `JSON.parse` it, and key the record by a SHA-1 of its user field — the case where threads must
 * pay for themselves (runtime issue, "threads that pay").
 */

import { createHash } from 'node:crypto';

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

/**
 * The `cpu-heavy` workload's `map`: JSON-serialize an event line, parse it back, key it by the
 * SHA-1 of its user (10 000 distinct users, so 10 000 keys). `bench/jobs/keyed-sum-job.mjs` has
 * the same function in plain JavaScript (checksums catch any drift).
 */
export function toRecordCpuHeavy(i: number): KeyedRecord {
  const line = JSON.stringify({
    user: `u${i % KEY_COUNT}`,
    page: `/p/${i % 97}`,
    value: i * 2,
    agent: 'Mozilla/5.0 (X11; Linux x86_64) weir-bench',
  });
  const event = JSON.parse(line) as { user: string; value: number };
  return { key: createHash('sha1').update(event.user).digest('hex').slice(0, 12), value: event.value };
}

export const WORKLOADS = ['cheap', 'cpu-heavy'] as const;
export type Workload = (typeof WORKLOADS)[number];

/** The `map` step of `workload`. */
export function mapperFor(workload: Workload): (i: number) => KeyedRecord {
  return workload === 'cpu-heavy' ? toRecordCpuHeavy : toRecord;
}

/** The `filter` step: keeps the records whose `value` is not a multiple of 3. */
export function keep(record: KeyedRecord): boolean {
  return record.value % 3 !== 0;
}
