/**
 * Window assigners (`windows.tumbling`, `windows.sliding`, `windows.session`): which time windows
 * an element belongs to, in event time (the element's timestamp, the default) or processing time
 * (the wall clock when the element is processed: `time: 'processing'`).
 *
 * A window is `[start, end)` in ms; it fires once the time reaches `end - 1` (its last
 * millisecond), as Flink's `TimeWindow.maxTimestamp()`. Assigners are pure and plain: the same
 * job module builds the same assigners in every thread.
 */

import { InvalidOptionError } from '../errors.js';
import { show } from './graph-builder.js';

/** A time window `[start, end)`, ms. */
export interface TimeWindow {
  readonly start: number;
  readonly end: number;
}

export type WindowTime = 'event' | 'processing';

export interface WindowAssigner {
  readonly kind: 'tumbling' | 'sliding' | 'session';
  readonly time: WindowTime;
  /** Session windows merge: an element's window is merged with every window it overlaps or touches. */
  readonly merging: boolean;
  /** The windows of an element with timestamp `timestamp` (for sessions, its own `[t, t + gap)`). */
  assignWindows(timestamp: number): TimeWindow[];
}

export interface TumblingOptions {
  /** Window length, ms (> 0). */
  readonly size: number;
  /** Shifts window starts: windows are `[offset + k * size, offset + (k + 1) * size)`. Default 0. */
  readonly offset?: number;
  readonly time?: WindowTime;
}

export interface SlidingOptions {
  readonly size: number;
  /** Distance between window starts, ms (> 0). An element belongs to `ceil(size / slide)` windows. */
  readonly slide: number;
  readonly offset?: number;
  readonly time?: WindowTime;
}

export interface SessionOptions {
  /** A session ends after `gap` ms without elements of its key (> 0). */
  readonly gap: number;
  readonly time?: WindowTime;
}

/** Start of the window of size/slide `every` with `offset` containing `ts` (Flink's getWindowStartWithOffset). */
export function windowStart(ts: number, offset: number, every: number): number {
  const r = (ts - offset) % every;
  return ts - (r < 0 ? r + every : r);
}

function tumbling(options: TumblingOptions): WindowAssigner {
  const size = positive('tumbling.size', options?.size);
  const offset = finite('tumbling.offset', options.offset ?? 0);
  const time = timeOf('tumbling', options.time);
  return Object.freeze({
    kind: 'tumbling' as const,
    time,
    merging: false,
    assignWindows(ts: number): TimeWindow[] {
      const start = windowStart(ts, offset, size);
      return [{ start, end: start + size }];
    },
  });
}

function sliding(options: SlidingOptions): WindowAssigner {
  const size = positive('sliding.size', options?.size);
  const slide = positive('sliding.slide', options.slide);
  const offset = finite('sliding.offset', options.offset ?? 0);
  const time = timeOf('sliding', options.time);
  return Object.freeze({
    kind: 'sliding' as const,
    time,
    merging: false,
    assignWindows(ts: number): TimeWindow[] {
      const out: TimeWindow[] = [];
      for (let start = windowStart(ts, offset, slide); start > ts - size; start -= slide) {
        out.push({ start, end: start + size });
      }
      return out;
    },
  });
}

function session(options: SessionOptions): WindowAssigner {
  const gap = positive('session.gap', options?.gap);
  const time = timeOf('session', options.time);
  return Object.freeze({
    kind: 'session' as const,
    time,
    merging: true,
    assignWindows(ts: number): TimeWindow[] {
      return [{ start: ts, end: ts + gap }];
    },
  });
}

/** Whether two windows overlap or touch (Flink's `TimeWindow.intersects`): such session windows merge. */
export function windowsIntersect(a: TimeWindow, b: TimeWindow): boolean {
  return a.start <= b.end && a.end >= b.start;
}

/** The window covering both. */
export function windowCover(a: TimeWindow, b: TimeWindow): TimeWindow {
  return { start: Math.min(a.start, b.start), end: Math.max(a.end, b.end) };
}

/** The window assigners: `keyedStream.window(windows.tumbling({ size: 1000 }))`. */
export const windows = Object.freeze({ tumbling, sliding, session });

function positive(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
    throw new InvalidOptionError(name, `must be a finite number > 0 (ms), got ${show(v)}`);
  }
  return v;
}

function finite(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new InvalidOptionError(name, `must be a finite number (ms), got ${show(v)}`);
  }
  return v;
}

function timeOf(what: string, t: unknown): WindowTime {
  if (t === undefined) return 'event';
  if (t !== 'event' && t !== 'processing') {
    throw new InvalidOptionError(`${what}.time`, `must be 'event' or 'processing', got ${show(t)}`);
  }
  return t;
}
