/**
 * `ConnectedStreams`: two streams, possibly of different types, feeding one two-input operator
 * (`a.connect(b).process({ processElement1, processElement2 })`). The operator is keyed when both
 * inputs are keyed; its context type `C` says which (`KeyedContext` or `RuntimeContext`).
 */

import { InvalidGraphError } from '../errors.js';
import { DataStream } from './data-stream.js';
import type { CoProcessFunction, KeyedContext, KeySelector, RuntimeContext } from './functions.js';
import { operatorOutput, repartitioned, requireFunction, type StreamCore } from './graph-builder.js';

/** Two connected inputs awaiting their two-input operator. */
export class ConnectedStreams<A, B, C extends RuntimeContext = RuntimeContext> {
  readonly #first: StreamCore;
  readonly #second: StreamCore;
  /** Typed `any`: a function-typed field would make `A`/`B` contravariant (see KeyedStream). */
  readonly #keySelectors: readonly [KeySelector<any, unknown>, KeySelector<any, unknown>] | undefined;

  /** @internal Created by `connect`. */
  constructor(
    first: StreamCore,
    second: StreamCore,
    keySelectors: readonly [KeySelector<A, unknown>, KeySelector<B, unknown>] | undefined,
  ) {
    this.#first = first;
    this.#second = second;
    this.#keySelectors = keySelectors;
  }

  /** Whether the two-input operator will run keyed (both inputs are hash-partitioned by key). */
  get keyed(): boolean {
    return this.#keySelectors !== undefined;
  }

  /**
   * Keys both inputs: records of input 1 by `selector1`, records of input 2 by `selector2`; equal
   * keys meet in the same subtask and share keyed state.
   */
  keyBy<K>(
    selector1: KeySelector<A, K>,
    selector2: KeySelector<B, K>,
  ): ConnectedStreams<A, B, KeyedContext<K>> {
    requireFunction(selector1, 'connect(...).keyBy() selector1');
    requireFunction(selector2, 'connect(...).keyBy() selector2');
    const rekey = (core: StreamCore, keySelector: KeySelector<any, K>): StreamCore => ({
      builder: core.builder,
      inputs: core.inputs.map((i) => repartitioned(i, 'hash', keySelector)),
      operatorId: undefined,
    });
    return new ConnectedStreams<A, B, KeyedContext<K>>(
      rekey(this.#first, selector1),
      rekey(this.#second, selector2),
      [selector1, selector2],
    );
  }

  /**
   * The two-input operator: `processElement1` gets the records of the first stream,
   * `processElement2` those of the second; both may emit through `out`. Its task aligns
   * checkpoint barriers across both inputs.
   */
  process<R>(fn: CoProcessFunction<A, B, R, C>): DataStream<R> {
    if (
      typeof fn !== 'object' ||
      fn === null ||
      typeof fn.processElement1 !== 'function' ||
      typeof fn.processElement2 !== 'function'
    ) {
      throw new TypeError(
        'connect(...).process(): expected an object with processElement1 and processElement2 functions',
      );
    }
    if (fn.onTimer !== undefined) {
      if (typeof fn.onTimer !== 'function') {
        throw new TypeError('connect(...).process(): onTimer must be a function');
      }
      if (this.#keySelectors === undefined) {
        throw new InvalidGraphError(
          'connect(...).process(): onTimer needs keyed inputs (timers are per key)',
        );
      }
    }
    const builder = this.#first.builder;
    const id = builder.addNode(
      {
        kind: 'co-process',
        fn: fn as CoProcessFunction<any, any, any, RuntimeContext>,
        ...(this.#keySelectors !== undefined ? { keySelectors: this.#keySelectors } : {}),
      },
      'co-process',
      this.#first.inputs,
      this.#second.inputs,
    );
    return new DataStream<R>(operatorOutput(builder, id));
  }
}
