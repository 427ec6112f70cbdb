// mapAsync under a hard crash: `weir run` is SIGKILLed after checkpoints completed (requests in
// flight), then the same command with `--restore latest` resumes. The file sink's committed part
// files must hold every input's result exactly once: the in-flight requests of the restored
// checkpoint were issued again, nothing after it was committed twice — also when the keyed
// operator is restored at another parallelism.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { committedJsonl, uncommittedFiles } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = path.join(ROOT, 'bin/weir.js');
const JOB = path.join(ROOT, 'test/fixtures/jobs/async-enrich.mjs');

interface Run {
  readonly child: ChildProcess;
  stderr: string;
  readonly exit: Promise<number | null>;
  waitFor(pattern: RegExp): Promise<void>;
}

function weir(args: string[]): Run {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const run: Run = {
    child,
    stderr: '',
    exit: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    waitFor(pattern) {
      if (pattern.test(run.stderr)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ pattern, resolve }));
    },
  };
  child.stderr!.on('data', (b: Buffer) => {
    run.stderr += b.toString();
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i].pattern.test(run.stderr)) {
        waiters[i].resolve();
        waiters.splice(i, 1);
      }
    }
  });
  return run;
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('mapAsync: SIGKILL of weir run, then --restore latest', () => {
  // [parallelism, parallelism of the restored run, keyed, ordered]. The keyed case restores at
  // another parallelism: its unemitted records follow their key groups to the new subtasks.
  for (const [parallelism, restoreParallelism, keyed, ordered] of [
    [1, 1, 'false', 'true'],
    [3, 2, 'true', 'false'],
  ] as const) {
    it(`p=${parallelism}${restoreParallelism !== parallelism ? ` restored at p=${restoreParallelism}` : ''}${keyed === 'true' ? ', keyed' : ''}, ${ordered === 'true' ? 'ordered' : 'unordered'}: committed output holds every result exactly once`, async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'weir-async-kill-'));
      const out = path.join(dir, 'out');
      const n = 6000;
      const common = [
        'run',
        JOB,
        '--parallelism',
        String(parallelism),
        '--checkpoint-interval',
        '100',
        '--checkpoint-dir',
        path.join(dir, 'checkpoints'),
        '--arg',
        `n=${n}`,
        '--arg',
        'rate=2000',
        '--arg',
        'capacity=32',
        '--arg',
        `keyed=${keyed}`,
        '--arg',
        `ordered=${ordered}`,
        '--arg',
        `out=${out}`,
        '--verbose',
      ];
      const first = weir(common);
      await first.waitFor(
        /checkpoint \d+ completed[\s\S]*checkpoint \d+ completed[\s\S]*checkpoint \d+ completed/,
      );
      first.child.kill('SIGKILL');
      expect(await first.exit).toBe(null);
      const before = committedJsonl<{ x: number }>(out).length;
      expect(before).toBeGreaterThan(0);
      expect(before).toBeLessThan(n);

      const rescaled = common.map((arg, i) =>
        common[i - 1] === '--parallelism' ? String(restoreParallelism) : arg,
      );
      const second = weir([...rescaled, '--restore', 'latest']);
      expect(await second.exit, second.stderr).toBe(0);
      expect(second.stderr).toMatch(/restored from checkpoint \d+/);

      expect(uncommittedFiles(out)).toEqual([]);
      const records = committedJsonl<{ x: number; y: number }>(out);
      expect(new Set(records.map((r) => r.x)).size).toBe(n); // nothing lost
      expect(records).toHaveLength(n); // no duplicate
      for (const r of records) expect(r.y).toBe(3 * r.x + 1);
    });
  }
});
