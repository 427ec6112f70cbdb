import { describe, expect, it } from 'vitest';
import { InternalTimerService } from '../../../../src/worker/timers/internal-timer-service.js';
import { TaskTime } from '../../../../src/worker/timers/task-time.js';
import { TimerHeap } from '../../../../src/worker/timers/timer-heap.js';
import { heapBackend } from './heap-backend.js';

class FakeTime extends TaskTime {
  clock = 1000;
  override now(): number {
    return this.clock;
  }
}

function service(backend = heapBackend(), time = new FakeTime()) {
  const fired: string[] = [];
  const timers = new InternalTimerService(backend, time, (ts, domain) =>
    fired.push(`${domain}:${String(backend.currentKey)}@${ts}`),
  );
  const at = (key: unknown) => {
    backend.setCurrentKey(key);
    return timers;
  };
  return { backend, time, timers, fired, at };
}

describe('TimerHeap', () => {
  it('pops in timestamp order, ties in insertion order', () => {
    const h = new TimerHeap();
    const input = [5, 3, 9, 3, 1, 7, 5, 0, 2];
    for (const [i, ts] of input.entries()) h.push(ts, i);
    const out: [number, unknown][] = [];
    while (h.size > 0) {
      const e = h.pop()!;
      out.push([e.timestamp, e.key]);
    }
    expect(out).toEqual([
      [0, 7],
      [1, 4],
      [2, 8],
      [3, 1],
      [3, 3],
      [5, 0],
      [5, 6],
      [7, 5],
      [9, 2],
    ]);
    expect(h.peekTimestamp()).toBe(Infinity);
  });
});

describe('InternalTimerService', () => {
  it('fires event-time timers once the watermark passes them, in time order, once per (key, time)', () => {
    const { at, timers, fired } = service();
    at('a').registerEventTime(20);
    at('b').registerEventTime(10);
    at('a').registerEventTime(10);
    at('a').registerEventTime(20); // duplicate: one timer
    at('b').registerEventTime(30);
    timers.advanceWatermark(9);
    expect(fired).toEqual([]);
    timers.advanceWatermark(20);
    expect(fired).toEqual(['event:b@10', 'event:a@10', 'event:a@20']);
    expect(timers.currentWatermark).toBe(20);
    timers.advanceWatermark(Infinity);
    expect(fired.slice(3)).toEqual(['event:b@30']);
  });

  it('deleted timers do not fire; a re-registered one fires once', () => {
    const { at, timers, fired } = service();
    at('a').registerEventTime(5);
    at('a').deleteEventTime(5);
    at('b').registerEventTime(6);
    at('b').deleteEventTime(6);
    at('b').registerEventTime(6);
    timers.advanceWatermark(100);
    expect(fired).toEqual(['event:b@6']);
  });

  it('a callback may register a timer that is already due: it fires in the same round', () => {
    const backend = heapBackend();
    const fired: number[] = [];
    const timers: InternalTimerService = new InternalTimerService(backend, new FakeTime(), (ts) => {
      fired.push(ts);
      if (ts === 10) timers.registerEventTime(15);
    });
    backend.setCurrentKey('k');
    timers.registerEventTime(10);
    timers.advanceWatermark(20);
    expect(fired).toEqual([10, 15]);
  });

  it('processing-time timers request their deadline and fire when the loop reports the time', () => {
    const { at, timers, fired, time } = service();
    at('a').registerProcessingTime(1500);
    at('b').registerProcessingTime(1200);
    expect(time.nextDeadline).toBe(1200);
    time.nextDeadline = Infinity; // what the loop does before calling the operators
    timers.onProcessingTime(1300);
    expect(fired).toEqual(['processing:b@1200']);
    expect(time.nextDeadline).toBe(1500);
    expect(timers.currentProcessingTime()).toBe(1000);
  });

  it('timers are keyed state: a restored service fires exactly the timers that had not fired', async () => {
    const first = service();
    first.at('a').registerEventTime(10);
    first.at('b').registerEventTime(20);
    first.at(['composite', 1]).registerEventTime(30);
    first.at('c').registerProcessingTime(2000);
    first.timers.advanceWatermark(15);
    expect(first.fired).toEqual(['event:a@10']);

    const restoredTime = new FakeTime();
    const second = service(await first.backend.restoreCopy(), restoredTime);
    expect(restoredTime.nextDeadline).toBe(2000);
    second.timers.advanceWatermark(Infinity);
    expect(second.fired).toEqual(['event:b@20', 'event:composite,1@30']);
    second.timers.onProcessingTime(5000);
    expect(second.fired.slice(2)).toEqual(['processing:c@2000']);
  });

  it('rescaling: each new subtask fires exactly the timers of the keys it owns, together all of them', async () => {
    const first = service();
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
    for (const [i, k] of keys.entries()) first.at(k).registerEventTime(100 + i);
    const parts = await first.backend.restoreRescaled(3);
    const fired = parts.map((b) => {
      const s = service(b);
      s.timers.advanceWatermark(Infinity);
      return s.fired;
    });
    expect(fired.every((f) => f.length > 0)).toBe(true);
    expect(fired.flat().sort()).toEqual(keys.map((k, i) => `event:${k}@${100 + i}`).sort());
  });

  it('rejects a non-number time', () => {
    const { at } = service();
    expect(() => at('a').registerEventTime('5' as never)).toThrow(TypeError);
  });
});
