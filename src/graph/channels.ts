/**
 * Channel enumeration: which (producer subtask → consumer subtask) rings an execution plan needs,
 * and in which order each task sees its own. The scheduler allocates one ring per
 * {@link ChannelEndpoints}; both ends find it by {@link channelKey}.
 *
 * Orders (stable; the runtime may index by position):
 * - Channels of one edge: `forward` has one channel per subtask, `i → i`; every other
 *   partitioning connects all pairs, producer-major, consumers ascending.
 * - Input channels of a subtask: the vertex's `inputEdges` in order (the head's declared input
 *   order), and per edge the producer subtasks ascending. A task's input-gate channel index is
 *   the position in this list.
 * - Output channels of a subtask: the vertex's `outputEdges` in order, and per edge the consumer
 *   subtasks ascending. Within one non-forward edge the position equals the consumer index a
 *   partitioner returns; a forward edge contributes the single channel to consumer `subtask`.
 */

import { InvalidGraphError } from '../errors.js';
import type { ChannelEndpoints, ExecutionPlan, JobEdge, JobVertex } from './execution-plan.js';

/** All channels of `edge`, in the order described above. */
export function channelsOfEdge(plan: ExecutionPlan, edge: JobEdge): ChannelEndpoints[] {
  const producers = vertexOf(plan, edge.sourceVertexId).parallelism;
  const consumers = vertexOf(plan, edge.targetVertexId).parallelism;
  const out: ChannelEndpoints[] = [];
  if (edge.partitioning === 'forward') {
    requireForwardable(edge, producers, consumers);
    for (let i = 0; i < producers; i++)
      out.push({ edgeId: edge.edgeId, producerSubtask: i, consumerSubtask: i });
    return out;
  }
  for (let p = 0; p < producers; p++) {
    for (let c = 0; c < consumers; c++)
      out.push({ edgeId: edge.edgeId, producerSubtask: p, consumerSubtask: c });
  }
  return out;
}

/** Number of channels of `edge` without enumerating them. */
export function channelCountOfEdge(plan: ExecutionPlan, edge: JobEdge): number {
  const producers = vertexOf(plan, edge.sourceVertexId).parallelism;
  const consumers = vertexOf(plan, edge.targetVertexId).parallelism;
  if (edge.partitioning === 'forward') {
    requireForwardable(edge, producers, consumers);
    return producers;
  }
  return producers * consumers;
}

/** Every channel of the plan, by edge id then in each edge's order. */
export function allChannels(plan: ExecutionPlan): ChannelEndpoints[] {
  return plan.edges.flatMap((edge) => channelsOfEdge(plan, edge));
}

/** The channels subtask `subtask` of `vertexId` reads, in input-gate order (see the file header). */
export function inputChannelsOf(plan: ExecutionPlan, vertexId: number, subtask: number): ChannelEndpoints[] {
  const vertex = vertexOf(plan, vertexId);
  requireSubtask(vertex, subtask);
  const out: ChannelEndpoints[] = [];
  for (const edgeId of vertex.inputEdges) {
    const edge = edgeOf(plan, edgeId);
    const producers = vertexOf(plan, edge.sourceVertexId).parallelism;
    if (edge.partitioning === 'forward') {
      requireForwardable(edge, producers, vertex.parallelism);
      out.push({ edgeId, producerSubtask: subtask, consumerSubtask: subtask });
    } else {
      for (let p = 0; p < producers; p++) out.push({ edgeId, producerSubtask: p, consumerSubtask: subtask });
    }
  }
  return out;
}

/** The channels subtask `subtask` of `vertexId` writes, in order (see the file header). */
export function outputChannelsOf(plan: ExecutionPlan, vertexId: number, subtask: number): ChannelEndpoints[] {
  const vertex = vertexOf(plan, vertexId);
  requireSubtask(vertex, subtask);
  return vertex.outputEdges.flatMap((edgeId) => outputChannelsOfEdge(plan, edgeOf(plan, edgeId), subtask));
}

/**
 * The channels producer subtask `subtask` writes on `edge`, consumers ascending: for a non-forward
 * edge `result[partitioner.select(record)]` is the target; a forward edge has the one channel to
 * consumer `subtask`.
 */
export function outputChannelsOfEdge(
  plan: ExecutionPlan,
  edge: JobEdge,
  subtask: number,
): ChannelEndpoints[] {
  const producer = vertexOf(plan, edge.sourceVertexId);
  requireSubtask(producer, subtask);
  const consumers = vertexOf(plan, edge.targetVertexId).parallelism;
  const { edgeId } = edge;
  if (edge.partitioning === 'forward') {
    requireForwardable(edge, producer.parallelism, consumers);
    return [{ edgeId, producerSubtask: subtask, consumerSubtask: subtask }];
  }
  const out: ChannelEndpoints[] = [];
  for (let c = 0; c < consumers; c++) out.push({ edgeId, producerSubtask: subtask, consumerSubtask: c });
  return out;
}

/** Stable string identity of a channel, equal on both ends: `e3:1->0`. */
export function channelKey(ch: ChannelEndpoints): string {
  return `e${ch.edgeId}:${ch.producerSubtask}->${ch.consumerSubtask}`;
}

function vertexOf(plan: ExecutionPlan, vertexId: number): JobVertex {
  const vertex = plan.vertices[vertexId];
  if (vertex === undefined || vertex.vertexId !== vertexId)
    throw new RangeError(`plan has no vertex ${vertexId}`);
  return vertex;
}

function edgeOf(plan: ExecutionPlan, edgeId: number): JobEdge {
  const edge = plan.edges[edgeId];
  if (edge === undefined || edge.edgeId !== edgeId) throw new RangeError(`plan has no edge ${edgeId}`);
  return edge;
}

function requireSubtask(vertex: JobVertex, subtask: number): void {
  if (!Number.isInteger(subtask) || subtask < 0 || subtask >= vertex.parallelism) {
    throw new RangeError(
      `subtask ${subtask} out of range for vertex "${vertex.name}" of parallelism ${vertex.parallelism}`,
    );
  }
}

/** `buildExecutionPlan` never produces this; a hand-built plan might. */
function requireForwardable(edge: JobEdge, producers: number, consumers: number): void {
  if (producers !== consumers) {
    throw new InvalidGraphError(
      `edge ${edge.edgeId} is 'forward' between parallelisms ${producers} and ${consumers}; forward needs equal parallelism`,
    );
  }
}
