/**
 * `weir run` with a user-defined async exactly-once sink (test/fixtures/jobs/async-sink.mjs),
 * killed with SIGKILL inside the commit of a completed checkpoint (between its pre-commit and
 * the end of its commit: the process kills itself there, once), then run again with
 * `--restore latest`: the restored checkpoint's committables are committed again, and the
 * committed files hold every record exactly once.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { committedRows, expectExact } from './async-sink-helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = path.join(ROOT, 'bin/weir.js');
const JOB = path.join(ROOT, 'test/fixtures/jobs/async-sink.mjs');

function weir(args: string[]): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })));
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('weir run: SIGKILL inside a commit, then --restore latest', () => {
  it.each([1, 3])('p=%i: committed output of the async sink is exact', async (parallelism) => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-async-sink-cli-'));
    const out = path.join(dir, 'out');
    const n = 4000;
    const keys = 10;
    const common = [
      'run',
      JOB,
      '--parallelism',
      String(parallelism),
      '--checkpoint-interval',
      '50',
      '--checkpoint-dir',
      path.join(dir, 'checkpoints'),
      '--arg',
      `n=${n}`,
      '--arg',
      `keys=${keys}`,
      '--arg',
      `out=${out}`,
      '--arg',
      'failure=commit-kill',
      '--verbose',
    ];
    const first = await weir(common);
    expect(first.signal, `exit code ${first.code}; stderr:\n${first.stderr}`).toBe('SIGKILL');
    const killedIn = Number(readFileSync(path.join(out, '.killed'), 'utf8'));
    expect(killedIn).toBeGreaterThanOrEqual(2);

    const second = await weir([...common, '--restore', 'latest']);
    expect(second.code, second.stderr).toBe(0);
    const restoredFrom = Number(second.stderr.match(/restored from checkpoint (\d+)/)?.[1]);
    // The kill came after checkpoint `killedIn` completed: the restore starts there or later.
    expect(restoredFrom).toBeGreaterThanOrEqual(killedIn);
    expect(existsSync(path.join(out, `part-0-${killedIn}.json`))).toBe(true);
    expectExact(committedRows(out), n, keys);
  });
});
