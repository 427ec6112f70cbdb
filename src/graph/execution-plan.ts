/**
 * The execution plan: the logical graph after chaining. Each {@link JobVertex} is one task per
 * subtask (a chain of operators joined by plain calls); each {@link JobEdge} becomes one SPSC ring
 * per (producer subtask, consumer subtask) pair that the partitioning can route to.
 */

import type { KeySelector } from '../api/functions.js';
import type { OperatorSpec, Partitioning } from './stream-graph.js';

export interface ChainedOperator {
  readonly nodeId: number;
  readonly name: string;
  readonly uid: string;
  /** True when `uid` was set with `.uid()` (see `StreamNode.explicitUid`). */
  readonly explicitUid?: true;
  readonly spec: OperatorSpec;
  /** Operators of the same vertex that receive this operator's output by direct call. */
  readonly chainedOutputs: readonly number[];
  /** Network edges (ids) that leave from this operator. */
  readonly outputEdges: readonly number[];
  /** Side outputs (`getSideOutput(tag)`) by tag id, wired like the main output; absent when none. */
  readonly sideOutputs?: readonly SideOutputWiring[];
}

export interface SideOutputWiring {
  readonly tag: string;
  readonly chainedOutputs: readonly number[];
  readonly outputEdges: readonly number[];
}

export interface JobVertex {
  readonly vertexId: number;
  /** Chain names joined: `map -> filter`. */
  readonly name: string;
  readonly parallelism: number;
  readonly maxParallelism: number;
  /** Topologically ordered; `operators[0]` is the chain head (the only one with network inputs). */
  readonly operators: readonly ChainedOperator[];
  readonly inputEdges: readonly number[];
  readonly outputEdges: readonly number[];
  /**
   * Idle timeout (ms) of the head's input channels for its watermark: the smallest `idleTimeout`
   * of the timestamp assigners upstream. Absent: channels never count as idle.
   */
  readonly inputIdleTimeout?: number;
}

export interface JobEdge {
  readonly edgeId: number;
  readonly sourceVertexId: number;
  /** The operator inside the source vertex that emits onto this edge. */
  readonly sourceNodeId: number;
  readonly targetVertexId: number;
  /** Always the head operator of the target vertex. */
  readonly targetNodeId: number;
  readonly inputIndex: 0 | 1;
  readonly partitioning: Partitioning;
  /** Present iff `partitioning === 'hash'`. */
  readonly keySelector?: KeySelector<any, any>;
  /** The side output of the source operator this edge carries; absent for the main output. */
  readonly outputTag?: string;
  /**
   * True when records on this edge carry event timestamps (an assigner or a window is upstream):
   * each record travels as `[timestamp | null, value]`. Absent on plain edges, which pay nothing.
   */
  readonly timestamped?: true;
}

export interface ExecutionPlan {
  readonly maxParallelism: number;
  /** Indexed by id: `vertices[i].vertexId === i`. Heads in topological order. */
  readonly vertices: readonly JobVertex[];
  /** Indexed by id: `edges[i].edgeId === i`. */
  readonly edges: readonly JobEdge[];
}

/** One channel of an edge: which producer subtask writes to which consumer subtask. */
export interface ChannelEndpoints {
  readonly edgeId: number;
  readonly producerSubtask: number;
  readonly consumerSubtask: number;
}
