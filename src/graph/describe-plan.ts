/**
 * Human-readable and JSON-able views of an execution plan, for `weir run --json`, logs and tests.
 * Neither includes user functions.
 */

import { channelCountOfEdge } from './channels.js';
import type { ExecutionPlan } from './execution-plan.js';
import type { OperatorKind, Partitioning } from './stream-graph.js';

export interface PlanSummary {
  readonly maxParallelism: number;
  readonly vertices: readonly {
    readonly id: number;
    readonly name: string;
    readonly parallelism: number;
    /** Chain order; `operators[0]` is the head. */
    readonly operators: readonly {
      readonly id: number;
      readonly name: string;
      readonly uid: string;
      readonly kind: OperatorKind;
      /** Node ids this operator calls directly (same task). */
      readonly chainedTo: readonly number[];
    }[];
  }[];
  readonly edges: readonly {
    readonly id: number;
    /** Source vertex id. */
    readonly from: number;
    /** Target vertex id. */
    readonly to: number;
    readonly fromOperator: string;
    readonly toOperator: string;
    readonly inputIndex: 0 | 1;
    readonly partitioning: Partitioning;
    /** Number of rings (producer/consumer subtask pairs). */
    readonly channels: number;
  }[];
  /** Total rings over all edges. */
  readonly channels: number;
}

/** A JSON-able summary of `plan` (plain data, no functions). */
export function planSummary(plan: ExecutionPlan): PlanSummary {
  const operatorName = new Map<number, string>();
  for (const v of plan.vertices) for (const op of v.operators) operatorName.set(op.nodeId, op.name);
  const edges = plan.edges.map((e) => ({
    id: e.edgeId,
    from: e.sourceVertexId,
    to: e.targetVertexId,
    fromOperator: operatorName.get(e.sourceNodeId) ?? `node ${e.sourceNodeId}`,
    toOperator: operatorName.get(e.targetNodeId) ?? `node ${e.targetNodeId}`,
    inputIndex: e.inputIndex,
    partitioning: e.partitioning,
    channels: channelCountOfEdge(plan, e),
  }));
  return {
    maxParallelism: plan.maxParallelism,
    vertices: plan.vertices.map((v) => ({
      id: v.vertexId,
      name: v.name,
      parallelism: v.parallelism,
      operators: v.operators.map((op) => ({
        id: op.nodeId,
        name: op.name,
        uid: op.uid,
        kind: op.spec.kind,
        chainedTo: [...op.chainedOutputs],
      })),
    })),
    edges,
    channels: edges.reduce((n, e) => n + e.channels, 0),
  };
}

/**
 * A multi-line description:
 *
 * ```text
 * plan: 2 tasks, 1 network edge, 4 channels, maxParallelism 128
 * task 0 "numbers -> map" x2
 *   numbers (source, uid source:numbers:0)
 *   map (map, uid map:map:0) <- numbers
 * task 1 "keyed-process -> sink: sums" x2
 *   ...
 * edge 0: task 0 (map) => task 1 (keyed-process), hash, 4 channels
 * ```
 */
export function describePlan(plan: ExecutionPlan): string {
  const summary = planSummary(plan);
  const lines: string[] = [];
  const nEdges = summary.edges.length;
  lines.push(
    `plan: ${plural(summary.vertices.length, 'task')}, ${plural(nEdges, 'network edge')}, ` +
      `${plural(summary.channels, 'channel')}, maxParallelism ${summary.maxParallelism}`,
  );
  for (const v of summary.vertices) {
    lines.push(`task ${v.id} "${v.name}" x${v.parallelism}`);
    for (const op of v.operators) {
      const feeders = v.operators.filter((o) => o.chainedTo.includes(op.id)).map((o) => o.name);
      const fed = feeders.length > 0 ? ` <- ${feeders.join(', ')}` : '';
      lines.push(`  ${op.name} (${op.kind}, uid ${op.uid})${fed}`);
    }
  }
  for (const e of summary.edges) {
    const input = e.inputIndex === 1 ? ' input 2,' : '';
    lines.push(
      `edge ${e.id}: task ${e.from} (${e.fromOperator}) => task ${e.to} (${e.toOperator}),${input} ` +
        `${e.partitioning}, ${plural(e.channels, 'channel')}`,
    );
  }
  return lines.join('\n');
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
