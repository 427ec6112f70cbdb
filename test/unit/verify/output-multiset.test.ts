import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../src/verify/failure-schedule.js';
import {
  canonicalRecord,
  compareOutputs,
  multisetDifference,
  violates,
} from '../../../src/verify/output-multiset.js';

describe('canonicalRecord', () => {
  it('ignores the order of object keys, and tells apart values JSON would merge', () => {
    expect(canonicalRecord({ a: 1, b: { c: 2, d: 3 } })).toBe(canonicalRecord({ b: { d: 3, c: 2 }, a: 1 }));
    expect(canonicalRecord([1, 2])).not.toBe(canonicalRecord([2, 1]));
    expect(canonicalRecord(undefined)).not.toBe(canonicalRecord(null));
    expect(canonicalRecord(-0)).not.toBe(canonicalRecord(0));
    expect(canonicalRecord(Number.NaN)).not.toBe(canonicalRecord(null));
    expect(canonicalRecord(1n)).not.toBe(canonicalRecord('1'));
    expect(canonicalRecord(new Set([1, 2]))).toBe(canonicalRecord(new Set([2, 1])));
    expect(canonicalRecord(new Map([['a', 1]]))).not.toBe(canonicalRecord({ a: 1 }));
  });
});

describe('compareOutputs', () => {
  it('finds no difference between the same records in another order', () => {
    const d = compareOutputs([{ k: 1 }, { k: 2 }, { k: 2 }], [{ k: 2 }, { k: 1 }, { k: 2 }]);
    expect(d).toMatchObject({ lostCount: 0, duplicateCount: 0, unexpectedCount: 0 });
    expect(violates(d, 'exactly-once')).toBe(false);
  });

  it('counts lost, duplicated and unexpected records, with examples', () => {
    const reference = [{ k: 1 }, { k: 2 }, { k: 3 }, { k: 3 }];
    const actual = [{ k: 1 }, { k: 1 }, { k: 1 }, { k: 3 }, { k: 9 }];
    const d = compareOutputs(reference, actual);
    expect(d.referenceRecords).toBe(4);
    expect(d.actualRecords).toBe(5);
    expect(d.lostCount).toBe(2); // k 2 once, k 3 once
    expect(d.duplicateCount).toBe(2); // k 1 twice more
    expect(d.unexpectedCount).toBe(1); // k 9
    expect(d.lost).toEqual([
      { record: { k: 2 }, expected: 1, actual: 0 },
      { record: { k: 3 }, expected: 2, actual: 1 },
    ]);
    expect(d.duplicated).toEqual([{ record: { k: 1 }, expected: 1, actual: 3 }]);
    expect(d.unexpected).toEqual([{ record: { k: 9 }, expected: 0, actual: 1 }]);
    expect(violates(d, 'exactly-once')).toBe(true);
    expect(violates(d, 'at-least-once')).toBe(true); // records were lost
    expect(violates(compareOutputs([{ k: 1 }], [{ k: 1 }, { k: 1 }]), 'at-least-once')).toBe(false);
  });

  it('keeps at most `limit` examples but counts all', () => {
    const reference = Array.from({ length: 50 }, (_, i) => i);
    const d = compareOutputs(reference, [], 5);
    expect(d.lost).toHaveLength(5);
    expect(d.lostCount).toBe(50);
  });

  it('seeded: duplicating and dropping random records of a shuffle is counted exactly', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const rand = seededRandom(seed);
      const reference = Array.from({ length: 200 }, (_, i) => ({ key: i % 7, n: i }));
      const actual = [...reference];
      let dropped = 0;
      let duplicated = 0;
      for (let i = 0; i < 10; i++) {
        if (rand() < 0.5) {
          actual.splice(Math.floor(rand() * actual.length), 1);
          dropped++;
        } else {
          actual.push(reference[Math.floor(rand() * reference.length)]);
          duplicated++;
        }
      }
      for (let i = actual.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [actual[i], actual[j]] = [actual[j], actual[i]];
      }
      const d = compareOutputs(reference, actual);
      // A dropped record that was also duplicated cancels out in the multiset: compare net counts.
      expect(d.duplicateCount - d.lostCount).toBe(duplicated - dropped);
      expect(d.lostCount + d.duplicateCount).toBeLessThanOrEqual(dropped + duplicated);
      expect(d.unexpectedCount).toBe(0);
    }
  });
});

describe('multisetDifference', () => {
  it('returns what a growing output gained between two reads', () => {
    const before = [{ a: 1 }, { a: 2 }];
    const after = [{ a: 1 }, { a: 2 }, { a: 1 }, { a: 3 }];
    expect(multisetDifference(after, before)).toEqual([{ a: 1 }, { a: 3 }]);
    expect(multisetDifference(before, [])).toEqual(before);
  });
});
