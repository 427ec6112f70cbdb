import { describe, expect, it } from 'vitest';
import { parseRunArgs, RUN_FLAGS, runHelp, wantsHelp } from '../../../src/cli/run-args.js';
import { UsageError } from '../../../src/cli/usage-error.js';

const usageError = (args: string[]): string => {
  try {
    parseRunArgs(args);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error(`parseRunArgs(${args.join(' ')}) did not throw`);
};

describe('parseRunArgs', () => {
  it('maps the flags to job options', () => {
    const r = parseRunArgs([
      'job.mjs',
      '-p',
      '3',
      '--checkpoint-interval=200',
      '--mode',
      'at-least-once',
      '--arg',
      'n=10',
      '--arg',
      'k=a=b',
      '--state-backend',
      'lmdb',
      '--restart-attempts',
      '2',
      '--worker-nice',
      '7',
      '--json',
    ]);
    expect(r.job).toBe('job.mjs');
    expect(r.json).toBe(true);
    expect(r.options).toMatchObject({
      parallelism: 3,
      args: { n: '10', k: 'a=b' },
      stateBackend: 'lmdb',
      workerNice: 7,
      checkpointing: { interval: 200, mode: 'at-least-once' },
      restartStrategy: { type: 'fixed-delay', attempts: 2, delay: 0 },
    });
  });

  it('leaves checkpointing off unless a checkpoint flag is given', () => {
    expect(parseRunArgs(['job.mjs']).options.checkpointing).toBeUndefined();
    expect(parseRunArgs(['job.mjs', '--unaligned']).options.checkpointing).toMatchObject({ interval: 1000 });
    expect(parseRunArgs(['job.mjs', '--alignment-timeout', '40']).options.checkpointing).toMatchObject({
      interval: 1000,
      alignmentTimeout: 40,
    });
    expect(usageError(['job.mjs', '--alignment-timeout', 'soon'])).toContain(
      '--alignment-timeout must be a number',
    );
  });

  it('rejects an unknown flag, suggesting the closest known one', () => {
    expect(usageError(['job.mjs', '--paralelism', '2'])).toBe(
      'unknown flag --paralelism (did you mean --parallelism?)',
    );
    expect(usageError(['job.mjs', '--checkpoint-interal=5'])).toContain(
      'did you mean --checkpoint-interval?',
    );
    expect(usageError(['job.mjs', '--frobnicate'])).toBe('unknown flag --frobnicate');
    expect(usageError(['job.mjs', '-x'])).toBe('unknown flag -x');
  });

  it('rejects bad values, naming the flag', () => {
    expect(usageError(['job.mjs', '--parallelism', 'two'])).toBe('--parallelism must be a number, got "two"');
    expect(usageError(['job.mjs', '--mode', 'exactly-onse'])).toContain('(did you mean exactly-once?)');
    expect(usageError(['job.mjs', '--state-backend', 'rocksdb'])).toContain('must be heap or lmdb');
    expect(usageError(['job.mjs', '--arg', 'novalue'])).toContain('--arg must be key=value');
    expect(usageError(['job.mjs', '--checkpoint-dir'])).toContain('checkpoint-dir');
    expect(usageError([])).toContain('a job module is needed');
    expect(usageError(['a.mjs', 'b.mjs'])).toContain('one job module expected, got 2');
  });
});

describe('weir run --help', () => {
  it('is asked for by --help or -h anywhere', () => {
    expect(wantsHelp(['job.mjs', '--help'])).toBe(true);
    expect(wantsHelp(['-h'])).toBe(true);
    expect(wantsHelp(['job.mjs'])).toBe(false);
  });

  it('lists every flag of the table', () => {
    const help = runHelp();
    for (const f of RUN_FLAGS) expect(help).toContain(`--${f.name}`);
    expect(help).toContain('2 usage error');
  });
});
