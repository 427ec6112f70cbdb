/**
 * `weir bench` through the real CLI (bin/weir.js → dist/, so `npm run build` first): flags are
 * checked before anything runs, and a bad suite name is refused by the runner with the list of
 * suites. No suite runs here (benchmarks never run in the test suite).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../../bin/weir.js', import.meta.url));
const weir = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

describe('weir bench (CLI)', () => {
  it('--help prints the usage and exits 0', () => {
    const r = weir('bench', '--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('weir bench [--suite NAME[,NAME]...] [--quick] [--json PATH] [--html PATH]');
  });

  it('an unknown flag is a usage error (exit 2) naming it', () => {
    const r = weir('bench', '--quik');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/weir bench: Unknown option '--quik'/);
  });

  it('an unknown suite is refused before any suite runs, listing the suites', () => {
    const r = weir('bench', '--suite', 'pipeline,nope');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /unknown suite nope; the suites are pipeline, pipeline-cpu-heavy, checkpoint, latency, recovery, channels, state, keyed-access, log/,
    );
    expect(r.stdout).not.toContain('━━ pipeline');
  });

  it('weir help lists bench', () => {
    expect(weir('help').stdout).toContain(
      'weir bench [--suite NAME[,NAME]] [--quick] [--json PATH] [--html PATH]',
    );
  });
});
