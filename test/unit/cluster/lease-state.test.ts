/**
 * The lease decisions on an injected clock: when a follower creates or takes over, when a holder
 * renews, and that a holder always counts itself expired before any follower may take over.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decideLease,
  HOLDER_VALIDITY_FRACTION,
  holderAfterWrite,
  type LeaseState,
  observeLease,
} from '../../../src/cluster/lease-state.js';

const L = 1000;

describe('lease decisions', () => {
  it('a follower waits for a first read, creates an absent lease, takes over one unchanged for the holder leaseMs', () => {
    expect(decideLease({ role: 'follower', observed: null }, 0, L)).toEqual({ kind: 'wait' });
    const absent = observeLease(null, { revision: 0, holder: null, leaseMs: 0 }, 5);
    expect(decideLease({ role: 'follower', observed: absent }, 5, L)).toEqual({ kind: 'create' });
    let seen = observeLease(null, { revision: 7, holder: 'x', leaseMs: 2 * L }, 100);
    expect(decideLease({ role: 'follower', observed: seen }, 100 + 2 * L - 1, L)).toEqual({ kind: 'wait' });
    // The same revision read again keeps the first observation time.
    seen = observeLease(seen, { revision: 7, holder: 'x', leaseMs: 2 * L }, 900);
    expect(decideLease({ role: 'follower', observed: seen }, 100 + 2 * L, L)).toEqual({
      kind: 'take-over',
      revision: 7,
    });
    // A renewal (new revision) restarts the clock.
    seen = observeLease(seen, { revision: 9, holder: 'x', leaseMs: 2 * L }, 2000);
    expect(decideLease({ role: 'follower', observed: seen }, 2100, L)).toEqual({ kind: 'wait' });
  });

  it('a holder renews after leaseMs/4 and expires at the validity it computed from the send time', () => {
    const h = holderAfterWrite(3, 3, 1000, L);
    expect(decideLease(h, 1000 + L / 4 - 1, L)).toEqual({ kind: 'wait' });
    expect(decideLease(h, 1000 + L / 4, L)).toEqual({ kind: 'renew' });
    expect(decideLease(h, 1000 + HOLDER_VALIDITY_FRACTION * L, L)).toEqual({ kind: 'expire' });
  });

  it('property: whenever a follower may take over a revision, its writer already counts itself expired', () => {
    // The writer sent revision r at `sentAt`; the follower saw it at `seenAt >= sentAt`
    // (delivery delay), with clocks whose rates differ by up to 20%.
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e6 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 100, max: 30_000 }),
        fc.double({ min: 0.8, max: 1.2, noNaN: true }),
        fc.integer({ min: 0, max: 100_000 }),
        (sentAt, delay, leaseMs, rate, probe) => {
          const holder: LeaseState = holderAfterWrite(1, 1, sentAt, leaseMs);
          const observed = observeLease(null, { revision: 1, holder: 'h', leaseMs }, (sentAt + delay) * rate);
          const followerNow = (sentAt + delay) * rate + probe;
          const holderNow = sentAt + delay + probe / rate; // the same instant on the holder's clock
          if (decideLease({ role: 'follower', observed }, followerNow, leaseMs).kind === 'take-over')
            expect(decideLease(holder, holderNow, leaseMs).kind).toBe('expire');
        },
      ),
    );
  });
});
