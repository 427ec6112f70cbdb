/**
 * incrementingLag: sources.postgres incrementing mode's lag from the latest probe's min/max and
 * each split's last emitted value.
 */
import { describe, expect, it } from 'vitest';
import { incrementingLag } from '../../../src/connectors/postgres-source.js';

const seen = (min: number, max: number) => ({ min: BigInt(min), max: BigInt(max) });

describe('incrementingLag', () => {
  it('is max - last for one split, and counts from min - 1 before its first row', () => {
    expect(incrementingLag([{ last: ['400'], of: 1 }], seen(1, 1000))).toBe(600);
    expect(incrementingLag([{ last: null, of: 1 }], seen(201, 1000))).toBe(800);
    expect(incrementingLag([{ last: ['1000'], of: 1 }], seen(1, 1000))).toBe(0);
  });

  it('is 0 for an empty table and never negative (a split past the probed max)', () => {
    expect(incrementingLag([{ last: null, of: 1 }], null)).toBe(0);
    expect(incrementingLag([{ last: ['1200'], of: 1 }], seen(1, 1000))).toBe(0);
  });

  it('shares the ids among hash splits: each split counts (max - last) / of', () => {
    // Splits 0 and 2 of 3 on this subtask: (1000 - 700) / 3 + (1000 - 100) / 3 = 400.
    expect(
      incrementingLag(
        [
          { last: ['700'], of: 3 },
          { last: ['100'], of: 3 },
        ],
        seen(1, 1000),
      ),
    ).toBe(400);
  });

  it('is exact past 2^53 (the difference is taken in bigint)', () => {
    const big = { min: 2n ** 60n, max: 2n ** 60n + 10n };
    expect(incrementingLag([{ last: [String(2n ** 60n + 3n)], of: 1 }], big)).toBe(7);
  });
});
