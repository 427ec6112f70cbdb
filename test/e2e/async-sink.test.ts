/**
 * A user-defined exactly-once sink (`sinks.custom`) with asynchronous, randomly delayed
 * pre-commits and commits (test/fixtures/jobs/async-sink.mjs) under failures: a throw in user
 * code, a worker exit, a rejected pre-commit, and a crash between a checkpoint's pre-commit and
 * its commit (a commit that keeps failing, a worker exit inside commit). The committed files must
 * hold exactly the job's output: every (key, count) once, every final sum right.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type JobOptions, startJob } from '../../dist/index.js';
import { committedRows, expectExact } from './async-sink-helpers.js';
import { expectedSums, fixture } from './helpers.js';

const N = 4000;
const KEYS = 10;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function run(failure: string, options: JobOptions, extra: Record<string, string> = {}) {
  dir = mkdtempSync(path.join(tmpdir(), 'weir-async-sink-'));
  const out = path.join(dir, 'out');
  const restoredFrom: (number | undefined)[] = [];
  const client = await startJob(fixture('async-sink.mjs'), {
    restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
    ...options,
    args: { failure, out, n: String(N), keys: String(KEYS), ...extra },
  });
  client.on('deployed', (e: { attempt: number; restoredFrom?: number }) => {
    if (e.attempt > 0) restoredFrom.push(e.restoredFrom);
  });
  const result = await client.done;
  return { result, restoredFrom, rows: committedRows(out) };
}

describe('sinks.custom: async two-phase commit, exactly-once under failure', () => {
  for (const parallelism of [1, 3]) {
    it(`p=${parallelism}: no failure, transient commit errors retried: exact`, async () => {
      const { result, rows } = await run(
        'none',
        { parallelism, checkpointing: { interval: 50 } },
        { flaky: '1' },
      );
      expect(result.restarts).toBe(0);
      expectExact(rows, N, KEYS);
      const sink = result.metrics.operators.find((o) => o.name === 'async sink');
      expect(sink?.counters?.commitRetries).toBeGreaterThan(0);
      expect(sink?.counters?.commits).toBeGreaterThan(0);
    });

    it.each(['throw', 'exit', 'precommit', 'commit-throw', 'commit-exit'])(
      `p=${parallelism}: a %s failure restores a checkpoint and the committed output is exact`,
      async (failure) => {
        const { result, restoredFrom, rows } = await run(failure, {
          parallelism,
          checkpointing: { interval: 50, mode: 'exactly-once' },
        });
        expect(result.restarts).toBe(1);
        expect(restoredFrom.every((id) => typeof id === 'number')).toBe(true);
        expectExact(rows, N, KEYS);
      },
    );
  }

  it("a failure while a commit is in flight: the restored attempt's re-commit of it starts after it ended", async () => {
    // The commit holds until a later attempt starts a commit (or 1.5 s): if the restored attempt
    // could start while the cancelled one still committed, the log shows the overlap.
    const { result, rows } = await run(
      'overlap',
      { parallelism: 2, checkpointing: { interval: 50, mode: 'exactly-once' } },
      { n: String(4 * N) },
    );
    expect(result.restarts).toBe(1);
    expectExact(rows, 4 * N, KEYS);
    const log = readFileSync(path.join(dir!, 'out', 'commits.log'), 'utf8')
      .trim()
      .split('\n');
    const chosen = readFileSync(path.join(dir!, 'out', '.fail'), 'utf8');
    const lines = log.filter((l) => l.split(' ')[1] === chosen);
    // The chosen commit, then its re-commit by the restored attempt (committed already: the
    // file is rewritten with the same content), one after the other.
    expect(lines.slice(0, 3)).toEqual([`start ${chosen} 0`, `end ${chosen} 0`, `start ${chosen} 1`]);
  });

  it('without checkpointing: one pre-commit and commit at end of input', async () => {
    const { result, rows } = await run('none', { parallelism: 2 });
    expect(result.status).toBe('finished');
    expectExact(rows, N, KEYS);
    expect(rows.length).toBe(N);
  });

  it('at-least-once: commits without waiting for the checkpoint; a failure loses nothing', async () => {
    const { result, rows } = await run('throw', {
      parallelism: 3,
      checkpointing: { interval: 50, mode: 'at-least-once' },
    });
    expect(result.restarts).toBe(1);
    const seen = new Set(rows.map((r) => `${r.key}/${r.count}`));
    for (const [key, e] of expectedSums(N, KEYS))
      for (let c = 1; c <= e.count; c++) expect(seen.has(`${key}/${c}`)).toBe(true);
  });
});
