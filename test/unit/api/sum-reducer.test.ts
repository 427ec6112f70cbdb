import { describe, expect, it } from 'vitest';
import { sumReducer } from '../../../src/api/sum-reducer.js';

/** Runs a reducer the way a keyed-reduce operator does for one key: emit the first, then each fold. */
function running<T>(fn: (a: T, b: T) => T, records: T[]): T[] {
  const out: T[] = [];
  let acc: T | undefined;
  for (const r of records) {
    acc = acc === undefined ? r : fn(acc, r);
    out.push(acc);
  }
  return out;
}

describe('sumReducer', () => {
  it('without a field: running sum of numbers', () => {
    expect(
      running(
        sumReducer(undefined, () => 'sum'),
        [1, 2, 3.5, -1],
      ),
    ).toEqual([1, 3, 6.5, 5.5]);
  });

  it('with a field: sums that field, other fields from the first record (Flink semantics)', () => {
    const records = [
      { key: 'a', n: 1, seen: 'first' },
      { key: 'a', n: 10, seen: 'second' },
      { key: 'a', n: 100, seen: 'third' },
    ];
    expect(
      running(
        sumReducer('n', () => 'sum'),
        records,
      ),
    ).toEqual([
      { key: 'a', n: 1, seen: 'first' },
      { key: 'a', n: 11, seen: 'first' },
      { key: 'a', n: 111, seen: 'first' },
    ]);
  });

  it('with an index on tuples: keeps arrays', () => {
    expect(
      running(
        sumReducer(1, () => 'sum'),
        [
          ['x', 1],
          ['y', 2],
        ] as [string, number][],
      ),
    ).toEqual([
      ['x', 1],
      ['x', 3],
    ]);
  });

  it('never mutates the accumulator', () => {
    const first = Object.freeze({ n: 1 });
    expect(sumReducer('n', () => 'sum')(first, { n: 2 })).toEqual({ n: 3 });
    expect(first).toEqual({ n: 1 });
  });

  it('fails with a TypeError naming the operator and the field', () => {
    expect(() => sumReducer(undefined, () => 'totals')(1, '2')).toThrow(
      'sum() of operator "totals": records must be numbers without a field argument, got "2"',
    );
    expect(() => sumReducer('n', () => 'totals')({ n: 1 }, { m: 2 })).toThrow(
      'sum("n") of operator "totals": field "n" must be a number, got undefined',
    );
  });
});
