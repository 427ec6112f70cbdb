/** Oracle of the async-sink e2e tests (test/fixtures/jobs/async-sink.mjs). */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expectExactRunningSums } from './helpers.js';

export type Row = { key: number; sum: number; count: number };

/** Records of the committed files (`part-*.json`); temporary files are not committed output. */
export function committedRows(out: string): Row[] {
  return readdirSync(out)
    .filter((f) => /^part-\d+-\d+\.json$/.test(f))
    .flatMap((f) => JSON.parse(readFileSync(path.join(out, f), 'utf8')) as Row[]);
}

export const expectExact = expectExactRunningSums;
