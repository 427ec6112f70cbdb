/**
 * Logical graph → execution plan: resolves parallelism, chains operators into vertices (tasks)
 * and turns every remaining edge into a network {@link JobEdge}. Pure and deterministic: the same
 * graph and options give the same plan, ids included, in every thread.
 *
 * Rules (Flink's, DESIGN.md §1):
 * - A node's parallelism is its own or the job default.
 * - A `forward` edge between different parallelisms becomes `rebalance`.
 * - B is chained to A (same vertex, plain calls, no channel) iff B has exactly one input, that
 *   input is a `forward` edge from A, and both have the same parallelism. A may have several
 *   chained successors, so a chain is a tree rooted at its head. Sources are always heads, and so
 *   is every node with several inputs (union, connect).
 * - Keyed operators (those with `hash` inputs or keyed specs) need `parallelism <= maxParallelism`:
 *   each subtask must own at least one key group.
 */

import { InvalidGraphError, InvalidOptionError } from '../errors.js';
import { DEFAULT_MAX_PARALLELISM, UPPER_BOUND_MAX_PARALLELISM } from '../state/key-groups.js';
import type { ChainedOperator, ExecutionPlan, JobEdge, JobVertex } from './execution-plan.js';
import type { Partitioning, StreamGraph, StreamNode } from './stream-graph.js';
import { describeOperator, validateStreamGraph } from './validate-stream-graph.js';

export interface ExecutionPlanOptions {
  /** Default parallelism of operators that did not set one. Integer >= 1. */
  readonly parallelism: number;
  /** Number of key groups, the upper bound for keyed operators' parallelism. Default 128, at most 32768. */
  readonly maxParallelism?: number;
}

/**
 * Builds the execution plan of `graph`.
 *
 * @throws InvalidOptionError for a bad `parallelism` / `maxParallelism` option.
 * @throws InvalidGraphError for an invalid graph (no sink, a dangling output, a cycle, a bad node
 *   parallelism, a keyed operator above `maxParallelism`, ...), naming the operator.
 */
export function buildExecutionPlan(graph: StreamGraph, options: ExecutionPlanOptions): ExecutionPlan {
  const { parallelism: defaultParallelism, maxParallelism = DEFAULT_MAX_PARALLELISM } = options;
  if (!isPositiveInteger(defaultParallelism)) {
    throw new InvalidOptionError('parallelism', `must be an integer >= 1, got ${String(defaultParallelism)}`);
  }
  if (!isPositiveInteger(maxParallelism) || maxParallelism > UPPER_BOUND_MAX_PARALLELISM) {
    throw new InvalidOptionError(
      'maxParallelism',
      `must be an integer in [1, ${UPPER_BOUND_MAX_PARALLELISM}], got ${String(maxParallelism)}`,
    );
  }

  const { order, outputs } = validateStreamGraph(graph);

  const parallelismOf = new Map<number, number>();
  for (const node of order) {
    const p = node.parallelism ?? defaultParallelism;
    if (!isPositiveInteger(p)) {
      throw new InvalidGraphError(
        `${describeOperator(node)} has parallelism ${String(p)}; it must be an integer >= 1`,
      );
    }
    if (p > maxParallelism && isKeyed(node)) {
      throw new InvalidGraphError(
        `${describeOperator(node)} is keyed and has parallelism ${p}, above maxParallelism ${maxParallelism} ` +
          '(the number of key groups; every keyed subtask needs at least one): raise maxParallelism or lower the parallelism',
      );
    }
    parallelismOf.set(node.id, p);
  }

  // Chaining: assign every node to a vertex, in topological order so a predecessor's vertex is known.
  const vertexOf = new Map<number, number>();
  const members: StreamNode[][] = [];
  for (const node of order) {
    const input = node.inputs.length === 1 ? node.inputs[0] : undefined;
    const chained =
      node.spec.kind !== 'source' &&
      input !== undefined &&
      input.partitioning === 'forward' &&
      parallelismOf.get(input.sourceId) === parallelismOf.get(node.id);
    if (chained) {
      const vertexId = vertexOf.get(input.sourceId)!;
      vertexOf.set(node.id, vertexId);
      members[vertexId].push(node);
    } else {
      vertexOf.set(node.id, members.length);
      members.push([node]);
    }
  }

  const time = eventTimeProperties(order);

  // Network edges: ids in (target topological order, input order), so a vertex's input edges are
  // in the order its head declared them.
  const edges: JobEdge[] = [];
  const edgesFromNode = new Map<number, number[]>();
  for (const node of order) edgesFromNode.set(node.id, []);
  for (const node of order) {
    for (const input of node.inputs) {
      const sourceVertexId = vertexOf.get(input.sourceId)!;
      const targetVertexId = vertexOf.get(node.id)!;
      if (sourceVertexId === targetVertexId) continue; // the chained edge
      const partitioning: Partitioning =
        input.partitioning === 'forward' && parallelismOf.get(input.sourceId) !== parallelismOf.get(node.id)
          ? 'rebalance'
          : input.partitioning;
      const edge: JobEdge = {
        edgeId: edges.length,
        sourceVertexId,
        sourceNodeId: input.sourceId,
        targetVertexId,
        targetNodeId: node.id,
        inputIndex: input.inputIndex,
        partitioning,
        ...(partitioning === 'hash' ? { keySelector: input.keySelector } : {}),
        ...(time.timestamped.has(input.sourceId) ? { timestamped: true as const } : {}),
        ...(input.outputTag !== undefined ? { outputTag: input.outputTag } : {}),
      };
      edges.push(Object.freeze(edge));
      edgesFromNode.get(input.sourceId)!.push(edge.edgeId);
    }
  }

  const vertices: JobVertex[] = members.map((chain, vertexId) => {
    const operators: ChainedOperator[] = chain.map((node) => {
      const outs = outputs.get(node.id)!;
      const chainedFor = (tag: string | undefined) =>
        Object.freeze(
          outs
            .filter((e) => e.outputTag === tag && vertexOf.get(e.targetId) === vertexId)
            .map((e) => e.targetId),
        );
      const edgesFor = (tag: string | undefined) =>
        Object.freeze(edgesFromNode.get(node.id)!.filter((id) => edges[id].outputTag === tag));
      const tags = [...new Set(outs.map((e) => e.outputTag).filter((t) => t !== undefined))];
      return Object.freeze({
        nodeId: node.id,
        name: node.name,
        uid: node.uid,
        ...(node.explicitUid ? { explicitUid: true as const } : {}),
        spec: node.spec,
        chainedOutputs: chainedFor(undefined),
        outputEdges: edgesFor(undefined),
        ...(tags.length > 0
          ? {
              sideOutputs: Object.freeze(
                tags.map((tag) =>
                  Object.freeze({ tag, chainedOutputs: chainedFor(tag), outputEdges: edgesFor(tag) }),
                ),
              ),
            }
          : {}),
      });
    });
    const head = chain[0];
    const idle = time.idleTimeout.get(head.id);
    return Object.freeze({
      vertexId,
      name: chain.map((n) => n.name).join(' -> '),
      parallelism: parallelismOf.get(head.id)!,
      maxParallelism,
      operators: Object.freeze(operators),
      inputEdges: Object.freeze(edges.filter((e) => e.targetVertexId === vertexId).map((e) => e.edgeId)),
      outputEdges: Object.freeze(edges.filter((e) => e.sourceVertexId === vertexId).map((e) => e.edgeId)),
      ...(idle !== undefined ? { inputIdleTimeout: idle } : {}),
    });
  });

  return Object.freeze({ maxParallelism, vertices: Object.freeze(vertices), edges: Object.freeze(edges) });
}

/**
 * Which nodes emit timestamped records (an assigner, a window, or anything downstream of one),
 * and the idle timeout that applies to each node's inputs (the smallest of the assigners
 * upstream). `order` is topological.
 */
function eventTimeProperties(order: readonly StreamNode[]): {
  timestamped: Set<number>;
  idleTimeout: Map<number, number>;
} {
  const timestamped = new Set<number>();
  const idleTimeout = new Map<number, number>();
  /** The idle timeout an assigner at or upstream of the node sets for what it emits. */
  const emitted = new Map<number, number>();
  for (const node of order) {
    let inputIdle: number | undefined;
    let stamped = TIMESTAMPING_KINDS.has(node.spec.kind);
    for (const e of node.inputs) {
      if (timestamped.has(e.sourceId)) stamped = true;
      const t = emitted.get(e.sourceId);
      if (t !== undefined) inputIdle = inputIdle === undefined ? t : Math.min(inputIdle, t);
    }
    if (stamped) timestamped.add(node.id);
    if (inputIdle !== undefined) idleTimeout.set(node.id, inputIdle);
    // An assigner replaces upstream watermarks, and with them their idleness.
    const out = node.spec.kind === 'assign-timestamps' ? node.spec.strategy.idleTimeout : inputIdle;
    if (out !== undefined) emitted.set(node.id, out);
  }
  return { timestamped, idleTimeout };
}

/** Operators whose output records carry event timestamps even without a timestamped input. */
const TIMESTAMPING_KINDS: ReadonlySet<string> = new Set(['assign-timestamps', 'window']);

/** Whether the operator owns keyed state (and so key groups). */
function isKeyed(node: StreamNode): boolean {
  const { spec } = node;
  return (
    spec.kind === 'keyed-process' ||
    spec.kind === 'keyed-reduce' ||
    spec.kind === 'window' ||
    spec.kind === 'interval-join' ||
    (spec.kind === 'co-process' && spec.keySelectors !== undefined) ||
    (spec.kind === 'async' && spec.keySelector !== undefined) ||
    node.inputs.some((e) => e.partitioning === 'hash')
  );
}

function isPositiveInteger(x: unknown): x is number {
  return typeof x === 'number' && Number.isInteger(x) && x >= 1;
}
