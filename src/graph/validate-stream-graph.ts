/**
 * Structural validation of a {@link StreamGraph}, whoever built it (the fluent API or a test by
 * hand), and its topological order. Pure: returns facts or throws {@link InvalidGraphError}
 * naming the problem and the operator.
 *
 * Decision — dangling outputs: Flink silently accepts an operator whose output goes nowhere (it
 * runs and its output is dropped). weir rejects it: a dangling branch is almost always a
 * forgotten `sinkTo(...)`, and the fix is one call (`sinkTo(sinks.discard())` when intended).
 */

import { InvalidGraphError } from '../errors.js';
import type { StreamEdge, StreamGraph, StreamNode } from './stream-graph.js';

export interface ValidatedStreamGraph {
  /** All nodes in a topological order; ties broken by position in `graph.nodes` (deterministic). */
  readonly order: readonly StreamNode[];
  readonly nodeById: ReadonlyMap<number, StreamNode>;
  /** Outgoing edges per node id, in (target order, input order). Every node has an entry. */
  readonly outputs: ReadonlyMap<number, readonly StreamEdge[]>;
}

/** How an operator is named in messages: `operator "map" (map, id 3)`. */
export function describeOperator(node: StreamNode): string {
  return `operator "${node.name}" (${node.spec.kind}, id ${node.id})`;
}

/** Validates `graph` and orders it. Cost: O(nodes² + edges) (graphs are small). */
export function validateStreamGraph(graph: StreamGraph): ValidatedStreamGraph {
  if (graph.nodes.length === 0) {
    throw new InvalidGraphError('the job graph is empty: the build function added no operators');
  }

  const nodeById = new Map<number, StreamNode>();
  const byUid = new Map<string, StreamNode>();
  for (const node of graph.nodes) {
    if (!Number.isInteger(node.id) || node.id < 0) {
      throw new InvalidGraphError(`node id ${String(node.id)} is not a non-negative integer`);
    }
    const sameId = nodeById.get(node.id);
    if (sameId !== undefined) {
      throw new InvalidGraphError(`${describeOperator(node)} has the same id as ${describeOperator(sameId)}`);
    }
    nodeById.set(node.id, node);
    if (typeof node.name !== 'string' || node.name === '') {
      throw new InvalidGraphError(`node ${node.id} (${node.spec.kind}) has an empty name`);
    }
    if (typeof node.uid !== 'string' || node.uid === '') {
      throw new InvalidGraphError(`${describeOperator(node)} has an empty uid`);
    }
    const sameUid = byUid.get(node.uid);
    if (sameUid !== undefined) {
      throw new InvalidGraphError(
        `uid "${node.uid}" is used by both ${describeOperator(sameUid)} and ${describeOperator(node)}; uids must be unique`,
      );
    }
    byUid.set(node.uid, node);
  }

  const outputs = new Map<number, StreamEdge[]>();
  for (const node of graph.nodes) outputs.set(node.id, []);
  for (const node of graph.nodes) {
    checkInputs(node, nodeById);
    for (const edge of node.inputs) outputs.get(edge.sourceId)!.push(edge);
  }

  const order = topologicalOrder(graph, nodeById, outputs);

  if (!graph.nodes.some((n) => n.spec.kind === 'sink')) {
    throw new InvalidGraphError('the job has no sink: end every branch with .sinkTo(...)');
  }
  for (const node of order) {
    const outs = outputs.get(node.id)!;
    if (node.spec.kind === 'sink' && outs.length > 0) {
      throw new InvalidGraphError(`${describeOperator(node)} is a sink but has outputs`);
    }
    if (node.spec.kind !== 'sink' && outs.length === 0) {
      throw new InvalidGraphError(
        `the output of ${describeOperator(node)} goes nowhere: end the branch with .sinkTo(...) ` +
          '(sinks.discard() to drop it on purpose) or remove the operator',
      );
    }
  }
  return { order, nodeById, outputs };
}

function checkInputs(node: StreamNode, nodeById: ReadonlyMap<number, StreamNode>): void {
  const { spec } = node;
  if (spec.kind === 'source') {
    if (node.inputs.length > 0)
      throw new InvalidGraphError(`${describeOperator(node)} is a source but has inputs`);
    return;
  }
  if (node.inputs.length === 0) {
    throw new InvalidGraphError(`${describeOperator(node)} has no inputs (only sources may have none)`);
  }
  const keyed =
    spec.kind === 'keyed-process' ||
    spec.kind === 'keyed-reduce' ||
    spec.kind === 'window' ||
    spec.kind === 'interval-join' ||
    (spec.kind === 'co-process' && spec.keySelectors !== undefined) ||
    (spec.kind === 'async' && spec.keySelector !== undefined);
  const twoInput =
    spec.kind === 'co-process' ||
    spec.kind === 'interval-join' ||
    (spec.kind === 'window' && spec.keySelectors.length === 2);
  const seenInput = [false, false];
  for (const edge of node.inputs) {
    if (edge.targetId !== node.id) {
      throw new InvalidGraphError(
        `an input edge of ${describeOperator(node)} names target ${edge.targetId} instead of ${node.id}`,
      );
    }
    const source = nodeById.get(edge.sourceId);
    if (source === undefined) {
      throw new InvalidGraphError(
        `${describeOperator(node)} consumes node ${edge.sourceId}, which does not exist`,
      );
    }
    if (edge.inputIndex !== 0 && !(edge.inputIndex === 1 && twoInput)) {
      throw new InvalidGraphError(
        `${describeOperator(node)} has an input with index ${String(edge.inputIndex)}; only two-input operators have input 1`,
      );
    }
    seenInput[edge.inputIndex] = true;
    if (edge.partitioning === 'hash' && typeof edge.keySelector !== 'function') {
      throw new InvalidGraphError(
        `the hash-partitioned edge ${source.id} -> ${node.id} into ${describeOperator(node)} has no key selector`,
      );
    }
    if (keyed && edge.partitioning !== 'hash') {
      throw new InvalidGraphError(
        `${describeOperator(node)} is keyed but its input from ${describeOperator(source)} is ` +
          `'${edge.partitioning}', not 'hash' (keyBy)`,
      );
    }
  }
  if (twoInput && !(seenInput[0] && seenInput[1])) {
    throw new InvalidGraphError(
      `${describeOperator(node)} is a two-input operator but lacks input ${seenInput[0] ? 1 : 0}`,
    );
  }
}

/**
 * Kahn's algorithm. The fluent API cannot create a cycle (a node only consumes existing nodes),
 * but a hand-built graph can, and a cycle would deadlock barrier alignment, so check anyway.
 */
function topologicalOrder(
  graph: StreamGraph,
  nodeById: ReadonlyMap<number, StreamNode>,
  outputs: ReadonlyMap<number, readonly StreamEdge[]>,
): StreamNode[] {
  const position = new Map<number, number>();
  graph.nodes.forEach((n, i) => {
    position.set(n.id, i);
  });
  const pending = new Map<number, number>();
  for (const node of graph.nodes) pending.set(node.id, node.inputs.length);
  const ready = graph.nodes.filter((n) => n.inputs.length === 0);
  const order: StreamNode[] = [];
  while (ready.length > 0) {
    // Smallest position first: the order (and with it vertex and edge ids) is deterministic.
    let best = 0;
    for (let i = 1; i < ready.length; i++) {
      if (position.get(ready[i].id)! < position.get(ready[best].id)!) best = i;
    }
    const node = ready.splice(best, 1)[0];
    order.push(node);
    for (const edge of outputs.get(node.id)!) {
      const left = pending.get(edge.targetId)! - 1;
      pending.set(edge.targetId, left);
      if (left === 0) ready.push(nodeById.get(edge.targetId)!);
    }
  }
  if (order.length < graph.nodes.length) {
    // Nodes left over are on a cycle or downstream of one; trim the downstream ones (those with
    // no output into the left-over set) so that the message names the cycle.
    const left = new Set(graph.nodes.filter((n) => pending.get(n.id)! > 0).map((n) => n.id));
    for (let trimmed = true; trimmed; ) {
      trimmed = false;
      for (const id of left) {
        if (!outputs.get(id)!.some((e) => left.has(e.targetId))) {
          left.delete(id);
          trimmed = true;
        }
      }
    }
    const names = graph.nodes.filter((n) => left.has(n.id)).map((n) => `"${n.name}" (id ${n.id})`);
    throw new InvalidGraphError(`the job graph has a cycle through operators ${names.join(', ')}`);
  }
  return order;
}
