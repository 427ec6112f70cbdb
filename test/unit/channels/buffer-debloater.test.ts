import { describe, expect, test } from 'vitest';
import {
  type BufferDebloatOptions,
  bufferDebloatOptions,
  DEFAULT_BUFFER_DEBLOAT,
  type DebloatState,
  debloatStep,
  initialDebloatState,
} from '../../../src/channels/buffer-debloater.js';
import { InvalidOptionError } from '../../../src/errors.js';
import { prng } from '../../fixtures/channels/stress-sequence.js';

const MiB = 1 << 20;
const opts: BufferDebloatOptions = {
  targetMs: 20,
  periodMs: 100,
  minBytes: 32 * 1024,
  samples: 5,
  thresholdPercent: 25,
};

describe('debloatStep', () => {
  test('first period: limit = throughput over busy time × target / open channels', () => {
    // 10 MB read in 100 ms of which 50 ms idle → 200 000 bytes/ms busy; 20 ms → 4 MB; over 2 channels
    // 2 MB each, above the 1 MiB capacity → capacity, i.e. no change from the initial state.
    const s0 = initialDebloatState(MiB);
    const fast = debloatStep(s0, { bytes: 10e6, elapsedMs: 100, idleMs: 50, openChannels: 2 }, opts, MiB);
    expect(fast.publish).toBeNull();
    expect(fast.next).toEqual({ throughput: 200_000, limit: MiB });
    // 1 MB in 100 ms, never idle → 10 000 bytes/ms → 200 000 bytes of budget → 100 000 per channel.
    const slow = debloatStep(s0, { bytes: 1e6, elapsedMs: 100, idleMs: 0, openChannels: 2 }, opts, MiB);
    expect(slow.publish).toBe(100_000);
    expect(slow.next).toEqual({ throughput: 10_000, limit: 100_000 });
  });

  test('idle time does not count as slowness', () => {
    const s0 = initialDebloatState(MiB);
    // Same bytes, but the consumer waited 90 of 100 ms for input: 10× the throughput of a busy one.
    const idle = debloatStep(s0, { bytes: 100_000, elapsedMs: 100, idleMs: 90, openChannels: 1 }, opts, MiB);
    const busy = debloatStep(s0, { bytes: 100_000, elapsedMs: 100, idleMs: 0, openChannels: 1 }, opts, MiB);
    expect(idle.next.throughput).toBe(10 * busy.next.throughput!);
    expect(idle.publish).toBe(200_000);
    expect(busy.publish).toBe(opts.minBytes); // 20 000 wanted, floored at minBytes
  });

  test('a period with no busy time or no open channel changes nothing', () => {
    const s: DebloatState = { throughput: 5000, limit: 100_000 };
    expect(debloatStep(s, { bytes: 0, elapsedMs: 100, idleMs: 100, openChannels: 2 }, opts, MiB)).toEqual({
      next: s,
      publish: null,
    });
    expect(debloatStep(s, { bytes: 1e6, elapsedMs: 100, idleMs: 0, openChannels: 0 }, opts, MiB)).toEqual({
      next: s,
      publish: null,
    });
  });

  test('changes within the threshold are not published but the average moves', () => {
    const s: DebloatState = { throughput: 10_000, limit: 200_000 }; // 1 channel, 20 ms
    // measured 12 000 → EMA (alpha 1/3) 10 666.7 → 213 333 wanted: +6.7 %, under 25 %.
    const d = debloatStep(s, { bytes: 1.2e6, elapsedMs: 100, idleMs: 0, openChannels: 1 }, opts, MiB);
    expect(d.publish).toBeNull();
    expect(d.next.limit).toBe(200_000);
    expect(d.next.throughput).toBeCloseTo(10_000 + (2_000 * 2) / 6, 6);
  });

  test('scripted: a consumer that slows down shrinks the limit step by step, then recovers to the capacity', () => {
    let s = initialDebloatState(MiB);
    const published: number[] = [];
    const run = (bytesPerMs: number, periods: number): void => {
      for (let i = 0; i < periods; i++) {
        const d = debloatStep(
          s,
          { bytes: bytesPerMs * 100, elapsedMs: 100, idleMs: 0, openChannels: 1 },
          opts,
          MiB,
        );
        s = d.next;
        if (d.publish !== null) published.push(d.publish);
      }
    };
    run(100_000, 3); // 2 MB budget: capped at the capacity, nothing published
    expect(published).toEqual([]);
    run(5_000, 20); // converges towards 100 000 bytes
    expect(s.limit).toBeLessThan(130_000);
    expect(s.limit).toBeGreaterThanOrEqual(100_000);
    for (let i = 1; i < published.length; i++) expect(published[i]).toBeLessThan(published[i - 1]);
    run(100_000, 20);
    expect(s.limit).toBe(MiB);
  });

  test('seeded: the limit always lies in [minBytes, capacity] and only published values are in force', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const random = prng(seed);
      const capacity = 2 ** (12 + Math.floor(random() * 10));
      const o = { ...opts, minBytes: 256 + Math.floor(random() * 64 * 1024) };
      let s = initialDebloatState(capacity);
      let inForce = capacity;
      for (let i = 0; i < 200; i++) {
        const elapsedMs = 1 + random() * 300;
        const sample = {
          bytes: Math.floor(random() * 5e7),
          elapsedMs,
          idleMs: random() < 0.1 ? elapsedMs : random() * elapsedMs,
          openChannels: Math.floor(random() * 5),
        };
        const d = debloatStep(s, sample, o, capacity);
        if (d.publish !== null) {
          expect(d.publish).toBe(d.next.limit);
          expect(d.publish).not.toBe(inForce);
          inForce = d.publish;
        }
        expect(d.next.limit).toBe(inForce);
        expect(d.next.limit).toBeGreaterThanOrEqual(Math.min(o.minBytes, capacity));
        expect(d.next.limit).toBeLessThanOrEqual(capacity);
        s = d.next;
      }
    }
  });
});

describe('bufferDebloatOptions', () => {
  test('fills in the defaults', () => {
    expect(bufferDebloatOptions({})).toEqual(DEFAULT_BUFFER_DEBLOAT);
    expect(bufferDebloatOptions({ targetMs: 50 })).toEqual({ ...DEFAULT_BUFFER_DEBLOAT, targetMs: 50 });
  });

  test('rejects out-of-range values naming the option', () => {
    expect(() => bufferDebloatOptions({ targetMs: 0 })).toThrow(InvalidOptionError);
    expect(() => bufferDebloatOptions({ minBytes: 1.5 })).toThrow(/channels\.debloat\.minBytes/);
    expect(() => bufferDebloatOptions({ samples: 0 })).toThrow(/channels\.debloat\.samples/);
    expect(() => bufferDebloatOptions({ thresholdPercent: 101 })).toThrow(/thresholdPercent/);
    expect(() => bufferDebloatOptions({ periodMs: Number.NaN })).toThrow(/periodMs/);
  });
});
