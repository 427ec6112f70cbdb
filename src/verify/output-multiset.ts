/**
 * Comparison of one sink's committed output between two runs, as multisets of records (pure).
 * Records are compared by a canonical text (JSON with object keys sorted, `undefined`, bigints,
 * Maps and Sets spelt out), so two records are equal when they hold the same values, whatever
 * the order of their keys. Cost: O(n) canonicalisations and map operations per side.
 */

import type { CheckpointMode } from '../api/source.js';

/** Canonical text of a record: equal records, equal text. */
export function canonicalRecord(value: unknown): string {
  return JSON.stringify(canonicalValue(value)) ?? 'undefined';
}

function canonicalValue(v: unknown): unknown {
  if (v === undefined) return { $undefined: true };
  if (typeof v === 'bigint') return { $bigint: v.toString() };
  if (typeof v === 'number' && !Number.isFinite(v)) return { $number: String(v) };
  if (Object.is(v, -0)) return { $number: '-0' };
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(canonicalValue);
  if (v instanceof Map) {
    return { $map: [...v].map(([k, x]) => [canonicalValue(k), canonicalValue(x)]).sort(byText) };
  }
  if (v instanceof Set) return { $set: [...v].map(canonicalValue).sort(byText) };
  if (v instanceof Date) return { $date: v.toISOString() };
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = canonicalValue((v as Record<string, unknown>)[k]);
  return out;
}

const byText = (a: unknown, b: unknown): number => {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

/** Record → how often it occurs, keyed by its canonical text; keeps one example value per key. */
export interface RecordMultiset {
  readonly counts: ReadonlyMap<string, { readonly value: unknown; readonly count: number }>;
  readonly size: number;
}

export function toMultiset(records: readonly unknown[]): RecordMultiset {
  const counts = new Map<string, { value: unknown; count: number }>();
  for (const r of records) {
    const key = canonicalRecord(r);
    const e = counts.get(key);
    if (e) e.count++;
    else counts.set(key, { value: r, count: 1 });
  }
  return { counts, size: records.length };
}

/** `after − before`: what was added between two reads of an output that only grows. */
export function multisetDifference(after: readonly unknown[], before: readonly unknown[]): unknown[] {
  const remaining = new Map<string, number>();
  for (const r of before) {
    const k = canonicalRecord(r);
    remaining.set(k, (remaining.get(k) ?? 0) + 1);
  }
  const out: unknown[] = [];
  for (const r of after) {
    const k = canonicalRecord(r);
    const n = remaining.get(k) ?? 0;
    if (n > 0) remaining.set(k, n - 1);
    else out.push(r);
  }
  return out;
}

/** A record that occurs a different number of times in the two outputs. */
export interface RecordDifference {
  readonly record: unknown;
  /** Occurrences in the reference output. */
  readonly expected: number;
  /** Occurrences in the compared output. */
  readonly actual: number;
}

/**
 * How a compared output differs from the reference. `lost`: records the reference has more often;
 * `duplicated`: records both have, the compared one more often; `unexpected`: records the
 * reference never has (a changed value: its original is usually among `lost`).
 */
export interface OutputDifference {
  readonly referenceRecords: number;
  readonly actualRecords: number;
  /** Sums of the missing / extra occurrences. */
  readonly lostCount: number;
  readonly duplicateCount: number;
  readonly unexpectedCount: number;
  /** The first `limit` differences of each kind, in the order the records first appear. */
  readonly lost: readonly RecordDifference[];
  readonly duplicated: readonly RecordDifference[];
  readonly unexpected: readonly RecordDifference[];
}

export function compareOutputs(
  reference: readonly unknown[],
  actual: readonly unknown[],
  limit = 10,
): OutputDifference {
  const ref = toMultiset(reference);
  const act = toMultiset(actual);
  const lost: RecordDifference[] = [];
  const duplicated: RecordDifference[] = [];
  const unexpected: RecordDifference[] = [];
  let lostCount = 0;
  let duplicateCount = 0;
  let unexpectedCount = 0;
  for (const [k, r] of ref.counts) {
    const a = act.counts.get(k)?.count ?? 0;
    if (a < r.count) {
      lostCount += r.count - a;
      if (lost.length < limit) lost.push({ record: r.value, expected: r.count, actual: a });
    } else if (a > r.count) {
      duplicateCount += a - r.count;
      if (duplicated.length < limit) duplicated.push({ record: r.value, expected: r.count, actual: a });
    }
  }
  for (const [k, a] of act.counts) {
    if (ref.counts.has(k)) continue;
    unexpectedCount += a.count;
    if (unexpected.length < limit) unexpected.push({ record: a.value, expected: 0, actual: a.count });
  }
  return {
    referenceRecords: ref.size,
    actualRecords: act.size,
    lostCount,
    duplicateCount,
    unexpectedCount,
    lost,
    duplicated,
    unexpected,
  };
}

/** Whether a difference breaks the guarantee of `mode`: any difference for exactly-once, a loss for at-least-once. */
export function violates(d: OutputDifference, mode: CheckpointMode): boolean {
  return mode === 'exactly-once' ? d.lostCount + d.duplicateCount + d.unexpectedCount > 0 : d.lostCount > 0;
}
