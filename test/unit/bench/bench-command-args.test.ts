import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SUITES, selectSuites, suiteFlagArgs } from '../../../bench/suites.js';
import { BenchUsageError, parseBenchCommandArgs } from '../../../src/cli/bench-command.js';

describe('weir bench flags', () => {
  it('defaults: all suites, not quick, no files', () => {
    expect(parseBenchCommandArgs([], '/work')).toEqual({
      suites: [],
      quick: false,
      json: undefined,
      html: undefined,
      help: false,
      suiteFlags: [],
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

  it('collects the suite flags (nexmark) to forward', () => {
    const a = parseBenchCommandArgs(
      ['--suite', 'nexmark', '--queries', 'q1,q5', '--events', '1000', '--checkpoint-interval', '500'],
      '/w',
    );
    expect(a.suites).toEqual(['nexmark']);
    expect(a.suiteFlags).toEqual(['--queries', 'q1,q5', '--events', '1000', '--checkpoint-interval', '500']);
  });

  it.each([
    [['--events']],
    [['--queries', '--quick']],
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

  it('sends suite flags to the selected suites that take them, and refuses them otherwise', () => {
    const nexmark = selectSuites(['pipeline', 'nexmark']);
    expect(suiteFlagArgs(nexmark, { events: '1000', queries: 'q5' }).get('nexmark')).toEqual([
      '--events',
      '1000',
      '--queries',
      'q5',
    ]);
    expect(suiteFlagArgs(nexmark, { events: '1000' }).get('pipeline')).toBeUndefined();
    expect(() => suiteFlagArgs(selectSuites(['pipeline']), { events: '1000' })).toThrow(
      /--events is a flag of the nexmark suite; select it with --suite nexmark/,
    );
  });

  it('names an unknown suite and lists the known ones', () => {
    expect(() => selectSuites(['pipeline', 'nope'])).toThrow(/unknown suite nope; the suites are pipeline/);
  });
});
