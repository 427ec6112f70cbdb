import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WatermarkValve } from '../../../../src/worker/timers/watermark-valve.js';

describe('WatermarkValve', () => {
  it('outputs the minimum over channels, only when it advances', () => {
    const v = new WatermarkValve(3, undefined, 0);
    expect(v.onWatermark(0, 10, 0)).toBeUndefined();
    expect(v.onWatermark(1, 20, 0)).toBeUndefined();
    expect(v.onWatermark(2, 5, 0)).toBe(5);
    expect(v.onWatermark(2, 30, 0)).toBe(10);
    expect(v.onWatermark(0, 8, 0)).toBeUndefined(); // a lower watermark of a channel is ignored
    expect(v.onWatermark(0, 25, 0)).toBe(20);
    expect(v.output).toBe(20);
  });

  it('removes an ended channel from the minimum and outputs Infinity once all ended', () => {
    const v = new WatermarkValve(2, undefined, 0);
    v.onWatermark(0, 100, 0);
    expect(v.onEnd(1)).toBe(100);
    expect(v.onWatermark(0, 150, 0)).toBe(150);
    expect(v.onEnd(0)).toBe(Infinity);
  });

  it('an idle channel stops holding the watermark back and takes part again when it sends', () => {
    const v = new WatermarkValve(2, 50, 0);
    v.onWatermark(0, 100, 10);
    expect(v.checkIdle(40)).toBeUndefined(); // channel 1 silent for 40 < 50
    expect(v.nextIdleCheck()).toBe(50);
    expect(v.checkIdle(50)).toBe(100); // channel 1 idle since 0 + 50
    // channel 1 resumes with a lower watermark: the output never decreases
    expect(v.onWatermark(1, 20, 60)).toBeUndefined();
    expect(v.output).toBe(100);
    expect(v.onWatermark(0, 200, 61)).toBeUndefined(); // held back by channel 1 again
    expect(v.onWatermark(1, 150, 62)).toBe(150);
  });

  it('records count as activity; while every live channel is idle the output holds', () => {
    const v = new WatermarkValve(2, 50, 0);
    v.onWatermark(0, 10, 0);
    v.onWatermark(1, 10, 0);
    expect(v.output).toBe(10);
    v.onActivity(0, 40);
    expect(v.checkIdle(60)).toBeUndefined(); // only channel 1 idle; channel 0 still at 10
    expect(v.checkIdle(100)).toBeUndefined(); // both idle: hold
    expect(v.output).toBe(10);
    expect(v.nextIdleCheck()).toBe(Infinity);
  });

  it('without a timeout no channel becomes idle', () => {
    const v = new WatermarkValve(2, undefined, 0);
    v.onWatermark(0, 10, 0);
    expect(v.checkIdle(1e12)).toBeUndefined();
    expect(v.nextIdleCheck()).toBe(Infinity);
  });

  it('property: output is monotone and equals the running min of per-channel maxima (no idleness)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.tuple(fc.nat(3), fc.integer({ min: -100, max: 100 }), fc.boolean()), { maxLength: 60 }),
        (channels, events) => {
          const v = new WatermarkValve(channels, undefined, 0);
          const max = new Array<number>(channels).fill(-Infinity);
          const ended = new Array<boolean>(channels).fill(false);
          let last = -Infinity;
          for (const [c0, ts, end] of events) {
            const c = c0 % channels;
            if (ended[c]) continue;
            if (end) {
              ended[c] = true;
              v.onEnd(c);
            } else {
              max[c] = Math.max(max[c], ts);
              v.onWatermark(c, ts, 0);
            }
            const live = max.filter((_, i) => !ended[i]);
            const expected = Math.max(last, live.length === 0 ? Infinity : Math.min(...live));
            expect(v.output).toBe(expected);
            last = v.output;
          }
        },
      ),
    );
  });
});
