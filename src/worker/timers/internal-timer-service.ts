/**
 * The timers of one keyed operator (Flink's `InternalTimerService`): event-time and
 * processing-time timers per key, deduplicated per `(key, timestamp)`.
 *
 * State: the timers are keyed map state (`timestamp -> 1`) in the operator's `KeyedStateBackend`
 * (state names {@link EVENT_TIMERS} and {@link PROCESSING_TIMERS}), so they are snapshotted,
 * redistributed by key group on rescale and restored by whichever backend is in use, with no
 * snapshot code here. The two heaps are in-memory indexes, rebuilt from state when the service is
 * created (`backend.keys(name)`, O(timers)).
 *
 * Firing: event-time timers fire when the operator's watermark reaches them (`timestamp <=
 * watermark`), in timestamp order across keys; processing-time timers when the task loop calls
 * `onProcessingTime` at or after their time (the service requests its next deadline from the
 * task's `TaskTime`, so the loop wakes for it). A timer's state entry is removed before its
 * callback runs, so a timer fires once, and a callback may register new timers (one at or before
 * the current time fires in the same round). After a restore a timer fires exactly once in the
 * exactly-once sense: either it fired before the checkpoint (its entry is gone from the snapshot)
 * or it fires after the restore.
 */

import type { MapState } from '../../api/functions.js';
import type { KeyedStateBackend } from '../../state/keyed-state-backend.js';
import type { TaskTime } from './task-time.js';
import { TimerHeap } from './timer-heap.js';

export const EVENT_TIMERS = '_timers-event';
export const PROCESSING_TIMERS = '_timers-processing';

export type TimeDomain = 'event' | 'processing';

/** Called with the backend's current key set to the timer's key. */
export type TimerCallback = (timestamp: number, domain: TimeDomain) => void;

export class InternalTimerService {
  readonly #backend: KeyedStateBackend;
  readonly #time: TaskTime;
  readonly #onTimer: TimerCallback;
  readonly #eventHeap = new TimerHeap();
  readonly #processingHeap = new TimerHeap();
  readonly #eventState: MapState<number, 1>;
  readonly #processingState: MapState<number, 1>;
  #watermark = -Infinity;
  #firing = false;

  constructor(backend: KeyedStateBackend, time: TaskTime, onTimer: TimerCallback) {
    this.#backend = backend;
    this.#time = time;
    this.#onTimer = onTimer;
    this.#eventState = backend.store.map<number, 1>(EVENT_TIMERS);
    this.#processingState = backend.store.map<number, 1>(PROCESSING_TIMERS);
    this.#rebuild(EVENT_TIMERS, this.#eventState, this.#eventHeap);
    this.#rebuild(PROCESSING_TIMERS, this.#processingState, this.#processingHeap);
    this.#requestNextProcessingTime();
  }

  /** The operator's current input watermark (`-Infinity` before the first). */
  get currentWatermark(): number {
    return this.#watermark;
  }

  currentProcessingTime(): number {
    return this.#time.now();
  }

  /** Registers an event-time timer for the current key; a second registration of `ts` is a no-op. */
  registerEventTime(ts: number): void {
    checkTimestamp(ts, 'registerEventTime');
    if (this.#eventState.contains(ts)) return;
    this.#eventState.put(ts, 1);
    this.#eventHeap.push(ts, this.#backend.currentKey);
  }

  registerProcessingTime(ts: number): void {
    checkTimestamp(ts, 'registerProcessingTime');
    if (this.#processingState.contains(ts)) return;
    this.#processingState.put(ts, 1);
    this.#processingHeap.push(ts, this.#backend.currentKey);
    this.#time.requestAt(ts);
  }

  deleteEventTime(ts: number): void {
    this.#eventState.remove(ts);
  }

  deleteProcessingTime(ts: number): void {
    this.#processingState.remove(ts);
  }

  /** Fires every event-time timer `<= watermark`. `watermark` only increases. */
  advanceWatermark(watermark: number): void {
    this.#watermark = watermark;
    this.#fire(this.#eventHeap, this.#eventState, watermark, 'event');
  }

  /** Fires every processing-time timer `<= now` and requests the next deadline. */
  onProcessingTime(now: number): void {
    this.#fire(this.#processingHeap, this.#processingState, now, 'processing');
    this.#requestNextProcessingTime();
  }

  #fire(heap: TimerHeap, state: MapState<number, 1>, limit: number, domain: TimeDomain): void {
    // Re-entrant calls (a callback emitting a watermark that loops back) would break the order.
    if (this.#firing) return;
    this.#firing = true;
    try {
      while (heap.size > 0 && heap.peekTimestamp() <= limit) {
        const t = heap.pop()!;
        this.#backend.setCurrentKey(t.key);
        if (!state.contains(t.timestamp)) continue; // deleted, or a duplicate heap entry
        state.remove(t.timestamp);
        this.#onTimer(t.timestamp, domain);
      }
    } finally {
      this.#firing = false;
    }
  }

  #requestNextProcessingTime(): void {
    const next = this.#processingHeap.peekTimestamp();
    if (next !== Infinity) this.#time.requestAt(next);
  }

  #rebuild(name: string, state: MapState<number, 1>, heap: TimerHeap): void {
    const keys = [...this.#backend.keys(name)]; // collect first: no state change while iterating
    const entries: { ts: number; key: unknown }[] = [];
    for (const key of keys) {
      this.#backend.setCurrentKey(key);
      for (const ts of state.keys()) entries.push({ ts, key });
    }
    for (const e of entries) heap.push(e.ts, e.key);
  }
}

function checkTimestamp(ts: unknown, what: string): void {
  if (typeof ts !== 'number' || Number.isNaN(ts)) {
    throw new TypeError(`ctx.timers.${what}(): the time must be a number (ms), got ${String(ts)}`);
  }
}
