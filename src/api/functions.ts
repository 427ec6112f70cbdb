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

/** Keyed state handles, scoped to the current key. Completed by the State issue (list, map, ...). */
export interface KeyedStateStore {
  value<T>(name: string): ValueState<T>;
}

/** Context of functions on a keyed stream. */
export interface KeyedContext<K = unknown> extends RuntimeContext {
  /** The key of the element being processed. */
  readonly key: K;
  readonly state: KeyedStateStore;
}

export type MapFunction<T, R> = (value: T, ctx: RuntimeContext) => R;
export type FilterFunction<T> = (value: T, ctx: RuntimeContext) => boolean;
export type FlatMapFunction<T, R> = (value: T, ctx: RuntimeContext, out: Collector<R>) => void;
export type ProcessFunction<T, R> = (value: T, ctx: RuntimeContext, out: Collector<R>) => void;
export type KeyedProcessFunction<K, T, R> = (value: T, ctx: KeyedContext<K>, out: Collector<R>) => void;
export type ReduceFunction<T> = (accumulator: T, value: T) => T;
export type KeySelector<T, K> = (value: T) => K;

/** Two-input process function for `connect(...).process(...)`. */
export interface CoProcessFunction<A, B, R, C extends RuntimeContext = RuntimeContext> {
  processElement1(value: A, ctx: C, out: Collector<R>): void;
  processElement2(value: B, ctx: C, out: Collector<R>): void;
}
