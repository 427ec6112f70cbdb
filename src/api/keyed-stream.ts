/**
 * `KeyedStream`: a stream partitioned by key (`dataStream.keyBy(selector)`). The next operator
 * runs keyed: it sees `ctx.key` and keyed state scoped to it, and records of one key always reach
 * the same subtask (the one owning the key's key group).
 *
 * A keyed stream is a view, not an operator: the operators below return a {@link DataStream}
 * whose `name`/`uid`/`setParallelism` configure that keyed operator, as in Flink
 * (`keyBy(k).sum('v').name('totals')`).
 */

import { InvalidGraphError } from '../errors.js';
import type { OperatorSpec } from '../graph/stream-graph.js';
import { resolveAsyncOptions } from './async-options.js';
import { ConnectedStreams } from './connected-streams.js';
import { DataStream } from './data-stream.js';
import type {
  AsyncFlatMapFunction,
  AsyncKeyedContext,
  AsyncMapFunction,
  AsyncOptions,
  KeyedContext,
  KeyedProcessFunction,
  KeyedProcessFunctionObject,
  KeySelector,
  OnTimerFunction,
  ReduceFunction,
} from './functions.js';
import {
  operatorOutput,
  requireFunction,
  requireSameBuild,
  STREAM_CORE,
  type StreamCore,
} from './graph-builder.js';
import { IntervalJoin } from './interval-join.js';
import { sumReducer } from './sum-reducer.js';
import { requireAssigner, WindowedStream } from './windowed-stream.js';
import type { WindowAssigner } from './windows.js';

/** A stream of `T` partitioned by keys of type `K`. */
export class KeyedStream<T, K> {
  /** @internal */
  readonly [STREAM_CORE]: StreamCore;
  /**
   * The selector given to `keyBy`; also carried by every input edge (`partitioning: 'hash'`).
   * Private and typed `any` so that `KeyedStream<number, K>` stays assignable to
   * `KeyedStream<unknown, K>` (a function-typed field would make `T` contravariant).
   */
  readonly #keySelector: KeySelector<any, any>;

  /** @internal Created by `DataStream.keyBy`. */
  constructor(core: StreamCore, keySelector: KeySelector<T, K>) {
    this[STREAM_CORE] = core;
    this.#keySelector = keySelector;
  }

  /**
   * A keyed operator: `fn(value, ctx, out)` with `ctx.key`, keyed state (`ctx.state`) and timers
   * (`ctx.timers`), scoped to the key of `value`. For timers pass the object form
   * `{ processElement, onTimer }`: `onTimer(timestamp, ctx, out)` runs with the timer's key.
   */
  process<R>(fn: KeyedProcessFunction<K, T, R> | KeyedProcessFunctionObject<K, T, R>): DataStream<R> {
    let processElement: unknown = fn;
    let onTimer: unknown;
    if (typeof fn === 'object' && fn !== null) {
      processElement = fn.processElement;
      onTimer = fn.onTimer;
      requireFunction(processElement, 'keyBy(...).process({ processElement })');
      if (onTimer !== undefined) requireFunction(onTimer, 'keyBy(...).process({ onTimer })');
    } else {
      requireFunction(fn, 'keyBy(...).process()');
    }
    return this.#then(
      {
        kind: 'keyed-process',
        fn: processElement as KeyedProcessFunction<K, T, R>,
        ...(onTimer !== undefined ? { onTimer: onTimer as OnTimerFunction<any, any> } : {}),
        keySelector: this.#keySelector,
      },
      'keyed-process',
    );
  }

  /**
   * Keyed async I/O: as {@link DataStream.mapAsync}, and `fn` sees the record's key (`ctx.key`).
   * There is no keyed state in an async function (the key changes while a request is in flight):
   * `ctx.state` and `ctx.timers` throw a `StateAccessError`. Records whose results are not
   * emitted at a checkpoint are stored with their key, so after a restore (at any parallelism)
   * they are requested again on the subtask that owns the key, before any new record.
   */
  mapAsync<R>(fn: AsyncMapFunction<T, R, AsyncKeyedContext<K>>, options?: AsyncOptions): DataStream<R> {
    requireFunction(fn, 'keyBy(...).mapAsync()');
    const resolved = resolveAsyncOptions(options, 'keyBy(...).mapAsync()');
    return this.#then(
      { kind: 'async', flat: false, fn, options: resolved, keySelector: this.#keySelector },
      'map-async',
    );
  }

  /** As {@link KeyedStream.mapAsync}, but `fn` resolves to any iterable of results. */
  flatMapAsync<R>(
    fn: AsyncFlatMapFunction<T, R, AsyncKeyedContext<K>>,
    options?: AsyncOptions,
  ): DataStream<R> {
    requireFunction(fn, 'keyBy(...).flatMapAsync()');
    const resolved = resolveAsyncOptions(options, 'keyBy(...).flatMapAsync()');
    return this.#then(
      { kind: 'async', flat: true, fn, options: resolved, keySelector: this.#keySelector },
      'flat-map-async',
    );
  }

  /**
   * Rolling reduce per key: emits, for every record, `fn(previous result, record)` (the first
   * record of a key is emitted as is). The result per key is kept in keyed state.
   */
  reduce(fn: ReduceFunction<T>): DataStream<T> {
    requireFunction(fn, 'keyBy(...).reduce()');
    return this.#then({ kind: 'keyed-reduce', fn, keySelector: this.#keySelector }, 'reduce');
  }

  /** Running sum per key of a stream of numbers. */
  sum(this: KeyedStream<number, K>): DataStream<number>;
  /**
   * Running sum per key of `field`, Flink semantics: each output is the key's first record with
   * `field` replaced by the sum of `field` over the key's records so far. `field` must hold
   * numbers (a record where it does not fails the task with a `TypeError`).
   */
  sum<F extends keyof T & (string | number)>(field: F): DataStream<T>;
  sum(this: KeyedStream<any, K>, field?: string | number): DataStream<any> {
    if (field !== undefined && typeof field !== 'string' && typeof field !== 'number') {
      throw new TypeError(`sum(): field must be a string or a number, got ${typeof field}`);
    }
    const core = this[STREAM_CORE];
    let id = -1;
    const fn = sumReducer(field, () => core.builder.nameOf(id));
    const out = this.#then<unknown>({ kind: 'keyed-reduce', fn, keySelector: this.#keySelector }, 'sum');
    id = out[STREAM_CORE].operatorId!;
    return out;
  }

  /**
   * Cuts each key's elements into windows: `window(windows.tumbling({ size }))`, `sliding`,
   * `session`; event time by default (needs `assignTimestampsAndWatermarks` upstream). Then
   * `.reduce`, `.aggregate` or `.process`.
   */
  window(assigner: WindowAssigner): WindowedStream<T, K> {
    return new WindowedStream<T, K>(this[STREAM_CORE], {
      assigner: requireAssigner(assigner, 'keyBy(...).window()'),
      keySelectors: [this.#keySelector],
      allowedLateness: 0,
      lateDataTag: undefined,
    });
  }

  /**
   * Interval join with another keyed stream (event time):
   * `intervalJoin(other).between(lower, upper).process((left, right, ctx, out) => …)`.
   */
  intervalJoin<B, K2>(other: KeyedStream<B, K2>): IntervalJoin<T, B, K> {
    if (!(other instanceof KeyedStream)) {
      throw new InvalidGraphError('intervalJoin(): the other stream must be keyed too (keyBy)');
    }
    requireSameBuild(this[STREAM_CORE], other[STREAM_CORE], 'intervalJoin()');
    return new IntervalJoin<T, B, K>({
      left: this[STREAM_CORE],
      right: other[STREAM_CORE],
      keySelectors: [this.#keySelector, other.#keySelector],
    });
  }

  /**
   * Connects this keyed stream with another keyed stream for a keyed two-input operator:
   * records of both inputs with equal keys reach the same subtask and share keyed state.
   */
  connect<B, K2>(other: KeyedStream<B, K2>): ConnectedStreams<T, B, KeyedContext<K | K2>> {
    if (!(other instanceof KeyedStream)) {
      throw new InvalidGraphError(
        'connect(): the first input is keyed but the second is not; key both inputs (keyBy on each) or neither',
      );
    }
    requireSameBuild(this[STREAM_CORE], other[STREAM_CORE], 'connect()');
    return new ConnectedStreams<T, B, KeyedContext<K | K2>>(this[STREAM_CORE], other[STREAM_CORE], [
      this.#keySelector,
      other.#keySelector,
    ]);
  }

  #then<R>(spec: OperatorSpec, defaultName: string): DataStream<R> {
    const core = this[STREAM_CORE];
    const id = core.builder.addNode(spec, defaultName, core.inputs);
    return new DataStream<R>(operatorOutput(core.builder, id));
  }
}
