import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createRestartStrategy,
  ExponentialDelayRestartStrategy,
  FixedDelayRestartStrategy,
} from '../../../src/coordinator/restart-strategy.js';
import { InvalidOptionError } from '../../../src/errors.js';

describe('restart strategies', () => {
  it('none never restarts', () => {
    const s = createRestartStrategy({ type: 'none' });
    expect(s.onFailure(0)).toEqual({ kind: 'give-up', restarts: 0 });
  });

  it('fixed-delay restarts `attempts` times with the same delay, then gives up for good', () => {
    const s = createRestartStrategy({ type: 'fixed-delay', attempts: 2, delay: 500 });
    expect(s.onFailure(0)).toEqual({ kind: 'restart', delayMs: 500, attempt: 1 });
    expect(s.onFailure(10_000_000)).toEqual({ kind: 'restart', delayMs: 500, attempt: 2 });
    expect(s.onFailure(20_000_000)).toEqual({ kind: 'give-up', restarts: 2 });
    expect(s.onFailure(30_000_000)).toEqual({ kind: 'give-up', restarts: 2 });
    expect(s.restarts).toBe(2);
    expect(new FixedDelayRestartStrategy({ attempts: 0 }).onFailure(0).kind).toBe('give-up');
    expect(new FixedDelayRestartStrategy()).toMatchObject({ attempts: 1, delayMs: 1000 });
  });

  it('exponential-delay grows by the multiplier and caps at max (no jitter)', () => {
    const s = new ExponentialDelayRestartStrategy({
      initial: 100,
      max: 1000,
      multiplier: 2,
      jitter: 0,
      resetAfter: 60_000,
    });
    const delays = [0, 1, 2, 3, 4, 5].map((i) => {
      const d = s.onFailure(1_000 + i * 10);
      if (d.kind !== 'restart') throw new Error('gave up');
      return d.delayMs;
    });
    expect(delays).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('exponential-delay resets to initial after resetAfter + backoff without a failure', () => {
    const s = new ExponentialDelayRestartStrategy({
      initial: 100,
      max: 10_000,
      multiplier: 2,
      jitter: 0,
      resetAfter: 5_000,
    });
    s.onFailure(0); // 100
    s.onFailure(10); // 200
    expect(s.onFailure(20)).toMatchObject({ delayMs: 400 });
    // Reset needs resetAfter + current backoff (5000 + 400) since the last failure: 5399 is not enough.
    expect(s.onFailure(20 + 5_399)).toMatchObject({ delayMs: 800 });
    expect(s.onFailure(20 + 5_399 + 800 + 5_000)).toMatchObject({ delayMs: 100 });
  });

  it('exponential-delay attempts bound the restarts between resets', () => {
    const s = new ExponentialDelayRestartStrategy({ initial: 10, jitter: 0, attempts: 2, resetAfter: 1_000 });
    expect(s.onFailure(0).kind).toBe('restart');
    expect(s.onFailure(1).kind).toBe('restart');
    expect(s.onFailure(2)).toEqual({ kind: 'give-up', restarts: 2 });
    expect(s.onFailure(100_000)).toMatchObject({ kind: 'restart', attempt: 3, delayMs: 10 });
  });

  it('jitter stays within ±jitter × backoff, clamped to [0, max], and uses the injected random source', () => {
    const lowest = new ExponentialDelayRestartStrategy({ initial: 1000, jitter: 0.25 }, () => 0);
    const highest = new ExponentialDelayRestartStrategy({ initial: 1000, jitter: 0.25 }, () => 0.999999);
    expect(lowest.onFailure(0)).toMatchObject({ delayMs: 750 });
    expect(highest.onFailure(0)).toMatchObject({ delayMs: 1250 });
    const capped = new ExponentialDelayRestartStrategy(
      { initial: 1000, max: 1000, jitter: 1 },
      () => 0.999999,
    );
    expect(capped.onFailure(0)).toMatchObject({ delayMs: 1000 });
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(fc.double({ min: 0, max: 0.999999, noNaN: true }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.integer({ min: 0, max: 100_000 }), { minLength: 20, maxLength: 20 }),
        (jitter, randoms, gaps) => {
          let i = 0;
          const s = new ExponentialDelayRestartStrategy(
            { initial: 100, max: 5_000, multiplier: 1.5, jitter, resetAfter: 50_000 },
            () => randoms[i++ % randoms.length],
          );
          let now = 0;
          for (const gap of gaps) {
            now += gap;
            const d = s.onFailure(now);
            if (d.kind !== 'restart') return false;
            const backoff = s.backoffMs;
            expect(d.delayMs).toBeGreaterThanOrEqual(Math.floor(Math.max(0, backoff * (1 - jitter))));
            expect(d.delayMs).toBeLessThanOrEqual(Math.ceil(Math.min(5_000, backoff * (1 + jitter))));
          }
          return true;
        },
      ),
      { seed: 0xbac0ff, numRuns: 200 },
    );
  });

  it('validates options with clear errors', () => {
    expect(() => createRestartStrategy({ type: 'fixed-delay', attempts: -1 })).toThrow(
      /restartStrategy.attempts: must be an integer >= 0, got -1/,
    );
    expect(() => createRestartStrategy({ type: 'fixed-delay', delay: Number.NaN })).toThrow(
      InvalidOptionError,
    );
    expect(() => createRestartStrategy({ type: 'exponential-delay', initial: 0 })).toThrow(
      /restartStrategy.initial: must be > 0/,
    );
    expect(() => createRestartStrategy({ type: 'exponential-delay', initial: 500, max: 100 })).toThrow(
      /restartStrategy.max/,
    );
    expect(() => createRestartStrategy({ type: 'exponential-delay', multiplier: 0.5 })).toThrow(/multiplier/);
    expect(() => createRestartStrategy({ type: 'exponential-delay', jitter: 1.5 })).toThrow(
      /jitter: must be in \[0, 1\]/,
    );
    expect(() => createRestartStrategy({ type: 'bogus' } as never)).toThrow(/restartStrategy.type/);
    expect(createRestartStrategy({ type: 'exponential-delay' })).toMatchObject({
      initialMs: 1000,
      maxMs: 60_000,
      multiplier: 1.5,
      resetAfterMs: 3_600_000,
      jitter: 0.1,
      attempts: Infinity,
    });
  });
});
