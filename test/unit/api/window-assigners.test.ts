import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { windowCover, windowStart, windows, windowsIntersect } from '../../../src/api/windows.js';
import { InvalidOptionError } from '../../../src/errors.js';

describe('window assigners', () => {
  it('tumbling: one window [k*size + offset, ...) containing the timestamp, negatives included', () => {
    const t = windows.tumbling({ size: 100 });
    expect(t.assignWindows(0)).toEqual([{ start: 0, end: 100 }]);
    expect(t.assignWindows(99)).toEqual([{ start: 0, end: 100 }]);
    expect(t.assignWindows(100)).toEqual([{ start: 100, end: 200 }]);
    expect(t.assignWindows(-1)).toEqual([{ start: -100, end: 0 }]);
    expect(windows.tumbling({ size: 100, offset: 30 }).assignWindows(10)).toEqual([{ start: -70, end: 30 }]);
    expect(t.time).toBe('event');
    expect(windows.tumbling({ size: 5, time: 'processing' }).time).toBe('processing');
  });

  it('sliding: size/slide windows, newest first, each containing the timestamp', () => {
    const s = windows.sliding({ size: 300, slide: 100 });
    expect(s.assignWindows(250)).toEqual([
      { start: 200, end: 500 },
      { start: 100, end: 400 },
      { start: 0, end: 300 },
    ]);
    expect(windows.sliding({ size: 100, slide: 30 }).assignWindows(0)).toEqual([
      { start: 0, end: 100 },
      { start: -30, end: 70 },
      { start: -60, end: 40 },
      { start: -90, end: 10 },
    ]);
  });

  it('property: every assigned window contains the timestamp; sliding gives ceil(size/slide) windows', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1e6, max: 1e6 }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: -1000, max: 1000 }),
        (ts, size, slide, offset) => {
          for (const w of windows.tumbling({ size, offset }).assignWindows(ts)) {
            expect(w.start <= ts && ts < w.end && w.end - w.start === size).toBe(true);
          }
          const ws = windows.sliding({ size, slide, offset }).assignWindows(ts);
          for (const w of ws) expect(w.start <= ts && ts < w.end).toBe(true);
          // when slide divides size exactly, the count is exactly size/slide (Flink's rule)
          if (size % slide === 0) expect(ws.length).toBe(size / slide);
          expect(new Set(ws.map((w) => (((w.start - offset) % slide) + slide) % slide)).size).toBe(
            ws.length === 0 ? 0 : 1,
          );
        },
      ),
    );
    expect(windowStart(-5, 0, 10)).toBe(-10);
  });

  it('session: [t, t + gap); windows merge when they overlap or touch', () => {
    const s = windows.session({ gap: 50 });
    expect(s.merging).toBe(true);
    expect(s.assignWindows(10)).toEqual([{ start: 10, end: 60 }]);
    expect(windowsIntersect({ start: 10, end: 60 }, { start: 60, end: 110 })).toBe(true);
    expect(windowsIntersect({ start: 10, end: 60 }, { start: 61, end: 111 })).toBe(false);
    expect(windowCover({ start: 10, end: 60 }, { start: 40, end: 90 })).toEqual({ start: 10, end: 90 });
  });

  it('rejects bad options with the option named', () => {
    expect(() => windows.tumbling({ size: 0 })).toThrow(InvalidOptionError);
    expect(() => windows.tumbling({ size: 0 })).toThrow(/tumbling\.size/);
    expect(() => windows.sliding({ size: 10, slide: -1 })).toThrow(/sliding\.slide/);
    expect(() => windows.session({ gap: Number.NaN })).toThrow(/session\.gap/);
    expect(() => windows.tumbling({ size: 10, time: 'wall' as never })).toThrow(/tumbling\.time/);
    expect(() => windows.tumbling(undefined as never)).toThrow(/tumbling\.size/);
  });
});
