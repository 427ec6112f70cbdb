/**
 * The logical graph a job module builds: one node per operator, edges with a partitioning.
 * Built identically in the main thread and in every worker (same module, same args), so node
 * ids are deterministic: they are assigned in creation order by the environment.
 */

import type { ResolvedAsyncOptions } from '../api/async-options.js';
import type { CommittingSink } from '../api/committing-sink.js';
import type {
  AggregateFunction,
  CoProcessFunction,
  FilterFunction,
  FlatMapFunction,
  KeyedProcessFunction,
  KeySelector,
  MapFunction,
  OnTimerFunction,
  ProcessFunction,
  ReduceFunction,
  RuntimeContext,
} from '../api/functions.js';
import type { ProcessJoinFunction } from '../api/interval-join.js';
import type { Sink, Source } from '../api/source.js';
import type { ResolvedWatermarkStrategy } from '../api/watermarks.js';
import type { ProcessWindowFunction } from '../api/windowed-stream.js';
import type { WindowAssigner } from '../api/windows.js';

/** What a window operator computes when a window fires. */
export type WindowFunctionSpec =
  | { readonly kind: 'reduce'; readonly fn: ReduceFunction<any> }
  | { readonly kind: 'aggregate'; readonly fn: AggregateFunction<any, any, any> }
  | { readonly kind: 'process'; readonly fn: ProcessWindowFunction<any, any, any> }
  /** Window join: `fn(left, right)` for every pair of the window's two inputs. */
  | { readonly kind: 'join'; readonly fn: (left: any, right: any) => any };

/** How records travel along an edge. */
export type Partitioning = 'forward' | 'rebalance' | 'hash' | 'broadcast';

/** What an operator does; a closed union keyed on `kind`. Functions are the user's. */
export type OperatorSpec =
  | { readonly kind: 'source'; readonly source: Source<unknown> }
  | { readonly kind: 'map'; readonly fn: MapFunction<any, any> }
  | { readonly kind: 'filter'; readonly fn: FilterFunction<any> }
  | { readonly kind: 'flat-map'; readonly fn: FlatMapFunction<any, any> }
  | { readonly kind: 'process'; readonly fn: ProcessFunction<any, any> }
  | { readonly kind: 'assign-timestamps'; readonly strategy: ResolvedWatermarkStrategy }
  | {
      readonly kind: 'keyed-process';
      readonly fn: KeyedProcessFunction<any, any, any>;
      readonly onTimer?: OnTimerFunction<any, any>;
      readonly keySelector: KeySelector<any, any>;
    }
  | {
      readonly kind: 'keyed-reduce';
      readonly fn: ReduceFunction<any>;
      readonly keySelector: KeySelector<any, any>;
    }
  | {
      readonly kind: 'co-process';
      readonly fn: CoProcessFunction<any, any, any, RuntimeContext>;
      /** Present when both inputs are keyed: the function then runs with a keyed context. */
      readonly keySelectors?: readonly [KeySelector<any, any>, KeySelector<any, any>];
    }
  | {
      readonly kind: 'window';
      readonly assigner: WindowAssigner;
      readonly function: WindowFunctionSpec;
      /** One per input: a window join has two inputs, keyed by `where` and `equalTo`. */
      readonly keySelectors: readonly KeySelector<any, any>[];
      readonly allowedLateness: number;
      /** Side output for late records (`sideOutputLateData`); dropped (and counted) when absent. */
      readonly lateDataTag?: string;
    }
  | {
      readonly kind: 'interval-join';
      /** Right elements join a left element at `t` when their time is in `[t + lower, t + upper]`. */
      readonly lower: number;
      readonly upper: number;
      readonly fn: ProcessJoinFunction<any, any, any, any>;
      readonly keySelectors: readonly [KeySelector<any, any>, KeySelector<any, any>];
    }
  | {
      /** `mapAsync` / `flatMapAsync` (Flink's async I/O operator). */
      readonly kind: 'async';
      /** `flatMapAsync`: the function resolves to an iterable of results. */
      readonly flat: boolean;
      readonly fn: (value: any, ctx: any) => unknown;
      readonly options: ResolvedAsyncOptions;
      /** Present on a keyed stream: the function sees `ctx.key` (and the operator is keyed). */
      readonly keySelector?: KeySelector<any, any>;
    }
  | { readonly kind: 'sink'; readonly sink: Sink<unknown> | CommittingSink<unknown, unknown> };

export type OperatorKind = OperatorSpec['kind'];

export interface StreamEdge {
  readonly sourceId: number;
  readonly targetId: number;
  /** 0 for one-input operators; 0 or 1 for two-input (`connect`) operators. */
  readonly inputIndex: 0 | 1;
  readonly partitioning: Partitioning;
  /** Present iff `partitioning === 'hash'`. */
  readonly keySelector?: KeySelector<any, any>;
  /** Present when the edge carries a side output of the source (`getSideOutput(tag)`), by tag id. */
  readonly outputTag?: string;
}

export interface StreamNode {
  /** Deterministic: creation order within one build of the job. */
  readonly id: number;
  readonly name: string;
  /**
   * Stable identity for state across restarts and rescaling: the `.uid()` given, else a default
   * derived from the kind, the name and the ordinal among operators of that kind and name
   * (see `operator-uid.ts`).
   */
  readonly uid: string;
  /** True when `uid` was set with `.uid()`. */
  readonly explicitUid?: true;
  /** `undefined`: the job's default parallelism. */
  readonly parallelism: number | undefined;
  readonly spec: OperatorSpec;
  readonly inputs: readonly StreamEdge[];
}

export interface StreamGraph {
  /** In creation order, which is a topological order (a node can only consume existing nodes). */
  readonly nodes: readonly StreamNode[];
}
