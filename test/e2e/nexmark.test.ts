/**
 * The Nexmark queries (bench/nexmark/queries.mjs) against their single-thread references
 * (bench/nexmark/reference.mjs) over the same generated events: every query's output, as a
 * multiset, equals the reference's — at parallelism 1 and 2, straight through and with a failure
 * injected after a completed checkpoint (exactly-once: nothing lost, nothing twice).
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module shared with the benchmark
import { QUERY_NAMES } from '../../bench/nexmark/queries.mjs';
// @ts-expect-error: a plain .mjs module shared with the benchmark
import { REFERENCES } from '../../bench/nexmark/reference.mjs';
import { nexmark, startJob } from '../../dist/index.js';
import { fixture } from './helpers.js';
import { restoredCheckpoints } from './restored-checkpoints.js';

const EVENTS = 12_000;
const OPTIONS = { windowMs: 200, slideMs: 50 };
const config = nexmark.generatorConfig({ events: EVENTS });
const events = Array.from({ length: EVENTS }, (_, n) => nexmark.nexmarkEvent(config, n));

/** A canonical sorted form of a multiset of records. */
const canonical = (rows: readonly unknown[]): string[] => rows.map((r) => JSON.stringify(r)).sort();

const expected: Record<string, string[]> = {};
for (const q of QUERY_NAMES as string[]) expected[q] = canonical(REFERENCES[q](events, OPTIONS));

describe('Nexmark references', () => {
  it('every query has output on this input (the comparison can fail)', () => {
    for (const q of QUERY_NAMES as string[]) expect(expected[q].length, q).toBeGreaterThan(0);
    // q5/q7 pick maxima: fewer rows than their input windows hold
    expect(expected.q7.length).toBeLessThan(expected.q0.length / 10);
  });
});

const CASES: readonly (readonly [number, 'none' | 'throw'])[] = [
  [1, 'none'],
  [2, 'none'],
  [2, 'throw'],
];

describe('Nexmark queries on weir equal their references', () => {
  for (const [parallelism, failure] of CASES) {
    it(`p=${parallelism}, failure=${failure}: ${(QUERY_NAMES as string[]).join(', ')}`, async () => {
      const client = await startJob(fixture('nexmark-queries.mjs'), {
        parallelism,
        checkpointing: { interval: 100, mode: 'exactly-once' },
        restartStrategy: { type: 'fixed-delay', attempts: 2, delay: 0 },
        args: {
          events: String(EVENTS),
          failure,
          windowMs: String(OPTIONS.windowMs),
          slideMs: String(OPTIONS.slideMs),
          // spread over ~2 s of wall time so checkpoints complete mid-stream
          ...(failure === 'none' ? {} : { rate: String(EVENTS / 2) }),
        },
      });
      const restoredFrom = restoredCheckpoints(client);
      const result = await client.done;
      expect(result.restarts).toBe(failure === 'none' ? 0 : 1);
      expect(restoredFrom.every((id) => typeof id === 'number')).toBe(true);
      for (const q of QUERY_NAMES as string[]) {
        const got = canonical(result.sinks[q] as unknown[]);
        expect(got.length, q).toBe(expected[q].length);
        expect(got, q).toEqual(expected[q]);
      }
    });
  }
});
