/** Oracle of the async-sink e2e tests (test/fixtures/jobs/async-sink.mjs). */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { expectedSums, finalByKey } from './helpers.js';

export type Row = { key: number; sum: number; count: number };

/** Records of the committed files (`part-*.json`); temporary files are not committed output. */
export function committedRows(out: string): Row[] {
  return readdirSync(out)
    .filter((f) => /^part-\d+-\d+\.json$/.test(f))
    .flatMap((f) => JSON.parse(readFileSync(path.join(out, f), 'utf8')) as Row[]);
}

export function expectExact(rows: readonly Row[], n: number, keys: number): void {
  expect(new Set(rows.map((r) => `${r.key}/${r.count}`)).size).toBe(rows.length); // no duplicate
  expect(rows).toHaveLength(n); // nothing lost
  const finals = finalByKey(rows, (r) => r.count);
  for (const [key, e] of expectedSums(n, keys)) expect(finals.get(key)).toEqual({ key, ...e });
}
