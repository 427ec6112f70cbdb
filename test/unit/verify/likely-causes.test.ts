import { describe, expect, it } from 'vitest';
import { likelyCauses } from '../../../src/verify/likely-causes.js';

const NOW = Date.UTC(2026, 0, 15);

describe('likelyCauses', () => {
  it('puts wall-clock time first when differing records hold current epoch milliseconds', () => {
    const causes = likelyCauses([{ key: 1, at: NOW - 5000 }], NOW, false);
    expect(causes[0].cause).toBe('wall-clock time');
    expect(causes[0].why).toMatch(/epoch milliseconds/);
  });

  it('puts random values first when differing records hold fractions like Math.random()', () => {
    const causes = likelyCauses([{ key: 'a', score: 0.7316402 }], NOW, false);
    expect(causes[0].cause).toBe('random values');
    expect(causes[0].why).toMatch(/fractions/);
  });

  it('names input order only when some task reads several channels', () => {
    const records = [{ key: 'heads', count: 3 }];
    expect(likelyCauses(records, NOW, false).map((c) => c.cause)).toEqual([
      'wall-clock time',
      'random values',
      'external input',
    ]);
    expect(likelyCauses(records, NOW, true).map((c) => c.cause)).toContain('input order');
  });
});
