/**
 * Event time: how `assignTimestampsAndWatermarks` reads timestamps and generates watermarks.
 *
 * The generator is Flink's bounded out-of-orderness one: after seeing timestamps up to `max`, it
 * promises that no later record has a timestamp `<= max - maxOutOfOrderness - 1` and emits that
 * as its watermark. At the end of a bounded input it emits `Infinity`, so every event-time window
 * and timer fires.
 */

import { InvalidOptionError } from '../errors.js';
import { show } from './graph-builder.js';

/** Options of `DataStream.assignTimestampsAndWatermarks`. */
export interface WatermarkStrategy<T> {
  /** The event timestamp of a record, in ms (a finite number). */
  readonly timestamp: (value: T) => number;
  /** How far (ms) records may arrive behind the highest timestamp seen so far. */
  readonly maxOutOfOrderness: number;
  /**
   * A downstream input channel that sends nothing for this long (ms) stops holding back the
   * consumer's watermark until it sends again. Unset: channels never count as idle.
   */
  readonly idleTimeout?: number;
  /** Processing time (ms) between periodic watermark emissions. Default 200. */
  readonly interval?: number;
  /**
   * Also emit the watermark after every `everyRecords` records (when it advanced). Unset: only
   * periodically. `1` makes the watermark sequence a function of the input alone (deterministic
   * lateness), at the cost of one control frame per advancing record.
   */
  readonly everyRecords?: number;
}

/** A validated {@link WatermarkStrategy} with defaults applied. */
export interface ResolvedWatermarkStrategy {
  readonly timestamp: (value: unknown) => number;
  readonly maxOutOfOrderness: number;
  readonly idleTimeout: number | undefined;
  readonly interval: number;
  readonly everyRecords: number | undefined;
}

export const DEFAULT_WATERMARK_INTERVAL_MS = 200;

/** Checks the options up front; `InvalidOptionError`/`TypeError` name the bad one. */
export function resolveWatermarkStrategy(s: unknown): ResolvedWatermarkStrategy {
  if (typeof s !== 'object' || s === null) {
    throw new TypeError(
      `assignTimestampsAndWatermarks(): expected { timestamp, maxOutOfOrderness }, got ${show(s)}`,
    );
  }
  const o = s as WatermarkStrategy<unknown>;
  if (typeof o.timestamp !== 'function') {
    throw new TypeError(
      `assignTimestampsAndWatermarks(): timestamp must be a function, got ${show(o.timestamp)}`,
    );
  }
  const nonNegative = (name: string, v: unknown, integer = false): void => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (integer && !Number.isInteger(v))) {
      throw new InvalidOptionError(
        name,
        `must be a finite number >= 0${integer ? ' (an integer)' : ''}, got ${show(v)}`,
      );
    }
  };
  nonNegative('maxOutOfOrderness', o.maxOutOfOrderness);
  if (o.idleTimeout !== undefined) nonNegative('idleTimeout', o.idleTimeout);
  if (o.interval !== undefined) {
    nonNegative('interval', o.interval);
    if (o.interval === 0) throw new InvalidOptionError('interval', 'must be > 0 ms');
  }
  if (o.everyRecords !== undefined) {
    nonNegative('everyRecords', o.everyRecords, true);
    if (o.everyRecords === 0) throw new InvalidOptionError('everyRecords', 'must be >= 1');
  }
  return Object.freeze({
    timestamp: o.timestamp as (value: unknown) => number,
    maxOutOfOrderness: o.maxOutOfOrderness,
    idleTimeout: o.idleTimeout,
    interval: o.interval ?? DEFAULT_WATERMARK_INTERVAL_MS,
    everyRecords: o.everyRecords,
  });
}

/** The bounded out-of-orderness watermark after seeing `maxTimestamp`. */
export function boundedWatermark(maxTimestamp: number, maxOutOfOrderness: number): number {
  return maxTimestamp - maxOutOfOrderness - 1;
}
