/**
 * Builds the operators of one task from its {@link JobVertex}: chained operators call each
 * other directly; operators with network edges write to the task's record writers. Outputs are
 * wired back to front, so every operator's output exists when it is constructed.
 */

import { isCommittingSink } from '../api/committing-sink.js';
import type { RuntimeContext } from '../api/functions.js';
import type { Logger } from '../api/logger.js';
import type { SinkContext } from '../api/source.js';
import type { ExecutionPlan, JobVertex } from '../graph/execution-plan.js';
import type { OperatorSpec } from '../graph/stream-graph.js';
import type { InjectedFault } from '../protocol/injected-fault.js';
import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import { assertNever } from '../util/assert-never.js';
import type { BusyMarker } from './busy-marker.js';
import { armFault } from './fault-injection.js';
import { AsyncWaitOperator } from './operators/async-wait-operator.js';
import { CoProcessOperator } from './operators/co-process-operator.js';
import { IntervalJoinOperator } from './operators/interval-join-operator.js';
import { KeyedProcessOperator, KeyedReduceOperator } from './operators/keyed-operators.js';
import { FilterOperator, FlatMapOperator, MapOperator } from './operators/one-input-operators.js';
import { SinkOperator } from './operators/sink-operator.js';
import { SourceOperator } from './operators/source-operator.js';
import type { Output, StreamOperator, WatermarkOutput } from './operators/stream-operator.js';
import { TimestampsAndWatermarksOperator } from './operators/timestamps-and-watermarks-operator.js';
import { WindowOperator } from './operators/window-operator.js';
import { ChainedOutput } from './outputs/chained-output.js';
import { CountingOutput, type RecordsOutCounter } from './outputs/counting-output.js';
import { FanOutput, FanWatermarkOutput } from './outputs/fan-output.js';
import { CommittingSinkOperator } from './sink/committing-sink-operator.js';
import type { TaskTime } from './timers/task-time.js';

export interface ChainEnvironment {
  readonly subtaskIndex: number;
  readonly parallelism: number;
  readonly attempt: number;
  /** Network outputs by edge id (record writers with their partitioners). */
  readonly networkOutputs: ReadonlyMap<number, Output>;
  /** Watermark writers by edge id: each writes a watermark frame to every channel of the edge. */
  readonly networkWatermarkOutputs: ReadonlyMap<number, WatermarkOutput>;
  /** The task's element timestamp and processing-time deadline, shared by the chain. */
  readonly time: TaskTime;
  createKeyedBackend(uid: string, operatorName: string): KeyedStateBackend;
  /** Restored operator-state entries for `uid`, or undefined on a fresh start. */
  restoredOperatorState(uid: string): readonly unknown[] | undefined;
  sinkContext(base: RuntimeContext, restoredState: readonly unknown[] | undefined): SinkContext;
  /** Stuck-task watchdog: chained hops record which operator runs (null: no watchdog). */
  readonly busy?: BusyMarker | null;
  /** Failures to inject (`weir verify`); absent or empty: none. */
  readonly faults?: readonly InjectedFault[];
  /** The job's logger for one operator's connector code (records carry `operator`); absent: none. */
  logger?(operatorName: string): Logger;
}

export class OperatorChain {
  /** Topological order: `operators[0]` is the head. */
  readonly operators: readonly StreamOperator[];
  /** Per operator (same order): what counts its `recordsOut`. */
  readonly outputs: readonly RecordsOutCounter[];
  readonly head: StreamOperator;
  /** The chain's async operators (mapAsync), which the task loop drains and waits for. */
  readonly asyncOperators: readonly AsyncWaitOperator[];

  constructor(
    readonly vertex: JobVertex,
    env: ChainEnvironment,
  ) {
    const byNode = new Map<number, StreamOperator>();
    const counters = new Map<number, RecordsOutCounter>();
    const indexOf = new Map(vertex.operators.map((o, i) => [o.nodeId, i]));
    const busy = env.busy ?? null;
    // A chained hop into `next` (at chain index `to`) from the operator at `from`
    // (chained-output.ts: counts, marks the running operator for the watchdog).
    const hop = (next: StreamOperator, from: number, to: number) => new ChainedOutput(next, busy, from, to);
    for (let i = vertex.operators.length - 1; i >= 0; i--) {
      const op = vertex.operators[i];
      const targets: Output[] = [];
      const watermarkTargets: WatermarkOutput[] = [];
      for (const nodeId of op.chainedOutputs) {
        const next = byNode.get(nodeId);
        if (!next) throw new Error(`chain of ${vertex.name}: operator ${nodeId} is not built yet`);
        targets.push(hop(next, i, indexOf.get(nodeId)!));
        watermarkTargets.push({ emitWatermark: (ts) => next.processWatermark(ts) });
      }
      for (const edgeId of op.outputEdges) {
        const w = env.networkOutputs.get(edgeId);
        if (!w) throw new Error(`chain of ${vertex.name}: no network output for edge ${edgeId}`);
        targets.push(w);
        const ww = env.networkWatermarkOutputs.get(edgeId);
        if (ww) watermarkTargets.push(ww);
      }
      // Side outputs (getSideOutput): wired like the main output, watermarks included.
      const sideOutputs = new Map<string, Output>();
      for (const side of op.sideOutputs ?? []) {
        const sideTargets: Output[] = [];
        for (const nodeId of side.chainedOutputs) {
          const next = byNode.get(nodeId)!;
          sideTargets.push(hop(next, i, indexOf.get(nodeId)!));
          watermarkTargets.push({ emitWatermark: (ts) => next.processWatermark(ts) });
        }
        for (const edgeId of side.outputEdges) {
          sideTargets.push(env.networkOutputs.get(edgeId)!);
          const ww = env.networkWatermarkOutputs.get(edgeId);
          if (ww) watermarkTargets.push(ww);
        }
        sideOutputs.set(side.tag, sideTargets.length === 1 ? sideTargets[0] : new FanOutput(sideTargets));
      }
      // A single chained successor: its hop counts (no wrapper, one call less per record).
      // Otherwise (a network edge, several targets, none) a counting wrapper in front of the
      // target or the fan.
      const only = targets.length === 1 ? targets[0] : null;
      const out: Output & RecordsOutCounter =
        only instanceof ChainedOutput ? only : new CountingOutput(only ?? new FanOutput(targets));
      counters.set(op.nodeId, out);
      const ctx: RuntimeContext = {
        subtaskIndex: env.subtaskIndex,
        parallelism: env.parallelism,
        attempt: env.attempt,
        operatorName: op.name,
      };
      const operator = createOperator(op.nodeId, op.name, op.uid, op.spec, ctx, out, env, sideOutputs);
      if (env.faults !== undefined && env.faults.length > 0) {
        armFault(operator, env.faults, { ...env, restored: env.restoredOperatorState(op.uid) !== undefined });
      }
      operator.watermarkOutput =
        watermarkTargets.length === 1 ? watermarkTargets[0] : new FanWatermarkOutput(watermarkTargets);
      byNode.set(op.nodeId, operator);
    }
    this.operators = vertex.operators.map((o) => byNode.get(o.nodeId)!);
    this.outputs = vertex.operators.map((o) => counters.get(o.nodeId)!);
    this.head = this.operators[0];
    this.asyncOperators = this.operators.filter((op) => op instanceof AsyncWaitOperator);
  }
}

function createOperator(
  nodeId: number,
  name: string,
  uid: string,
  spec: OperatorSpec,
  ctx: RuntimeContext,
  out: Output,
  env: ChainEnvironment,
  sideOutputs: ReadonlyMap<string, Output>,
): StreamOperator {
  switch (spec.kind) {
    case 'source':
      // The operator creates the reader (and the source's dead-letter sink writer, if any).
      return new SourceOperator(
        nodeId,
        name,
        uid,
        ctx,
        out,
        spec.source,
        env.restoredOperatorState(uid),
        (r) => env.sinkContext(ctx, r),
        env.logger?.(name),
      );
    case 'map':
      return new MapOperator(nodeId, name, uid, ctx, out, spec.fn);
    case 'filter':
      return new FilterOperator(nodeId, name, uid, ctx, out, spec.fn);
    case 'flat-map':
      return new FlatMapOperator(nodeId, name, uid, ctx, out, spec.fn, 'flatMap function');
    case 'process':
      return new FlatMapOperator(nodeId, name, uid, ctx, out, spec.fn, 'process function');
    case 'assign-timestamps':
      return new TimestampsAndWatermarksOperator(
        nodeId,
        name,
        uid,
        ctx,
        out,
        spec.strategy,
        env.time,
        env.restoredOperatorState(uid),
      );
    case 'keyed-process':
      return new KeyedProcessOperator(
        nodeId,
        name,
        uid,
        ctx,
        out,
        env.createKeyedBackend(uid, name),
        spec.fn,
        spec.onTimer,
        spec.keySelector,
        env.time,
      );
    case 'keyed-reduce':
      return new KeyedReduceOperator(
        nodeId,
        name,
        uid,
        ctx,
        out,
        env.createKeyedBackend(uid, name),
        spec.fn,
        spec.keySelector,
      );
    case 'co-process':
      return new CoProcessOperator(
        nodeId,
        name,
        uid,
        ctx,
        out,
        spec.fn,
        spec.keySelectors
          ? { backend: env.createKeyedBackend(uid, name), selectors: spec.keySelectors }
          : undefined,
        env.time,
      );
    case 'interval-join':
      return new IntervalJoinOperator(
        nodeId,
        name,
        uid,
        ctx,
        out,
        env.createKeyedBackend(uid, name),
        spec,
        env.time,
      );
    case 'window':
      return new WindowOperator(
        nodeId,
        name,
        uid,
        ctx,
        out,
        env.createKeyedBackend(uid, name),
        spec,
        env.time,
        spec.lateDataTag !== undefined ? sideOutputs.get(spec.lateDataTag) : undefined,
      );
    case 'async': {
      const keyed = spec.keySelector !== undefined;
      return new AsyncWaitOperator(
        nodeId,
        name,
        uid,
        ctx,
        out,
        spec.fn,
        spec.flat,
        spec.options,
        env.time,
        keyed ? env.createKeyedBackend(uid, name) : undefined,
        spec.keySelector,
        keyed ? undefined : env.restoredOperatorState(uid),
      );
    }
    case 'sink': {
      const restored = env.restoredOperatorState(uid);
      if (isCommittingSink(spec.sink)) {
        return new CommittingSinkOperator(nodeId, name, uid, ctx, spec.sink, env.sinkContext(ctx, restored));
      }
      return new SinkOperator(nodeId, name, uid, ctx, spec.sink.createWriter(env.sinkContext(ctx, restored)));
    }
    default:
      return assertNever(spec, 'operator kind');
  }
}

/** Plan lookup shared by the worker and the scheduler. */
export function findVertex(plan: ExecutionPlan, vertexId: number): JobVertex {
  const v = plan.vertices.find((x) => x.vertexId === vertexId);
  if (!v) throw new Error(`plan has no vertex ${vertexId}`);
  return v;
}
