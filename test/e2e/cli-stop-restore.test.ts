// `weir run` as users run it: a child process stopped with SIGTERM after a checkpoint completed
// exits 143 with a message and closes its storage; the same command with `--restore latest`
// then resumes from that checkpoint and finishes.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { committedJsonl, expectedSums, uncommittedFiles } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = path.join(ROOT, 'bin/weir.js');
const JOB = path.join(ROOT, 'test/fixtures/jobs/checkpointed-sum.mjs');

interface Run {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exit: Promise<number | null>;
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
}

function weir(args: string[]): Run {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  const run: Run = {
    child,
    stdout: '',
    stderr: '',
    exit: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    waitFor(pattern) {
      const m = run.stderr.match(pattern);
      if (m) return Promise.resolve(m);
      return new Promise((resolve) => waiters.push({ pattern, resolve }));
    },
  };
  child.stdout!.on('data', (b: Buffer) => {
    run.stdout += b.toString();
  });
  child.stderr!.on('data', (b: Buffer) => {
    run.stderr += b.toString();
    for (let i = waiters.length - 1; i >= 0; i--) {
      const m = run.stderr.match(waiters[i].pattern);
      if (m) {
        waiters[i].resolve(m);
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

describe('weir run: SIGTERM, then --restore latest', () => {
  it('stops gracefully after a checkpoint and resumes from it', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-cli-stop-'));
    const common = [
      'run',
      JOB,
      '--parallelism',
      '2',
      '--checkpoint-interval',
      '100',
      '--checkpoint-dir',
      dir,
      '--arg',
      'n=6000',
      '--arg',
      'rate=3000',
      '--verbose',
    ];
    const first = weir(common);
    const [, id] = await first.waitFor(/checkpoint (\d+) completed/);
    first.child.kill('SIGTERM');
    const code = await first.exit;
    expect(first.stderr).toMatch(/SIGTERM received, stopping the job/);
    expect(first.stderr).toMatch(/stopped by SIGTERM.*resume with --checkpoint-dir .* --restore latest/);
    expect(code).toBe(143);
    expect(Number(id)).toBeGreaterThan(0);

    const second = weir([...common, '--restore', 'latest', '--json']);
    const code2 = await second.exit;
    expect(second.stderr).toMatch(/attempt 0 restored from checkpoint (\d+)/);
    const restoredFrom = Number(second.stderr.match(/restored from checkpoint (\d+)/)![1]);
    expect(restoredFrom).toBeGreaterThanOrEqual(Number(id));
    expect(code2).toBe(0);
    const summary = JSON.parse(second.stdout.trim().split('\n').at(-1)!);
    expect(summary.status).toBe('finished');
    // Every source record after the restored positions was read: the source emitted fewer than
    // n records in this run, and more than none.
    const source = summary.operators.find((o: { name: string }) => o.name === 'numbers');
    expect(source.recordsOut).toBeGreaterThan(0);
    expect(source.recordsOut).toBeLessThan(6000);
  });
});

describe('weir run: SIGKILL, then --restore latest', () => {
  it('p=2 keyed aggregation into the file sink: committed output holds every record exactly once', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-cli-kill-'));
    const out = path.join(dir, 'out');
    const ckpt = path.join(dir, 'checkpoints');
    const n = 6000;
    const keys = 7;
    const common = [
      'run',
      path.join(ROOT, 'test/fixtures/jobs/keyed-count-to-files.mjs'),
      '--parallelism',
      '2',
      '--checkpoint-interval',
      '100',
      '--checkpoint-dir',
      ckpt,
      '--arg',
      `n=${n}`,
      '--arg',
      `keys=${keys}`,
      '--arg',
      `out=${out}`,
      '--verbose',
    ];
    const first = weir(common);
    // let a few checkpoints complete (and their part files commit), then kill without warning
    await first.waitFor(
      /checkpoint \d+ completed[\s\S]*checkpoint \d+ completed[\s\S]*checkpoint \d+ completed/,
    );
    first.child.kill('SIGKILL');
    expect(await first.exit).toBe(null);
    const committedBefore = readdirSync(out).filter((f) => f.endsWith('.jsonl')).length;
    expect(committedBefore).toBeGreaterThan(0);

    const second = weir([...common, '--restore', 'latest']);
    expect(await second.exit).toBe(0);
    expect(second.stderr).toMatch(/restored from checkpoint \d+/);

    // only committed part files remain: no in-progress or pending file
    expect(uncommittedFiles(out)).toEqual([]);
    const records = committedJsonl<{ key: number; count: number; sum: number }>(out);
    const seen = new Set(records.map((r) => `${r.key}/${r.count}`));
    expect(seen.size).toBe(records.length); // no duplicate
    expect(records).toHaveLength(n); // nothing lost
    for (const [key, e] of expectedSums(n, keys)) {
      const last = records.find((r) => r.key === key && r.count === e.count);
      expect(last).toEqual({ key, ...e });
    }
  });
});

describe('weir run --savepoint-on-stop: SIGTERM takes a savepoint, --restore DIR resumes', () => {
  it('p=2 incremental checkpoints into the file sink: committed output exactly once', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-cli-savepoint-'));
    const out = path.join(dir, 'out');
    const savepoint = path.join(dir, 'savepoint');
    const n = 6000;
    const keys = 7;
    const job = [
      'run',
      path.join(ROOT, 'test/fixtures/jobs/keyed-count-to-files.mjs'),
      '--parallelism',
      '2',
      '--checkpoint-interval',
      '100',
      '--incremental',
      '--arg',
      `n=${n}`,
      '--arg',
      `keys=${keys}`,
      '--arg',
      `out=${out}`,
      '--verbose',
    ];
    const first = weir([...job, '--checkpoint-dir', path.join(dir, 'c1'), '--savepoint-on-stop', savepoint]);
    await first.waitFor(/checkpoint \d+ completed/);
    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(143);
    expect(first.stderr).toMatch(/taking a savepoint into/);
    expect(first.stderr).toMatch(/stopped by SIGTERM with savepoint \d+ in .*resume with --restore/);

    const second = weir([...job, '--checkpoint-dir', path.join(dir, 'c2'), '--restore', savepoint]);
    expect(await second.exit).toBe(0);
    expect(second.stderr).toMatch(/restored from checkpoint \d+/);
    const records = committedJsonl<{ key: number; count: number }>(out);
    expect(new Set(records.map((r) => `${r.key}/${r.count}`)).size).toBe(n);
    expect(records).toHaveLength(n);
  });
});
