import { describe, expect, it } from 'vitest';
import { linearScale, niceStep, niceTicks } from '../../../src/report/index.js';

describe('chart scales', () => {
  it('nice steps are 1, 2, 2.5 or 5 times a power of ten', () => {
    expect(niceStep(10, 5)).toBe(2);
    expect(niceStep(1, 4)).toBe(0.25);
    expect(niceStep(73, 5)).toBe(20);
    expect(niceStep(0.003, 3)).toBeCloseTo(0.001);
  });

  it('ticks cover the data and start/end on a step', () => {
    const t = niceTicks(3, 97, 5);
    expect(t.min).toBe(0);
    expect(t.max).toBe(100);
    expect(t.ticks.map((x) => x.value)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(t.ticks.map((x) => x.label)).toEqual(['0', '20', '40', '60', '80', '100']);
  });

  it('handles an empty or flat domain', () => {
    expect(niceTicks(5, 5).ticks.length).toBeGreaterThan(1);
    expect(niceTicks(Number.NaN, 1).ticks).toEqual([]);
  });

  it('linear scale maps the domain ends onto the range ends (inverted y works)', () => {
    const s = linearScale(0, 10, 300, 20);
    expect(s(0)).toBe(300);
    expect(s(10)).toBe(20);
    expect(s(5)).toBe(160);
    expect(linearScale(1, 1, 0, 100)(1)).toBe(50);
  });
});
