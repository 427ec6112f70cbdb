/**
 * `DataStream`: the fluent handle users chain operators on (DESIGN.md §6).
 *
 * A stream is an immutable view: the inputs the next operator will consume (node ids with a
 * partitioning) plus, when it is exactly one operator's output, that operator's id. Operator
 * methods add a node to the environment's graph and return a new stream; `rebalance()`,
 * `broadcast()` and `union()` only return a new view (no node), like Flink's virtual partition
 * nodes. `name`, `uid` and `setParallelism` configure the operator that produced the stream and
 * return the same stream, as in Flink.
 */

import { InvalidGraphError } from '../errors.js';
import type { OperatorSpec } from '../graph/stream-graph.js';
import { resolveAsyncOptions } from './async-options.js';
import type { CommittingSink } from './committing-sink.js';
import { ConnectedStreams } from './connected-streams.js';
import { DataStreamSink } from './data-stream-sink.js';
import type {
  AsyncFlatMapFunction,
  AsyncMapFunction,
  AsyncOptions,
  FilterFunction,
  FlatMapFunction,
  KeySelector,
  MapFunction,
  ProcessFunction,
  RuntimeContext,
} from './functions.js';
import {
  operatorOutput,
  repartitioned,
  requireFunction,
  requireSameBuild,
  STREAM_CORE,
  type StreamCore,
} from './graph-builder.js';
import { JoinedStreams } from './joined-streams.js';
import { KeyedStream } from './keyed-stream.js';
import { OutputTag } from './output-tag.js';
import type { Sink } from './source.js';
import { resolveWatermarkStrategy, type WatermarkStrategy } from './watermarks.js';

/** A stream of records of type `T`. Created by `env.fromSource(...)` and by operators. */
export class DataStream<T> {
  /** @internal */
  readonly [STREAM_CORE]: StreamCore;

  /** @internal Streams are created by the environment and by operators, never by users. */
  constructor(core: StreamCore) {
    this[STREAM_CORE] = core;
  }

  /**
   * Applies `fn` to every record and emits its result (one output per input).
   * Chained with its predecessor when both have the same parallelism.
   */
  map<R>(fn: MapFunction<T, R>): DataStream<R> {
    requireFunction(fn, 'map()');
    return this.#then({ kind: 'map', fn }, 'map');
  }

  /**
   * Async I/O (Flink's `AsyncDataStream`): calls `fn(value, ctx)` for every record without
   * waiting for it, keeps up to `options.capacity` requests in flight per subtask and emits each
   * promise's result, in input order (`ordered: true`, the default) or as they complete. When
   * the operator is full the task stops reading input (backpressure) without blocking its
   * thread. A request that times out or rejects is retried per `options.retry`, else it fails
   * the task (`AsyncTimeoutError` / `AsyncRequestError`). Under exactly-once checkpointing the
   * records whose results are not emitted yet are part of the checkpoint and are requested again
   * after a restore, so each result is emitted exactly once downstream of a restore — but `fn`
   * itself may run more than once per record (make its side effects idempotent). See README,
   * "Async I/O".
   */
  mapAsync<R>(fn: AsyncMapFunction<T, R>, options?: AsyncOptions): DataStream<R> {
    requireFunction(fn, 'mapAsync()');
    const resolved = resolveAsyncOptions(options, 'mapAsync()');
    return this.#then({ kind: 'async', flat: false, fn, options: resolved }, 'map-async');
  }

  /** As {@link DataStream.mapAsync}, but `fn` resolves to any iterable of results (zero or more). */
  flatMapAsync<R>(fn: AsyncFlatMapFunction<T, R>, options?: AsyncOptions): DataStream<R> {
    requireFunction(fn, 'flatMapAsync()');
    const resolved = resolveAsyncOptions(options, 'flatMapAsync()');
    return this.#then({ kind: 'async', flat: true, fn, options: resolved }, 'flat-map-async');
  }

  /** Keeps the records for which `fn` returns `true`. */
  filter(fn: FilterFunction<T>): DataStream<T> {
    requireFunction(fn, 'filter()');
    return this.#then({ kind: 'filter', fn }, 'filter');
  }

  /** Emits zero or more records per input through `out.collect(...)`. */
  flatMap<R>(fn: FlatMapFunction<T, R>): DataStream<R> {
    requireFunction(fn, 'flatMap()');
    return this.#then({ kind: 'flat-map', fn }, 'flat-map');
  }

  /**
   * A general non-keyed operator: `fn(value, ctx, out)` may emit any number of records. For
   * keyed state and timers use `keyBy(...).process(...)`.
   */
  process<R>(fn: ProcessFunction<T, R>): DataStream<R> {
    requireFunction(fn, 'process()');
    return this.#then({ kind: 'process', fn }, 'process');
  }

  /**
   * Turns on event time: every record gets the timestamp `strategy.timestamp(record)` returns
   * (ms), and watermarks are generated with bounded out-of-orderness
   * (`max timestamp seen - maxOutOfOrderness - 1`), periodically and at the end of the input
   * (`Infinity`, so every event-time window and timer fires). Downstream operators' watermark is
   * the minimum over their input channels; see {@link WatermarkStrategy} for idleness and the
   * emission interval. Chained with its predecessor like `map`.
   */
  assignTimestampsAndWatermarks(strategy: WatermarkStrategy<T>): DataStream<T> {
    return this.#then(
      { kind: 'assign-timestamps', strategy: resolveWatermarkStrategy(strategy) },
      'timestamps/watermarks',
    );
  }

  /**
   * Partitions the stream by the key `selector` returns: every record with the same key goes to
   * the same subtask of the next operator, which then sees the key and keyed state.
   *
   * The selector runs on the producing side for every record and must be deterministic. Keys
   * must be strings, numbers, booleans, bigints, or arrays / plain objects of those.
   */
  keyBy<K>(selector: KeySelector<T, K>): KeyedStream<T, K> {
    requireFunction(selector, 'keyBy()');
    const core = this[STREAM_CORE];
    return new KeyedStream<T, K>(
      {
        builder: core.builder,
        inputs: core.inputs.map((i) => repartitioned(i, 'hash', selector)),
        operatorId: undefined,
      },
      selector,
    );
  }

  /**
   * The side output `tag` of the operator that produced this stream (e.g. a window's late
   * records, `sideOutputLateData(tag)`), as a stream of its own.
   */
  getSideOutput<X>(tag: OutputTag<X>): DataStream<X> {
    if (!(tag instanceof OutputTag)) throw new TypeError('getSideOutput(): expected an OutputTag');
    const core = this.#operatorCore('getSideOutput');
    const spec = core.builder.specOf(core.operatorId);
    if (spec.kind !== 'window' || spec.lateDataTag !== tag.id) {
      throw new InvalidGraphError(
        `getSideOutput(): operator "${core.builder.nameOf(core.operatorId)}" has no side output "${tag.id}" ` +
          '(side outputs come from window(...).sideOutputLateData(tag))',
      );
    }
    return new DataStream<X>({
      builder: core.builder,
      inputs: [{ nodeId: core.operatorId, partitioning: 'forward', outputTag: tag.id }],
      operatorId: undefined,
    });
  }

  /** Distributes records round-robin over all subtasks of the next operator. */
  rebalance(): DataStream<T> {
    return this.#repartition('rebalance');
  }

  /** Sends every record to every subtask of the next operator. */
  broadcast(): DataStream<T> {
    return this.#repartition('broadcast');
  }

  /**
   * Merges this stream with `others` (same record type): the next operator consumes all of them,
   * each input keeping its own partitioning. A union with the same stream twice delivers its
   * records twice. The next operator is always the head of its own task (never chained).
   */
  union(...others: DataStream<T>[]): DataStream<T> {
    const core = this[STREAM_CORE];
    const inputs = [...core.inputs];
    for (const other of others) {
      const otherCore = requireDataStream(other, 'union()');
      requireSameBuild(core, otherCore, 'union()');
      inputs.push(...otherCore.inputs);
    }
    if (others.length === 0) return this;
    return new DataStream<T>({ builder: core.builder, inputs, operatorId: undefined });
  }

  /**
   * Connects this stream with `other` (possibly of another type) for a two-input operator:
   * `connect(other).process({ processElement1, processElement2 })`. Both inputs must be keyed
   * (see {@link KeyedStream.connect}) or neither.
   */
  connect<B>(other: DataStream<B>): ConnectedStreams<T, B, RuntimeContext> {
    if (other instanceof KeyedStream) {
      throw new InvalidGraphError(
        'connect(): the first input is not keyed but the second is; key both inputs (keyBy on each, or ' +
          'connect(...).keyBy(selector1, selector2)) or neither',
      );
    }
    const otherCore = requireDataStream(other, 'connect()');
    requireSameBuild(this[STREAM_CORE], otherCore, 'connect()');
    return new ConnectedStreams<T, B, RuntimeContext>(this[STREAM_CORE], otherCore, undefined);
  }

  /**
   * Window join with `other`: `join(other).where(k1).equalTo(k2).window(assigner).apply(fn)`
   * emits `fn(left, right)` for every pair with equal keys in the same window.
   */
  join<B>(other: DataStream<B>): JoinedStreams<T, B> {
    const otherCore = requireDataStream(other, 'join()');
    requireSameBuild(this[STREAM_CORE], otherCore, 'join()');
    return new JoinedStreams<T, B>(this[STREAM_CORE], otherCore);
  }

  /**
   * Writes the stream to `sink`. Every branch of a job must end in a sink (an operator whose
   * output goes nowhere is rejected when the job is planned).
   */
  sinkTo(sink: Sink<T> | CommittingSink<T, any>): DataStreamSink<T> {
    if (typeof sink !== 'object' || sink === null || typeof (sink as Sink<T>).createWriter !== 'function') {
      throw new TypeError(
        'sinkTo(): expected a sink (an object with createWriter), e.g. sinks.collect(name)',
      );
    }
    const core = this[STREAM_CORE];
    const spec: OperatorSpec = {
      kind: 'sink',
      sink: sink as Sink<unknown> | CommittingSink<unknown, unknown>,
    };
    const id = core.builder.addNode(spec, `sink: ${sink.name}`, core.inputs);
    return new DataStreamSink<T>(core.builder, id, sink);
  }

  /**
   * Sets the number of parallel subtasks of the operator that produced this stream (an integer
   * >= 1). Unset, the operator runs at the job's default parallelism.
   */
  setParallelism(parallelism: number): this {
    const core = this.#operatorCore('setParallelism');
    core.builder.setParallelism(core.operatorId, parallelism);
    return this;
  }

  /** Names the operator that produced this stream, for plans, logs and errors. */
  name(name: string): this {
    const core = this.#operatorCore('name');
    core.builder.setName(core.operatorId, name);
    return this;
  }

  /**
   * Sets the stable identity of the operator that produced this stream. State in checkpoints is
   * matched to operators by uid, so set one on every stateful operator of a long-lived job.
   * Must be unique within the job.
   */
  uid(uid: string): this {
    const core = this.#operatorCore('uid');
    core.builder.setUid(core.operatorId, uid);
    return this;
  }

  #then<R>(spec: OperatorSpec, defaultName: string): DataStream<R> {
    const core = this[STREAM_CORE];
    const id = core.builder.addNode(spec, defaultName, core.inputs);
    return new DataStream<R>(operatorOutput(core.builder, id));
  }

  #repartition(partitioning: 'rebalance' | 'broadcast'): DataStream<T> {
    const core = this[STREAM_CORE];
    return new DataStream<T>({
      builder: core.builder,
      inputs: core.inputs.map((i) => repartitioned(i, partitioning)),
      operatorId: undefined,
    });
  }

  #operatorCore(what: string): StreamCore & { readonly operatorId: number } {
    const core = this[STREAM_CORE];
    if (core.operatorId === undefined) {
      throw new InvalidGraphError(
        `${what}() configures the operator that produced the stream, but this stream comes from ` +
          `rebalance(), broadcast() or union(); call ${what}() before those`,
      );
    }
    return core as StreamCore & { readonly operatorId: number };
  }
}

/** The core of `x` if it is a DataStream, else a `TypeError` naming the call. */
export function requireDataStream(x: unknown, what: string): StreamCore {
  if (!(x instanceof DataStream)) throw new TypeError(`${what}: expected a DataStream`);
  return x[STREAM_CORE];
}
