/** A CoordinatorClock driven by the test: time moves only in `advance`, timers fire in order. */

import type { CoordinatorClock, TimerHandle } from '../../../src/coordinator/coordinator-clock.js';

interface Timer {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

export class FakeClock implements CoordinatorClock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Map<number, Timer>();

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    if (!(ms >= 0)) throw new Error(`negative or NaN timer delay ${ms}`);
    const id = this.#nextId++;
    this.#timers.set(id, { id, at: this.#now + ms, fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle as number);
  }

  /** Timers armed and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due (also ones armed on the way), in time order. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      const due = [...this.#timers.values()]
        .filter((t) => t.at <= end)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) break;
      this.#timers.delete(due.id);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
    }
    this.#now = end;
  }
}

/** Lets promise callbacks (an awaited commit) run. Not a sleep: no time passes on any clock. */
export function flushPromises(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
