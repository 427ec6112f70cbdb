/**
 * Finds a task stuck in user code (an infinite loop) within `stuckTaskTimeout` ms, without
 * waiting for a checkpoint to time out, and names its task and operator. Each task marks its
 * busy slot around every batch of user code (worker/busy-marker.ts; layout in channels/layout.ts);
 * the main thread polls the slots every timeout / 4 ms. A slot whose sequence was odd (busy) and
 * unchanged for the whole timeout belongs to a stuck task: the watchdog reports it once and the
 * scheduler fails the attempt (the stuck thread is terminated by the teardown).
 *
 * Covered: records batches (and restored in-flight batches) through the chain, source polls. Not
 * covered, on purpose: watermarks, timers and end of input, whose legitimate work (firing every
 * window of a million keys) can take longer than a batch of records ever should.
 */

import { BUSY_OPERATOR, BUSY_SEQUENCE, BUSY_SLOT_INTS } from '../channels/layout.js';

/** What the watchdog last saw in one slot. */
export interface BusyObservation {
  readonly sequence: number;
  /** When `sequence` was first seen, ms. */
  readonly since: number;
}

/**
 * Pure decision: the next observation of a slot and whether its task is stuck (busy, the same
 * batch, for at least `timeoutMs`).
 */
export function observeBusySlot(
  previous: BusyObservation | undefined,
  sequence: number,
  now: number,
  timeoutMs: number,
): { readonly next: BusyObservation; readonly stuck: boolean } {
  if (previous === undefined || previous.sequence !== sequence) {
    return { next: { sequence, since: now }, stuck: false };
  }
  return { next: previous, stuck: (sequence & 1) === 1 && now - previous.since >= timeoutMs };
}

export class StuckTaskWatchdog {
  /** Slots for `tasks` tasks: pass to each task with its index. */
  readonly buffer: SharedArrayBuffer;
  readonly #words: Int32Array;
  readonly #observations: (BusyObservation | undefined)[];
  #timer: NodeJS.Timeout | undefined;

  constructor(
    tasks: number,
    readonly timeoutMs: number,
    /** Called once per stuck task with its slot and the chain index of the operator it is in. */
    onStuck: (slot: number, operatorIndex: number, busyMs: number) => void,
    now: () => number = () => performance.now(),
  ) {
    this.buffer = new SharedArrayBuffer(tasks * BUSY_SLOT_INTS * 4);
    this.#words = new Int32Array(this.buffer);
    this.#observations = new Array(tasks).fill(undefined);
    const reported = new Set<number>();
    this.#timer = setInterval(
      () => {
        const t = now();
        for (let slot = 0; slot < tasks; slot++) {
          if (reported.has(slot)) continue;
          const base = slot * BUSY_SLOT_INTS;
          const { next, stuck } = observeBusySlot(
            this.#observations[slot],
            Atomics.load(this.#words, base + BUSY_SEQUENCE),
            t,
            timeoutMs,
          );
          this.#observations[slot] = next;
          if (!stuck) continue;
          reported.add(slot);
          onStuck(slot, Atomics.load(this.#words, base + BUSY_OPERATOR), t - next.since);
        }
      },
      Math.max(10, Math.floor(timeoutMs / 4)),
    );
    // A watchdog never keeps the host process alive by itself.
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
