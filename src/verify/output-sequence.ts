/**
 * Per-key comparison of one sink's committed output with the reference, as sequences (pure): for
 * a keyed output, each key's records must come in the reference's order, not only as often.
 * Records and keys are compared by their canonical text (`canonicalRecord`). Cost: O(n) per side.
 */

import { canonicalRecord } from './output-multiset.js';

/** Where the first differing key's sequence departs from the reference. */
export interface SequenceDifference {
  /** Keys whose sequences differ. */
  readonly keysDiffering: number;
  /** The first of them, in the order keys first appear in the reference (then in the compared output). */
  readonly key: unknown;
  /** 0-based position in that key's sequence. */
  readonly position: number;
  /** The reference's record there; absent when the reference's sequence ended before. */
  readonly expected?: unknown;
  /** The compared output's record there; absent when its sequence ended before. */
  readonly actual?: unknown;
}

/** The record's key: a field path (`a.b`) or a function. */
export type RecordKey = string | ((record: unknown) => unknown);

export function keyOf(key: RecordKey): (record: unknown) => unknown {
  if (typeof key === 'function') return key;
  const path = key.split('.');
  return (record) => {
    let v: unknown = record;
    for (const p of path)
      v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
    return v;
  };
}

function byKey(
  records: readonly unknown[],
  key: (r: unknown) => unknown,
): Map<string, { key: unknown; records: unknown[] }> {
  const out = new Map<string, { key: unknown; records: unknown[] }>();
  for (const r of records) {
    const k = key(r);
    const c = canonicalRecord(k);
    let e = out.get(c);
    if (!e) out.set(c, (e = { key: k, records: [] }));
    e.records.push(r);
  }
  return out;
}

/** undefined when every key's sequence equals the reference's. */
export function compareKeyedSequences(
  reference: readonly unknown[],
  actual: readonly unknown[],
  key: RecordKey,
): SequenceDifference | undefined {
  const k = keyOf(key);
  const ref = byKey(reference, k);
  const act = byKey(actual, k);
  let first: Omit<SequenceDifference, 'keysDiffering'> | undefined;
  let keysDiffering = 0;
  const keys = [...ref.keys(), ...[...act.keys()].filter((c) => !ref.has(c))];
  for (const c of keys) {
    const a = ref.get(c)?.records ?? [];
    const b = act.get(c)?.records ?? [];
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (i < a.length && i < b.length && canonicalRecord(a[i]) === canonicalRecord(b[i])) continue;
      keysDiffering++;
      first ??= {
        key: (ref.get(c) ?? act.get(c))?.key,
        position: i,
        ...(i < a.length ? { expected: a[i] } : {}),
        ...(i < b.length ? { actual: b[i] } : {}),
      };
      break;
    }
  }
  return first === undefined ? undefined : { keysDiffering, ...first };
}
