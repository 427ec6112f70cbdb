// The `weir` command as users run it (a child process of bin/weir.js): help and version exit 0,
// usage errors exit 2 with a suggestion, a job that cannot be loaded exits 1 with one clear
// message (a missing file once, a syntax error at file:line:column), and the summary reports
// start-up and steady-state records/s apart.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, weirToEnd } from './cli-process.js';

const weir = weirToEnd;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A temporary ES-module package holding `files`. */
function tempPackage(files: Record<string, string>): string {
  dir = mkdtempSync(path.join(tmpdir(), 'weir-cli-'));
  writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

describe('weir: help, version, usage errors', () => {
  it('--version prints the package version', async () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const r = await weir(['--version']);
    expect(r).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });

  it('every command has --help, exit 0', async () => {
    for (const command of ['run', 'checkpoints', 'cluster', 'bench', 'demo']) {
      const r = await weir([command, '--help']);
      expect(r.code, command).toBe(0);
      expect(r.stdout, command).toMatch(new RegExp(`usage:\\s+weir ${command}`));
    }
    const run = await weir(['help', 'run']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('--checkpoint-interval MS');
  });

  it('an unknown command exits 2 with a suggestion', async () => {
    const r = await weir(['rnu', 'job.mjs']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "rnu" (did you mean run?)');
  });

  it('an unknown flag exits 2 with a suggestion, before anything runs', async () => {
    const r = await weir(['run', 'test/fixtures/jobs/keyed-sum.mjs', '--paralelism', '2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown flag --paralelism (did you mean --parallelism?)');
    expect(r.stdout).toBe('');
  });
});

describe('weir run: a job module that cannot be loaded', () => {
  it('a missing file is reported once, exit 1', async () => {
    const missing = path.join(ROOT, 'no-such-job.mjs'); // named once: in the module's URL
    const r = await weir(['run', missing]);
    expect(r.code).toBe(1);
    expect(r.stderr.split(missing).length - 1).toBe(1);
    expect(r.stderr).toContain('no such file');
  });

  it('a syntax error in a .mjs module is reported at file:line:column', async () => {
    const pkg = tempPackage({ 'bad.mjs': 'export default 1;\nconst x = ;\n' });
    const r = await weir(['run', path.join(pkg, 'bad.mjs')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`syntax error at ${path.join(pkg, 'bad.mjs')}:2:11`);
  });

  it('a syntax error in a .ts module is reported at file:line:column (tsx or native stripping)', async () => {
    const pkg = tempPackage({
      'bad.ts': 'const a: number = 1;\nexport default function f(x: number) {\n  return g(;\n}\n',
    });
    const r = await weir(['run', path.join(pkg, 'bad.ts')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`syntax error at ${path.join(pkg, 'bad.ts')}:3:12`);
  });
});

describe('weir run: the summary', () => {
  it('reports start-up and steady-state records/s apart', async () => {
    const r = await weir([
      'run',
      'test/fixtures/jobs/keyed-sum.mjs',
      '--parallelism',
      '2',
      '--arg',
      'n=20000',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /finished in \d+\.\d\d s: start-up \d+\.\d\d s, then \d+\.\d\d s steady (at [\d,]+ records\/s|too short to rate) \(20,000 source records\)/,
    );
  });

  it('--json carries startupMs within durationMs', async () => {
    const r = await weir(['run', 'test/fixtures/jobs/keyed-sum.mjs', '--arg', 'n=1000', '--json']);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary.status).toBe('finished');
    expect(summary.startupMs).toBeGreaterThan(0);
    expect(summary.startupMs).toBeLessThanOrEqual(summary.durationMs);
  });
});
