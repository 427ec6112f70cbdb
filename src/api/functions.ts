/**
 * The types user functions see: collectors, contexts and keyed state handles.
 * These are part of the public contract (DESIGN.md §6).
 */

/** Emits values downstream. */
export interface Collector<T> {
  collect(value: T): void;
}

/** Available to every user function. */
export interface RuntimeContext {
  /** 0-based index of this subtask. */
  readonly subtaskIndex: number;
  /** Number of parallel subtasks of this operator. */
  readonly parallelism: number;
  /** 0 on the first run, +1 after every restart. */
  readonly attempt: number;
  /** The operator's name (from `.name()` or the default). */
  readonly operatorName: string;
}

/** Keyed ValueState: one value per key, scoped to the current key. */
export interface ValueState<T> {
  value(): T | undefined;
  update(value: T): void;
  clear(): void;
}

/**
 * Options of one named state. `ttlMs`: entries expire `ttlMs` after they were created or last
 * written (Flink's `OnCreateAndWrite`); expired entries are never returned (`NeverReturnExpired`)
 * and are removed lazily on access and when a snapshot is serialized. For list and map state the
 * TTL applies to the whole list/map of a key, not to its elements.
 */
export interface StateOptions {
  readonly ttlMs?: number;
  /**
   * `'number'`: every value of this value or reducing state is a JS number (a reducing state's
   * reduce function returns one). Writing anything else throws StateAccessError. On the heap
   * backend such a state keeps its values in typed arrays per key group, with no object per key:
   * less memory, and snapshots several times cheaper (docs/architecture.md, "Number state").
   * Like Flink's `TypeInformation` on a state descriptor. The snapshot format is the same, so a
   * checkpoint restores with or without the declaration.
   */
  readonly type?: 'number';
}

/** Keyed ListState: a list per key. `get()` returns an empty array when the key has no list. */
export interface ListState<T> extends Iterable<T> {
  /** The list of the current key. The array is the stored one: mutating it mutates state. */
  get(): T[];
  add(value: T): void;
  addAll(values: Iterable<T>): void;
  /** Replaces the list; an empty iterable clears it. */
  update(values: Iterable<T>): void;
  clear(): void;
}

/** Keyed MapState: a map per key. A key's map that becomes empty is removed. */
export interface MapState<K, V> {
  get(key: K): V | undefined;
  put(key: K, value: V): void;
  putAll(entries: Iterable<readonly [K, V]>): void;
  remove(key: K): void;
  contains(key: K): boolean;
  entries(): IterableIterator<[K, V]>;
  keys(): IterableIterator<K>;
  values(): IterableIterator<V>;
  isEmpty(): boolean;
  clear(): void;
}

/** Keyed ReducingState: values added are folded with the state's reduce function. */
export interface ReducingState<T> {
  add(value: T): void;
  get(): T | undefined;
  clear(): void;
}

/** Flink's AggregateFunction. `add` and `merge` may mutate and return the accumulator. */
export interface AggregateFunction<IN, ACC, OUT> {
  createAccumulator(): ACC;
  add(value: IN, accumulator: ACC): ACC;
  getResult(accumulator: ACC): OUT;
  merge?(a: ACC, b: ACC): ACC;
}

/** Keyed AggregatingState: values added go into an accumulator; `get()` returns its result. */
export interface AggregatingState<IN, OUT> {
  add(value: IN): void;
  get(): OUT | undefined;
  clear(): void;
}

/**
 * Keyed state handles, scoped to the current key. Handles are cached per name: asking for the
 * same name on every record costs one map lookup. Asking for a name with another state kind
 * throws a `StateAccessError`.
 *
 * Values are snapshotted as they were at the checkpoint barrier, even when user code mutates
 * an object it read from state (see `src/state/heap-state-core.ts` for the rule and its cost).
 * State values must be plain data that msgpack can encode (plain objects, arrays, primitives,
 * bigints, Dates, byte arrays); class instances lose their prototype on restore.
 */
export interface KeyedStateStore {
  value<T>(name: string): ValueState<T>;
  value<T>(name: string, options: StateOptions): ValueState<T>;
  list<T>(name: string, options?: StateOptions): ListState<T>;
  map<K, V>(name: string, options?: StateOptions): MapState<K, V>;
  reducing<T>(name: string, reduceFn: ReduceFunction<T>, options?: StateOptions): ReducingState<T>;
  aggregating<IN, ACC, OUT>(
    name: string,
    aggregateFunction: AggregateFunction<IN, ACC, OUT>,
    options?: StateOptions,
  ): AggregatingState<IN, OUT>;
}

/** Context of functions on a keyed stream. */
export interface KeyedContext<K = unknown> extends RuntimeContext {
  /** The key of the element being processed. */
  readonly key: K;
  readonly state: KeyedStateStore;
  /**
   * Timers of the current key (keyed `process` and keyed `connect(...).process` only; other
   * keyed functions get `undefined`).
   */
  readonly timers: TimerService;
  /** Event timestamp (ms) of the element being processed (or of the timer firing), if any. */
  readonly timestamp: number | undefined;
}

/**
 * Timers of a keyed process function, scoped to the current key. A timer is identified by
 * `(key, time)`: registering the same time twice registers one timer. Timers are keyed state:
 * they are checkpointed, follow their key on rescale and fire after a restore if they had not
 * fired before the checkpoint.
 */
export interface TimerService {
  /** Fires `onTimer` once the operator's watermark reaches `time` (`time <= watermark`). */
  registerEventTime(time: number): void;
  /** Fires `onTimer` once the wall clock (ms since the epoch) reaches `time`. */
  registerProcessingTime(time: number): void;
  deleteEventTime(time: number): void;
  deleteProcessingTime(time: number): void;
  /** The operator's input watermark (`-Infinity` before the first). */
  readonly currentWatermark: number;
  /** Wall clock, ms since the epoch. */
  readonly currentProcessingTime: number;
}

/** Context of `onTimer`: the keyed context of the timer's key, plus which clock fired it. */
export interface OnTimerContext<K = unknown> extends KeyedContext<K> {
  readonly timeDomain: 'event' | 'processing';
}

/** Called when a timer of the current key fires; may emit through `out`. */
export type OnTimerFunction<K, R> = (timestamp: number, ctx: OnTimerContext<K>, out: Collector<R>) => void;

/**
 * The object form of a keyed process function: `keyBy(k).process({ processElement, onTimer })`.
 * The plain-function form is `processElement` alone.
 */
export interface KeyedProcessFunctionObject<K, T, R> {
  processElement: KeyedProcessFunction<K, T, R>;
  onTimer?: OnTimerFunction<K, R>;
}

export type MapFunction<T, R> = (value: T, ctx: RuntimeContext) => R;
export type FilterFunction<T> = (value: T, ctx: RuntimeContext) => boolean;
export type FlatMapFunction<T, R> = (value: T, ctx: RuntimeContext, out: Collector<R>) => void;
export type ProcessFunction<T, R> = (value: T, ctx: RuntimeContext, out: Collector<R>) => void;
export type KeyedProcessFunction<K, T, R> = (value: T, ctx: KeyedContext<K>, out: Collector<R>) => void;
export type ReduceFunction<T> = (accumulator: T, value: T) => T;
export type KeySelector<T, K> = (value: T) => K;

/**
 * Two-input process function for `connect(...).process(...)`. `onTimer` is for keyed inputs
 * (both keyed): timers registered through `ctx.timers` by either side call it with that key.
 */
export interface CoProcessFunction<A, B, R, C extends RuntimeContext = RuntimeContext> {
  processElement1(value: A, ctx: C, out: Collector<R>): void;
  processElement2(value: B, ctx: C, out: Collector<R>): void;
  onTimer?(
    timestamp: number,
    ctx: C extends KeyedContext<infer K> ? OnTimerContext<K> : never,
    out: Collector<R>,
  ): void;
}

/**
 * Context of `mapAsync` / `flatMapAsync` functions. One object per record, captured by the
 * request: it stays valid while the request is in flight.
 */
export interface AsyncContext extends RuntimeContext {
  /** Event timestamp (ms) of the input record, if any; the results carry the same timestamp. */
  readonly timestamp: number | undefined;
}

/**
 * Context of `keyBy(k).mapAsync` / `flatMapAsync` functions: the record's key. There is no keyed
 * state (and no timers): while a request is in flight the task goes on with other records and
 * other keys, so state read or written after an `await` would belong to whichever key came last.
 * Read state in a keyed `process` before the async operator and pass it along in the record;
 * write results to state in a keyed `process` after it. `ctx.state` and `ctx.timers` throw a
 * `StateAccessError` saying so.
 */
export interface AsyncKeyedContext<K = unknown> extends AsyncContext {
  readonly key: K;
}

/** `mapAsync`: one result per record, usually a promise of it. */
export type AsyncMapFunction<T, R, C extends AsyncContext = AsyncContext> = (
  value: T,
  ctx: C,
) => PromiseLike<R> | R;

/** `flatMapAsync`: zero or more results per record (any iterable), usually a promise of them. */
export type AsyncFlatMapFunction<T, R, C extends AsyncContext = AsyncContext> = (
  value: T,
  ctx: C,
) => PromiseLike<Iterable<R>> | Iterable<R>;

/** Options of `mapAsync` / `flatMapAsync` (Flink's `AsyncDataStream` parameters). */
export interface AsyncOptions {
  /**
   * Most requests in flight per subtask (default 100). When the operator holds this many records
   * whose results are not emitted yet, the task stops reading its input (backpressure) until one
   * is emitted.
   */
  readonly capacity?: number;
  /**
   * How long one attempt of a request may take, in ms (default 30 000; `Infinity`: no timeout).
   * A timed-out attempt is retried if `retry` allows, else it fails the task with an
   * `AsyncTimeoutError`.
   */
  readonly timeoutMs?: number;
  /**
   * `true` (default): results in input order. `false`: results as they complete, but never across
   * a watermark (every result of a record before a watermark is emitted before it, and none after).
   */
  readonly ordered?: boolean;
  /**
   * Retries of a failed attempt (rejected, thrown or timed out). `attempts` is the total number of
   * attempts per record (>= 1), `backoffMs` the pause before each retry (default 0). Without it a
   * request is tried once.
   */
  readonly retry?: { readonly attempts: number; readonly backoffMs?: number };
}
