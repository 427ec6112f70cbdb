/**
 * Regression (issue lmdbcrash14): write transactions that free pages they dirtied themselves
 * (a key put then removed, many keys cleared, a restored delta that empties key groups) must not
 * abort the process. With `useWritemap`, lmdb-js 3.5.6's LMDB fails
 * `Assertion 'x <= dl[0].mid' in mdb_freelist_save()` and SIGABRTs, so each scenario runs in a
 * child process and the test checks how it exited.
 */

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const HOST = fileURLToPath(new URL('./fixtures/lmdb-freed-pages-host.ts', import.meta.url));

function run(scenario: string) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', HOST, scenario], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout.trim(), stderr: r.stderr };
}

describe('lmdb backend: transactions that free the pages they dirtied', () => {
  for (const scenario of [
    'put-then-clear',
    'clear-many',
    'restore-one-key-chain',
    'restore-many-keys-chain',
  ]) {
    it(`${scenario} completes without a native abort`, () => {
      const r = run(scenario);
      expect(r.stderr).not.toMatch(/Assertion|mdb\.c/);
      expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null });
      expect(r.stdout).toBe('done');
    });
  }
});
