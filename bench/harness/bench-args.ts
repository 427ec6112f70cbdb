/**
 * The command-line flags every end-to-end benchmark accepts:
 *
 *   --quick          a small run (smoke test / CI), numbers not meant to be quoted
 *   --json PATH      where to write the JSON result (default: the benchmark's own bench/results file)
 *   --n N            records per run (overrides the benchmark's default / quick size)
 *   --rounds R       measured rounds (see runInterleaved)
 *   --warmup W       unrecorded warmup rounds
 *   --all            also run the benchmark's secondary cases (slow ones left out by default)
 *   --help
 *
 * Unknown flags are errors (a typo must not silently run the default benchmark).
 */

import { parseArgs } from 'node:util';

export interface BenchArgs {
  readonly quick: boolean;
  /** `undefined` when not given: the benchmark picks its default path. */
  readonly json: string | undefined;
  readonly n: number | undefined;
  readonly rounds: number | undefined;
  readonly warmup: number | undefined;
  /** Include secondary cases; what those are is up to each benchmark. */
  readonly all: boolean;
  readonly help: boolean;
}

export const BENCH_ARGS_USAGE =
  '[--quick] [--json PATH] [--n RECORDS] [--rounds R] [--warmup W] [--all] [--help]';

function positiveInteger(flag: string, text: string | undefined, allowZero: boolean): number | undefined {
  if (text === undefined) return undefined;
  // Accept `3_000_000` and `3e6` as well as plain digits.
  const value = Number(text.replaceAll('_', ''));
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new RangeError(`--${flag} must be an integer ≥ ${allowZero ? 0 : 1}, got '${text}'`);
  }
  return value;
}

/** Parses `argv` (default: this process's arguments). Throws `TypeError`/`RangeError` on bad input. */
export function parseBenchArgs(argv: readonly string[] = process.argv.slice(2)): BenchArgs {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      n: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      all: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  return {
    quick: values.quick === true,
    json: values.json,
    n: positiveInteger('n', values.n, false),
    rounds: positiveInteger('rounds', values.rounds, false),
    warmup: positiveInteger('warmup', values.warmup, true),
    all: values.all === true,
    help: values.help === true,
  };
}
