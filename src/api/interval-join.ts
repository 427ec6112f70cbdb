/**
 * Interval join of two keyed streams (Flink's `IntervalJoin`):
 * `a.keyBy(k).intervalJoin(b.keyBy(k)).between(lower, upper).process(fn)` calls
 * `fn(left, right, ctx, out)` for every pair with equal keys where
 * `left.timestamp + lower <= right.timestamp <= left.timestamp + upper` (event time, bounds
 * inclusive). Both sides are buffered in keyed state until the watermark passes the last time a
 * partner could still arrive; elements behind the watermark when they arrive are dropped (counted
 * as `numLateRecordsDropped`). Results carry the larger of the two timestamps.
 */

import { InvalidOptionError } from '../errors.js';
import { DataStream } from './data-stream.js';
import type { Collector, KeySelector, RuntimeContext } from './functions.js';
import { type Bivariant, operatorOutput, requireFunction, type StreamCore, show } from './graph-builder.js';

/** `ctx` of an interval join function. */
export interface ProcessJoinContext<K = unknown> extends RuntimeContext {
  readonly key: K;
  readonly leftTimestamp: number;
  readonly rightTimestamp: number;
  /** The result's timestamp: `max(leftTimestamp, rightTimestamp)`. */
  readonly timestamp: number;
}

export type ProcessJoinFunction<L, R, OUT, K = unknown> = (
  left: L,
  right: R,
  ctx: ProcessJoinContext<K>,
  out: Collector<OUT>,
) => void;

interface Sides {
  readonly left: StreamCore;
  readonly right: StreamCore;
  readonly keySelectors: readonly [KeySelector<any, any>, KeySelector<any, any>];
}

/** `intervalJoin(other)` awaiting `between(lower, upper)`. */
export class IntervalJoin<L, R, K> {
  readonly #sides: Sides;
  /** @internal Created by `KeyedStream.intervalJoin`. */
  constructor(sides: Sides) {
    this.#sides = sides;
  }

  /** Bounds in ms relative to the left element's time, inclusive; `lower <= upper`. */
  between(lower: number, upper: number): IntervalJoined<L, R, K> {
    for (const [name, v] of [
      ['lower', lower],
      ['upper', upper],
    ] as const) {
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        throw new InvalidOptionError(
          `intervalJoin.between.${name}`,
          `must be a finite number (ms), got ${show(v)}`,
        );
      }
    }
    if (lower > upper) {
      throw new InvalidOptionError('intervalJoin.between', `lower (${lower}) must be <= upper (${upper})`);
    }
    return new IntervalJoined<L, R, K>(this.#sides, lower, upper);
  }
}

export class IntervalJoined<L, R, K> {
  readonly #sides: Sides;
  readonly #lower: number;
  readonly #upper: number;
  /** @internal */
  constructor(sides: Sides, lower: number, upper: number) {
    this.#sides = sides;
    this.#lower = lower;
    this.#upper = upper;
  }

  process<OUT>(fn: Bivariant<ProcessJoinFunction<L, R, OUT, K>>): DataStream<OUT> {
    requireFunction(fn, 'intervalJoin(...).between(...).process()');
    const { left, right, keySelectors } = this.#sides;
    const id = left.builder.addNode(
      { kind: 'interval-join', lower: this.#lower, upper: this.#upper, fn, keySelectors },
      'interval-join',
      left.inputs,
      right.inputs,
    );
    return new DataStream<OUT>(operatorOutput(left.builder, id));
  }
}
