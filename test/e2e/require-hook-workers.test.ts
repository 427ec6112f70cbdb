/**
 * A process started with a `require` hook that compiles ES modules to CommonJS (here tsx, as
 * `node --import tsx`, which every worker thread inherits) still runs weir's runtime in its
 * worker threads as ES modules: piscina loads its entry with `require()` first, so the pool's
 * entry is a CommonJS file that `import()`s the task entry (src/worker/pool-entry.cts). Loaded
 * through the hook instead, the runtime ran as converted CommonJS — a getter call per
 * cross-module binding, 0.4–0.7× the records/s — beside a second copy of weir for the job module.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const host = fileURLToPath(new URL('../fixtures/module-instances-host.mjs', import.meta.url));

interface Probe {
  readonly x: number;
  readonly cjsDist: readonly string[];
}

/** Runs the probe job in a fresh `node [execArgv] host` process; its collected records. */
function runProbe(execArgv: readonly string[]): Probe[] {
  const out = execFileSync(process.execPath, [...execArgv, host], {
    encoding: 'utf8',
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
  });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '[]') as Probe[];
}

describe('worker threads of a process with a require hook', () => {
  it('load weir as ES modules under `node --import tsx`', () => {
    const records = runProbe(['--import', 'tsx']);
    expect(records.map((r) => r.x).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    for (const r of records) expect(r.cjsDist).toEqual(['dist/worker/pool-entry.cjs']);
  });

  it('and without the hook likewise', () => {
    const records = runProbe([]);
    expect(records).toHaveLength(20);
    for (const r of records) expect(r.cjsDist).toEqual(['dist/worker/pool-entry.cjs']);
  });
});
