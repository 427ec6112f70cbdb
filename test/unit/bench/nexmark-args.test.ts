/** The Nexmark suite's flags: defaults, a query subset, and bad input named by its flag. */
import { describe, expect, it } from 'vitest';
import { parseNexmarkArgs } from '../../../bench/nexmark/nexmark-args.js';

const KNOWN = ['q0', 'q1', 'q5'];

describe('parseNexmarkArgs', () => {
  it('defaults: every query, 1 M events, p=2, exactly-once every 1 s', () => {
    expect(parseNexmarkArgs([], KNOWN)).toEqual({
      queries: KNOWN,
      events: 1_000_000,
      parallelism: 2,
      checkpointInterval: 1000,
      quick: false,
      json: undefined,
      help: false,
    });
    expect(parseNexmarkArgs(['--quick'], KNOWN).events).toBe(50_000);
  });

  it('takes a subset of queries in the order given, and checkpointing off with 0', () => {
    const a = parseNexmarkArgs(
      ['--queries', 'q5,q0', '--events', '2_000', '--checkpoint-interval', '0'],
      KNOWN,
    );
    expect(a.queries).toEqual(['q5', 'q0']);
    expect(a.events).toBe(2000);
    expect(a.checkpointInterval).toBe(0);
  });

  it.each([
    [['--queries', 'q6'], /--queries: unknown q6; the implemented queries are q0, q1, q5/],
    [['--events', '0'], /--events must be an integer ≥ 1/],
    [['--parallelism', '1.5'], /--parallelism must be an integer ≥ 1/],
    [['--checkpoint-interval=-1'], /--checkpoint-interval must be an integer ≥ 0/],
    [['--event', '10'], /Unknown option '--event'/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseNexmarkArgs(argv, KNOWN)).toThrow(message);
  });
});
