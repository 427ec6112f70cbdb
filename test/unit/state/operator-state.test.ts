import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CorruptStateError, StateAccessError } from '../../../src/errors.js';
import { OperatorStateBackend } from '../../../src/state/operator-state.js';
import { redistributeOperatorState } from '../../../src/state/redistribute-operator-state.js';

describe('redistributeOperatorState', () => {
  it('even-split concatenates in subtask order and splits into contiguous slices', () => {
    expect(redistributeOperatorState([[1, 2], [3], [4, 5, 6, 7]], 3, 'even-split')).toEqual([
      [1, 2, 3],
      [4, 5],
      [6, 7],
    ]);
    expect(redistributeOperatorState([[1]], 3, 'even-split')).toEqual([[1], [], []]);
  });

  it('union gives everything to every subtask', () => {
    expect(redistributeOperatorState([[1], [2, 3]], 2, 'union')).toEqual([
      [1, 2, 3],
      [1, 2, 3],
    ]);
  });

  it('even-split loses and duplicates nothing, and sizes differ by at most one (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.integer())), fc.integer({ min: 1, max: 9 }), (old, p) => {
        const out = redistributeOperatorState(old, p, 'even-split');
        expect(out).toHaveLength(p);
        expect(out.flat()).toEqual(old.flat());
        const sizes = out.map((s) => s.length);
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
        expect(redistributeOperatorState(old, p, 'even-split')).toEqual(out);
      }),
    );
  });

  it('rejects a bad parallelism', () => {
    expect(() => redistributeOperatorState([], 0, 'union')).toThrow(RangeError);
  });
});

describe('OperatorStateBackend', () => {
  it('snapshots at the barrier, serializes with a checksum, and restores at another parallelism', () => {
    const old = [0, 1].map((i) => {
      const b = new OperatorStateBackend();
      b.list<{ split: number; offset: number }>('positions').addAll([
        { split: i * 2, offset: 10 },
        { split: i * 2 + 1, offset: 20 },
      ]);
      b.list<string>('txns', 'union').add(`txn-${i}`);
      return b;
    });
    const snaps = old.map((b, i) => b.snapshot(i));
    // Mutations after the barrier do not reach the snapshot.
    old[0].list<{ split: number; offset: number }>('positions').get()[0].offset = 999;
    const bytes = old.map((b, i) => b.serialize(snaps[i]));
    const restored = [0, 1, 2].map((i) => {
      const b = new OperatorStateBackend();
      b.restore(bytes, i, 3);
      return b;
    });
    expect(restored.map((b) => b.list('positions').get())).toEqual([
      [
        { split: 0, offset: 10 },
        { split: 1, offset: 20 },
      ],
      [{ split: 2, offset: 10 }],
      [{ split: 3, offset: 20 }],
    ]);
    for (const b of restored) expect(b.list('txns', 'union').get()).toEqual(['txn-0', 'txn-1']);
    expect(() => restored[0].list('txns')).toThrow(StateAccessError);
  });

  it('a corrupted blob throws CorruptStateError', () => {
    const b = new OperatorStateBackend();
    b.list('l').add(1);
    const bytes = b.serialize(b.snapshot(1));
    bytes[3] ^= 1;
    expect(() => new OperatorStateBackend().restore([bytes], 0, 1)).toThrow(CorruptStateError);
  });
});
