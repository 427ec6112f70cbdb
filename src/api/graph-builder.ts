/**
 * The mutable side of one build of a job: the nodes created so far, the id counter, and the
 * per-operator settings (`name`, `uid`, `setParallelism`) that the fluent API applies after an
 * operator was created. Internal to `src/api`; users only see {@link StreamEnvironment} and the
 * stream classes.
 *
 * Invariants:
 * - Node ids are `0, 1, 2, ...` in creation order, counted here and nowhere else (no module-level
 *   state), so the same module built with the same args yields the same ids in every thread.
 * - A node's inputs only name nodes that existed when it was created, so creation order is a
 *   topological order.
 * - Once {@link GraphBuilder.seal} ran (the build function returned) every mutation throws:
 *   a stream captured and used later would otherwise change a graph that was already planned.
 */

import { InvalidGraphError, InvalidOptionError } from '../errors.js';
import { defaultUids } from '../graph/operator-uid.js';
import type {
  OperatorSpec,
  Partitioning,
  StreamEdge,
  StreamGraph,
  StreamNode,
} from '../graph/stream-graph.js';
import type { KeySelector } from './functions.js';

/**
 * One input of the next operator, as the fluent API accumulates it: `rebalance()`, `broadcast()`
 * and `keyBy()` rewrite the partitioning, `union()` concatenates lists of them.
 */
export interface PendingInput {
  readonly nodeId: number;
  readonly partitioning: Partitioning;
  /** Present iff `partitioning === 'hash'`. */
  readonly keySelector?: KeySelector<any, any>;
  /** A side output of the node (by tag id) instead of its main output. */
  readonly outputTag?: string;
}

/** `input` with another partitioning (keeping its node and side-output tag). */
export function repartitioned(
  input: PendingInput,
  partitioning: Partitioning,
  keySelector?: KeySelector<any, any>,
): PendingInput {
  return {
    nodeId: input.nodeId,
    partitioning,
    ...(partitioning === 'hash' ? { keySelector } : {}),
    ...(input.outputTag !== undefined ? { outputTag: input.outputTag } : {}),
  };
}

interface NodeDraft {
  readonly id: number;
  name: string;
  /** The explicit uid (`.uid()`); the default one is assigned at {@link GraphBuilder.seal}. */
  uid: string | undefined;
  parallelism: number | undefined;
  readonly spec: OperatorSpec;
  readonly inputs: readonly StreamEdge[];
}

export class GraphBuilder {
  readonly #nodes: NodeDraft[] = [];
  #sealed = false;
  /** Ids of the nodes that got a default uid; set by {@link seal}. */
  #defaultUid: Set<number> | null = null;

  /**
   * Adds an operator consuming `inputs` (input 0) and, for two-input operators, `inputs1`
   * (input 1). Returns the new node's id.
   */
  addNode(
    spec: OperatorSpec,
    name: string,
    inputs: readonly PendingInput[],
    inputs1: readonly PendingInput[] = [],
  ): number {
    this.#assertOpen();
    const id = this.#nodes.length;
    const edges: StreamEdge[] = [];
    const toEdge = (input: PendingInput, inputIndex: 0 | 1): StreamEdge => {
      if (input.nodeId < 0 || input.nodeId >= id) {
        throw new InvalidGraphError(`internal: input node ${input.nodeId} does not exist yet`);
      }
      const edge: StreamEdge = {
        sourceId: input.nodeId,
        targetId: id,
        inputIndex,
        partitioning: input.partitioning,
        ...(input.partitioning === 'hash' ? { keySelector: input.keySelector } : {}),
        ...(input.outputTag !== undefined ? { outputTag: input.outputTag } : {}),
      };
      return Object.freeze(edge);
    };
    for (const input of inputs) edges.push(toEdge(input, 0));
    for (const input of inputs1) edges.push(toEdge(input, 1));
    this.#nodes.push({
      id,
      name,
      uid: undefined,
      parallelism: undefined,
      spec,
      inputs: Object.freeze(edges),
    });
    return id;
  }

  /** The node's spec (to check what a side output refers to). */
  specOf(id: number): OperatorSpec {
    return this.#node(id).spec;
  }

  /** The node's current display name (for error messages). */
  nameOf(id: number): string {
    return this.#node(id).name;
  }

  /** `name()`: a non-empty string, else {@link InvalidOptionError}. */
  setName(id: number, name: unknown): void {
    this.#assertOpen();
    const node = this.#node(id);
    if (typeof name !== 'string' || name.trim() === '') {
      throw new InvalidOptionError(
        'name',
        `${describeNode(node)}: a name must be a non-empty string, got ${show(name)}`,
      );
    }
    node.name = name;
  }

  /** `uid()`: a non-empty string no other node has explicitly (default uids are checked at {@link seal}). */
  setUid(id: number, uid: unknown): void {
    this.#assertOpen();
    const node = this.#node(id);
    if (typeof uid !== 'string' || uid.trim() === '') {
      throw new InvalidOptionError(
        'uid',
        `${describeNode(node)}: a uid must be a non-empty string, got ${show(uid)}`,
      );
    }
    const clash = this.#nodes.find((n) => n !== node && n.uid === uid);
    if (clash !== undefined) {
      throw new InvalidOptionError(
        'uid',
        `uid "${uid}" of ${describeNode(node)} is already used by ${describeNode(clash)}; uids must be unique`,
      );
    }
    node.uid = uid;
  }

  /** `setParallelism()`: an integer >= 1, else {@link InvalidOptionError} naming the operator. */
  setParallelism(id: number, parallelism: unknown): void {
    this.#assertOpen();
    const node = this.#node(id);
    if (typeof parallelism !== 'number' || !Number.isInteger(parallelism) || parallelism < 1) {
      throw new InvalidOptionError(
        'parallelism',
        `${describeNode(node)}: parallelism must be an integer >= 1, got ${show(parallelism)}`,
      );
    }
    node.parallelism = parallelism;
  }

  /**
   * Ends the build: no further mutation is accepted. Assigns default uids (see
   * `graph/operator-uid.ts`: they depend on names, which are final only now) and checks what can
   * only be checked on the whole graph (a default uid clashing with an explicit one).
   */
  seal(): void {
    this.#sealed = true;
    const defaults = defaultUids(this.#nodes);
    this.#defaultUid = new Set<number>();
    for (const node of this.#nodes) {
      if (node.uid !== undefined) continue;
      node.uid = defaults[node.id];
      this.#defaultUid.add(node.id);
    }
    const byUid = new Map<string, NodeDraft>();
    for (const node of this.#nodes) {
      const other = byUid.get(node.uid!);
      if (other !== undefined) {
        throw new InvalidOptionError(
          'uid',
          `uid "${node.uid}" is used by both ${describeNode(other)} and ${describeNode(node)}; uids must be unique`,
        );
      }
      byUid.set(node.uid!, node);
    }
  }

  /** A frozen snapshot of the graph; call after {@link seal}. */
  toStreamGraph(): StreamGraph {
    if (this.#defaultUid === null) throw new InvalidGraphError('internal: the graph is not sealed');
    const defaulted = this.#defaultUid;
    const nodes: StreamNode[] = this.#nodes.map((n) =>
      Object.freeze({
        id: n.id,
        name: n.name,
        uid: n.uid!,
        ...(defaulted.has(n.id) ? {} : { explicitUid: true as const }),
        parallelism: n.parallelism,
        spec: n.spec,
        inputs: n.inputs,
      }),
    );
    return Object.freeze({ nodes: Object.freeze(nodes) });
  }

  #node(id: number): NodeDraft {
    const node = this.#nodes[id];
    if (node === undefined) throw new InvalidGraphError(`internal: no node ${id}`);
    return node;
  }

  #assertOpen(): void {
    if (this.#sealed) {
      throw new InvalidGraphError(
        'the job graph is already built: streams cannot be changed or extended after the build function ' +
          'passed to defineJob(...) returned (do all graph building synchronously inside it)',
      );
    }
  }
}

function describeNode(node: NodeDraft): string {
  return `operator "${node.name}" (${node.spec.kind}, id ${node.id})`;
}

/** Short, safe rendering of an arbitrary user value for messages. */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (value === null) return 'null';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}

/** Throws a `TypeError` unless `fn` is a function; `what` names the call (`map()`). */
export function requireFunction(fn: unknown, what: string): void {
  if (typeof fn !== 'function') throw new TypeError(`${what}: expected a function, got ${show(fn)}`);
}

/**
 * Key of the internal core on stream handles. Not part of the public API; a symbol so that it
 * neither shows up in completion lists nor clashes with user-visible names.
 */
export const STREAM_CORE: unique symbol = Symbol('weir.stream-core');

/**
 * What every stream handle carries: the build it belongs to, the inputs the next operator will
 * consume, and the operator that produced the stream (the one `name`/`uid`/`setParallelism`
 * configure), if the stream is exactly one operator's output.
 */
export interface StreamCore {
  readonly builder: GraphBuilder;
  readonly inputs: readonly PendingInput[];
  /** `undefined` after `rebalance()`, `broadcast()` or `union()`: no single operator to configure. */
  readonly operatorId: number | undefined;
}

/** The core of an operator's direct output: one forward input from that operator. */
export function operatorOutput(builder: GraphBuilder, operatorId: number): StreamCore {
  return { builder, inputs: [{ nodeId: operatorId, partitioning: 'forward' }], operatorId };
}

/** Throws unless both cores belong to the same build (streams of two environments cannot meet). */
export function requireSameBuild(a: StreamCore, b: StreamCore, what: string): void {
  if (a.builder !== b.builder) {
    throw new InvalidGraphError(
      `${what}: the streams belong to different environments (different job builds)`,
    );
  }
}

/**
 * `F` with bivariant parameters (the method-signature trick). Used for user functions taken by
 * methods of stream handles, so that e.g. `KeyedStream<number, K>` stays assignable to
 * `KeyedStream<unknown, K>` (a strictly typed function parameter would make the element type
 * contravariant, and every handle reachable from a stream would inherit that).
 */
export type Bivariant<F extends (...args: any[]) => any> = { m(...args: Parameters<F>): ReturnType<F> }['m'];
