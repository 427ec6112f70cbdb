import { describe, expect, it } from 'vitest';
import { observeBusySlot } from '../../../src/coordinator/stuck-task-watchdog.js';

describe('observeBusySlot', () => {
  it('is stuck only when one odd (busy) sequence lasted the whole timeout', () => {
    let o = observeBusySlot(undefined, 1, 0, 100);
    expect(o.stuck).toBe(false);
    o = observeBusySlot(o.next, 1, 99, 100);
    expect(o.stuck).toBe(false);
    expect(observeBusySlot(o.next, 1, 100, 100).stuck).toBe(true);
  });

  it('restarts the clock whenever the sequence moved (a new batch)', () => {
    let o = observeBusySlot(undefined, 1, 0, 100);
    o = observeBusySlot(o.next, 3, 90, 100);
    expect(o.stuck).toBe(false);
    expect(observeBusySlot(o.next, 3, 150, 100).stuck).toBe(false);
    expect(observeBusySlot(o.next, 3, 190, 100).stuck).toBe(true);
  });

  it('never judges an idle task (even sequence) stuck', () => {
    let o = observeBusySlot(undefined, 2, 0, 100);
    o = observeBusySlot(o.next, 2, 10_000, 100);
    expect(o.stuck).toBe(false);
  });
});
