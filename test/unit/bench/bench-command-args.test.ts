import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SUITES, selectSuites } from '../../../bench/suites.js';
import { BenchUsageError, parseBenchCommandArgs } from '../../../src/cli/bench-command.js';

describe('weir bench flags', () => {
  it('defaults: all suites, not quick, no files', () => {
    expect(parseBenchCommandArgs([], '/work')).toEqual({
      suites: [],
      quick: false,
      json: undefined,
      html: undefined,
      help: false,
    });
  });

  it('--suite takes comma lists and repeats, in order, without duplicates', () => {
    const a = parseBenchCommandArgs(['--suite', 'latency,pipeline', '--suite', 'pipeline, state'], '/w');
    expect(a.suites).toEqual(['latency', 'pipeline', 'state']);
  });

  it('resolves --json and --html against the caller directory', () => {
    const a = parseBenchCommandArgs(['--quick', '--json', 'out/b.json', '--html', '/abs/b.html'], '/home/u');
    expect(a.quick).toBe(true);
    expect(a.json).toBe(path.resolve('/home/u', 'out/b.json'));
    expect(a.html).toBe('/abs/b.html');
  });

  it.each([
    [['--suites', 'x']],
    [['--suite', 'Pipe line']],
    [['--suite', '']],
    [['--json']],
    [['--json', '--quick']],
    [['pipeline']],
  ])('rejects %j with a usage error', (args) => {
    expect(() => parseBenchCommandArgs(args, '/w')).toThrow(BenchUsageError);
  });
});

describe('suite selection', () => {
  it('all suites by default, in registry order; each script exists in the repo', async () => {
    expect(selectSuites([]).map((s) => s.name)).toEqual(SUITES.map((s) => s.name));
    const { existsSync } = await import('node:fs');
    for (const s of SUITES)
      expect(existsSync(new URL(`../../../${s.script}`, import.meta.url)), s.script).toBe(true);
  });

  it('names an unknown suite and lists the known ones', () => {
    expect(() => selectSuites(['pipeline', 'nope'])).toThrow(/unknown suite nope; the suites are pipeline/);
  });
});
