/**
 * `weir bench`: runs the benchmark suites of a source checkout. The suites are TypeScript under
 * `bench/` (not part of the installed package), so this command only checks its flags, finds the
 * package root from this file's location, and hands over to `bench/run-suites.ts` in a child
 * `node --import tsx` process (which spawns one process per suite). Paths given on the command
 * line are resolved against the caller's directory before the child runs in the package root.
 */

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const BENCH_USAGE = `usage:
  weir bench [--suite NAME[,NAME]...] [--quick] [--json PATH] [--html PATH]
    --suite   suites to run (default: all; see bench/README.md for the list)
    --quick   small runs that prove each suite works; figures not for quoting
    --json    combined results (default bench/results/bench.json, bench-quick.json with --quick)
    --html    also write the combined results as a self-contained HTML page
  suite flags, forwarded to the suites that take them (an error if none selected does):
    --queries q0,q5 --events N --parallelism P --checkpoint-interval MS   (nexmark)`;

/** Suite-specific flags (each takes a value); the runner (bench/suites.ts) says which suite takes which. */
export const SUITE_FLAGS = ['queries', 'events', 'parallelism', 'checkpoint-interval'] as const;

export interface BenchCommandArgs {
  /** Suite names in the order given; empty = all. Checked against bench/ by the runner. */
  readonly suites: readonly string[];
  readonly quick: boolean;
  /** Absolute paths (resolved against `cwd`), or undefined. */
  readonly json: string | undefined;
  readonly html: string | undefined;
  readonly help: boolean;
  /** Suite-specific flags given, as `--flag value` pairs in {@link SUITE_FLAGS} order. */
  readonly suiteFlags: readonly string[];
}

/** A bad `weir bench` command line: the message names the flag. */
export class BenchUsageError extends Error {
  override readonly name = 'BenchUsageError';
}

/** Parses `weir bench` flags; throws {@link BenchUsageError}. */
export function parseBenchCommandArgs(args: readonly string[], cwd = process.cwd()): BenchCommandArgs {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(args).values;
  } catch (e) {
    throw new BenchUsageError((e as Error).message);
  }
  const suites: string[] = [];
  for (const list of values.suite ?? []) {
    for (const name of list.split(',')) {
      const trimmed = name.trim();
      if (!/^[a-z][a-z0-9-]*$/.test(trimmed)) {
        throw new BenchUsageError(`--suite: ${JSON.stringify(trimmed)} is not a suite name`);
      }
      if (!suites.includes(trimmed)) suites.push(trimmed);
    }
  }
  const file = (flag: string, value: string | undefined): string | undefined => {
    if (value === undefined) return undefined;
    if (value.length === 0 || value.startsWith('--')) throw new BenchUsageError(`--${flag} needs a path`);
    return path.resolve(cwd, value);
  };
  const suiteFlags: string[] = [];
  for (const flag of SUITE_FLAGS) {
    const value = (values as Record<string, string | undefined>)[flag];
    if (value === undefined) continue;
    if (value.length === 0 || value.startsWith('--')) throw new BenchUsageError(`--${flag} needs a value`);
    suiteFlags.push(`--${flag}`, value);
  }
  return {
    suites,
    suiteFlags,
    quick: values.quick ?? false,
    json: file('json', values.json),
    html: file('html', values.html),
    help: values.help ?? false,
  };
}

function parse(args: readonly string[]) {
  return parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: false,
    options: {
      suite: { type: 'string', multiple: true },
      quick: { type: 'boolean' },
      json: { type: 'string' },
      html: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      queries: { type: 'string' },
      events: { type: 'string' },
      parallelism: { type: 'string' },
      'checkpoint-interval': { type: 'string' },
    },
  });
}

/** The package root: this file is `<root>/dist/cli/bench-command.js` (or `src/cli/…ts`). */
export function packageRoot(): string {
  return fileURLToPath(new URL('../../', import.meta.url));
}

export async function benchCommand(args: readonly string[]): Promise<number> {
  let parsed: BenchCommandArgs;
  try {
    parsed = parseBenchCommandArgs(args);
  } catch (e) {
    console.error(`weir bench: ${(e as Error).message}\n${BENCH_USAGE}`);
    return 2;
  }
  if (parsed.help) {
    console.log(BENCH_USAGE);
    return 0;
  }
  const root = packageRoot();
  const runner = path.join(root, 'bench', 'run-suites.ts');
  if (!existsSync(runner)) {
    console.error(
      `weir bench: ${runner} not found. The benchmarks live in bench/ of a source checkout of weir ` +
        'and are not part of the installed package: clone the repository and run `npm run bench` there.',
    );
    return 2;
  }
  const forwarded = [
    ...(parsed.suites.length > 0 ? ['--suite', parsed.suites.join(',')] : []),
    ...(parsed.quick ? ['--quick'] : []),
    ...(parsed.json ? ['--json', parsed.json] : []),
    ...(parsed.html ? ['--html', parsed.html] : []),
    ...parsed.suiteFlags,
  ];
  const child = spawn(process.execPath, ['--import', 'tsx', runner, ...forwarded], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, WEIR_BENCH_COMMAND: ['weir', 'bench', ...args].join(' ') },
  });
  return new Promise<number>((resolve) => {
    child.on('error', (error) => {
      console.error(`weir bench: could not start ${process.execPath}: ${error.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}
