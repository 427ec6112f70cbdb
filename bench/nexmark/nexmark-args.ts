/**
 * The flags of the Nexmark suite (`weir bench --suite nexmark …` forwards them):
 *
 *   --queries q0,q1,…        queries to run (default: all implemented, in order)
 *   --events N               events per query (default 1 000 000; --quick 50 000)
 *   --parallelism P          weir parallelism (default 2, this machine's cores)
 *   --checkpoint-interval MS exactly-once checkpoints every MS ms; 0 = off (default 1000)
 *   --quick, --json PATH, --help
 *
 * Unknown flags and bad values are errors naming the flag (a typo must not run the default).
 */

import { parseArgs } from 'node:util';

export interface NexmarkArgs {
  readonly queries: readonly string[];
  readonly events: number;
  readonly parallelism: number;
  /** ms; 0 = checkpointing off. */
  readonly checkpointInterval: number;
  readonly quick: boolean;
  readonly json: string | undefined;
  readonly help: boolean;
}

export const NEXMARK_USAGE =
  'usage: node --import tsx bench/nexmark/run.ts [--queries q0,q1,...] [--events N] [--parallelism P] [--checkpoint-interval MS] [--quick] [--json PATH]';

function integer(flag: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text.replaceAll('_', ''));
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`--${flag} must be an integer ≥ ${min}, got '${text}'`);
  }
  return value;
}

/** Parses `argv`; `known` are the implemented query names (default order). Throws RangeError/TypeError. */
export function parseNexmarkArgs(argv: readonly string[], known: readonly string[]): NexmarkArgs {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      queries: { type: 'string' },
      events: { type: 'string' },
      parallelism: { type: 'string' },
      'checkpoint-interval': { type: 'string' },
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const queries = values.queries === undefined ? [...known] : values.queries.split(',').map((q) => q.trim());
  const unknown = queries.filter((q) => !known.includes(q));
  if (unknown.length > 0 || queries.length === 0) {
    throw new RangeError(
      `--queries: unknown ${unknown.join(', ') || '(empty list)'}; the implemented queries are ${known.join(', ')}`,
    );
  }
  const quick = values.quick === true;
  return {
    queries,
    events: integer('events', values.events, 1) ?? (quick ? 50_000 : 1_000_000),
    parallelism: integer('parallelism', values.parallelism, 1) ?? 2,
    checkpointInterval: integer('checkpoint-interval', values['checkpoint-interval'], 0) ?? 1000,
    quick,
    json: values.json,
    help: values.help === true,
  };
}
