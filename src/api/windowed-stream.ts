/**
 * `WindowedStream`: a keyed stream cut into windows (`keyedStream.window(assigner)`), awaiting
 * its window function: `reduce`, `aggregate` or `process`. `allowedLateness` and
 * `sideOutputLateData` configure the window operator and return a new windowed stream.
 *
 * Semantics (Flink's `WindowOperator` with the default triggers):
 * - Event time: a window fires once the watermark reaches `end - 1`; its contents are kept until
 *   the watermark reaches `end - 1 + allowedLateness`, and every element arriving in between fires
 *   the window again with the updated contents (a late firing). An element whose windows are all
 *   past that point is late: it goes to the `sideOutputLateData` tag, or is dropped and counted
 *   (`numLateRecordsDropped`). Results carry the timestamp `end - 1`.
 * - Processing time: windows follow the wall clock when elements are processed and fire when it
 *   reaches `end - 1`; at the end of a bounded input the pending ones fire.
 * - Session windows merge (an element's `[t, t + gap)` with every window it overlaps or touches);
 *   `aggregate` then needs `merge`.
 */

import { InvalidGraphError, InvalidOptionError } from '../errors.js';
import type { WindowFunctionSpec } from '../graph/stream-graph.js';
import { DataStream } from './data-stream.js';
import type {
  AggregateFunction,
  Collector,
  KeySelector,
  ReduceFunction,
  RuntimeContext,
} from './functions.js';
import { type Bivariant, operatorOutput, requireFunction, type StreamCore, show } from './graph-builder.js';
import { OutputTag } from './output-tag.js';
import type { TimeWindow, WindowAssigner } from './windows.js';

/** `ctx` of a process window function. */
export interface WindowContext<K = unknown> extends RuntimeContext {
  readonly key: K;
  readonly window: TimeWindow;
  /** The operator's input watermark when the window fired (`-Infinity` before the first). */
  readonly currentWatermark: number;
}

/** `process((elements, ctx, out) => …)`: all elements of one key's window, in arrival order. */
export type ProcessWindowFunction<T, R, K> = (
  elements: T[],
  ctx: WindowContext<K>,
  out: Collector<R>,
) => void;

interface WindowConfig {
  readonly assigner: WindowAssigner;
  readonly keySelectors: readonly KeySelector<any, any>[];
  readonly allowedLateness: number;
  readonly lateDataTag: string | undefined;
}

export class WindowedStream<T, K> {
  readonly #core: StreamCore;
  readonly #config: WindowConfig;

  /** @internal Created by `KeyedStream.window`. */
  constructor(core: StreamCore, config: WindowConfig) {
    this.#core = core;
    this.#config = config;
  }

  /**
   * Keeps event-time windows `ms` past their end: late elements within it fire the window
   * again with its updated contents. Default 0. Not allowed on processing-time windows.
   */
  allowedLateness(ms: number): WindowedStream<T, K> {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
      throw new InvalidOptionError('allowedLateness', `must be a finite number >= 0 (ms), got ${show(ms)}`);
    }
    if (this.#config.assigner.time === 'processing' && ms > 0) {
      throw new InvalidOptionError('allowedLateness', 'processing-time windows have no late elements');
    }
    return new WindowedStream<T, K>(this.#core, { ...this.#config, allowedLateness: ms });
  }

  /** Sends late elements to the side output `tag` (read it with `result.getSideOutput(tag)`). */
  sideOutputLateData(tag: OutputTag<T>): WindowedStream<T, K> {
    if (!(tag instanceof OutputTag)) throw new TypeError('sideOutputLateData(): expected an OutputTag');
    if (this.#config.assigner.time === 'processing') {
      throw new InvalidGraphError('sideOutputLateData(): processing-time windows have no late elements');
    }
    return new WindowedStream<T, K>(this.#core, { ...this.#config, lateDataTag: tag.id });
  }

  /** Folds each window's elements with `fn`; emits one result per window and key. */
  reduce(fn: Bivariant<ReduceFunction<T>>): DataStream<T> {
    requireFunction(fn, 'window(...).reduce()');
    return this.#then({ kind: 'reduce', fn }, 'window-reduce');
  }

  /** Aggregates each window with `agg` (session windows need `agg.merge`). */
  aggregate<ACC, R>(agg: AggregateFunction<T, ACC, R>): DataStream<R> {
    if (typeof agg !== 'object' || agg === null) {
      throw new TypeError('window(...).aggregate(): expected { createAccumulator, add, getResult, merge? }');
    }
    requireFunction(agg.createAccumulator, 'window(...).aggregate() createAccumulator');
    requireFunction(agg.add, 'window(...).aggregate() add');
    requireFunction(agg.getResult, 'window(...).aggregate() getResult');
    if (agg.merge !== undefined) requireFunction(agg.merge, 'window(...).aggregate() merge');
    if (this.#config.assigner.merging && agg.merge === undefined) {
      throw new InvalidOptionError('aggregate.merge', 'session windows merge accumulators: give merge(a, b)');
    }
    return this.#then({ kind: 'aggregate', fn: agg }, 'window-aggregate');
  }

  /** Calls `fn(elements, ctx, out)` with all elements of each window (kept in state until it fires). */
  process<R>(fn: Bivariant<ProcessWindowFunction<T, R, K>>): DataStream<R> {
    requireFunction(fn, 'window(...).process()');
    return this.#then({ kind: 'process', fn }, 'window-process');
  }

  #then<R>(fn: WindowFunctionSpec, defaultName: string): DataStream<R> {
    return new DataStream<R>(addWindowNode(this.#core, [], this.#config, fn, defaultName));
  }
}

/** Adds a window operator (one input, or two for a window join). */
export function addWindowNode(
  first: StreamCore,
  second: StreamCore['inputs'],
  config: WindowConfig,
  fn: WindowFunctionSpec,
  defaultName: string,
): StreamCore {
  const { builder } = first;
  const id = builder.addNode(
    {
      kind: 'window',
      assigner: config.assigner,
      function: fn,
      keySelectors: config.keySelectors,
      allowedLateness: config.allowedLateness,
      ...(config.lateDataTag !== undefined ? { lateDataTag: config.lateDataTag } : {}),
    },
    defaultName,
    first.inputs,
    second,
  );
  return operatorOutput(builder, id);
}

/** Checks that `assigner` came from `windows.*`. */
export function requireAssigner(assigner: unknown, what: string): WindowAssigner {
  const a = assigner as WindowAssigner;
  if (typeof a !== 'object' || a === null || typeof a.assignWindows !== 'function') {
    throw new TypeError(`${what}: expected a window assigner, e.g. windows.tumbling({ size: 1000 })`);
  }
  return a;
}
