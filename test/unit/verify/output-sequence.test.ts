import { describe, expect, it } from 'vitest';
import { compareKeyedSequences, keyOf } from '../../../src/verify/output-sequence.js';

const r = (key: string, v: number) => ({ key, v });

describe('compareKeyedSequences', () => {
  it('equal per-key sequences are equal whatever the interleaving of keys', () => {
    const a = [r('x', 1), r('y', 1), r('x', 2), r('y', 2)];
    const b = [r('y', 1), r('y', 2), r('x', 1), r('x', 2)];
    expect(compareKeyedSequences(a, b, 'key')).toBeUndefined();
  });

  it('names the first key and position where the order differs, though the multisets are equal', () => {
    const a = [r('x', 1), r('y', 1), r('y', 2), r('x', 2), r('y', 3)];
    const b = [r('x', 1), r('y', 2), r('y', 1), r('x', 2), r('y', 3)];
    expect(compareKeyedSequences(a, b, 'key')).toEqual({
      keysDiffering: 1,
      key: 'y',
      position: 0,
      expected: r('y', 1),
      actual: r('y', 2),
    });
  });

  it('a sequence that ends early or runs on differs at its end; keys only in one side count', () => {
    const a = [r('x', 1), r('x', 2)];
    const b = [r('x', 1), r('z', 1)];
    expect(compareKeyedSequences(a, b, 'key')).toEqual({
      keysDiffering: 2,
      key: 'x',
      position: 1,
      expected: r('x', 2),
    });
    expect(compareKeyedSequences([r('x', 1)], [r('x', 1), r('x', 1)], 'key')).toMatchObject({
      position: 1,
      actual: r('x', 1),
    });
  });

  it('keys by a dotted field path or a function; keys compare by value', () => {
    expect(keyOf('a.b')({ a: { b: 3 } })).toBe(3);
    expect(keyOf('a.b')({ a: 1 })).toBeUndefined();
    const a = [
      { k: { id: 1 }, v: 1 },
      { k: { id: 1 }, v: 2 },
    ];
    const b = [
      { k: { id: 1 }, v: 2 },
      { k: { id: 1 }, v: 1 },
    ];
    expect(compareKeyedSequences(a, b, (x) => (x as { k: unknown }).k)).toMatchObject({
      key: { id: 1 },
      position: 0,
    });
  });
});
