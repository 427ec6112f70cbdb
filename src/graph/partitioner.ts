/**
 * Partitioners: on the producing side of a network edge, which consumer subtask gets a record.
 *
 * One partitioner per (edge, producer subtask); it is called once per record, so `select` is the
 * hot path: it returns a plain number and allocates nothing itself (a hash partitioner runs the
 * user's key selector, and composite keys — arrays, objects — are encoded to a string to hash,
 * which allocates; strings and numbers do not).
 *
 * Not thread-safe and stateful (round-robin position): each producer subtask owns its own.
 */

import type { KeySelector } from '../api/functions.js';
import { InvalidGraphError } from '../errors.js';
import {
  assignToKeyGroup,
  hashString,
  operatorIndexForKeyGroup,
  UPPER_BOUND_MAX_PARALLELISM,
} from '../state/key-groups.js';
import { synchronousResult } from '../worker/operators/synchronous-result.js';
import type { ExecutionPlan, JobEdge } from './execution-plan.js';
import type { Partitioning } from './stream-graph.js';

/** What {@link Partitioner.select} returns for a record that goes to every consumer (broadcast). */
export const ALL_CONSUMERS = -1;

export interface Partitioner {
  readonly partitioning: Partitioning;
  /**
   * The consumer subtask index (`0 <= i < consumerParallelism`) that receives `record`, or
   * {@link ALL_CONSUMERS}. Throws only what the key selector throws, or a
   * `KeyNotSerializableError` naming the keyed operator (both are task failures).
   */
  select(record: unknown): number;
}

/** `forward`: producer subtask `i` always writes to consumer subtask `i`. */
export class ForwardPartitioner implements Partitioner {
  readonly partitioning = 'forward' as const;
  readonly #target: number;
  constructor(producerSubtask: number) {
    this.#target = producerSubtask;
  }
  select(_record: unknown): number {
    return this.#target;
  }
}

/**
 * `rebalance`: round-robin over the consumers. Flink starts at a random consumer so that
 * producers do not all hit consumer 0 first; weir starts at `producerSubtask mod consumers`,
 * which spreads them the same way and keeps runs reproducible.
 */
export class RebalancePartitioner implements Partitioner {
  readonly partitioning = 'rebalance' as const;
  readonly #consumers: number;
  /** The consumer the next record goes to; always in [0, consumers). */
  #next: number;
  constructor(producerSubtask: number, consumerParallelism: number) {
    this.#consumers = consumerParallelism;
    this.#next = producerSubtask % consumerParallelism;
  }
  select(_record: unknown): number {
    const target = this.#next;
    this.#next = target + 1 === this.#consumers ? 0 : target + 1;
    return target;
  }
}

/**
 * `hash` (keyBy): key → key group (`hash(key) mod maxParallelism`) → the consumer whose key-group
 * range contains it (`keyGroupRangeFor`). Consistent across threads and runs, and with the key
 * groups the consumer's keyed state is organised by.
 */
export class HashPartitioner implements Partitioner {
  readonly partitioning = 'hash' as const;
  readonly #keySelector: KeySelector<unknown, unknown>;
  readonly #maxParallelism: number;
  /**
   * `maxParallelism − 1` when it is a power of two (the default 128), else −1: the key group of
   * a uint32 hash is then its low bits, a mask instead of an integer division (~8 ns here).
   */
  readonly #groupMask: number;
  /**
   * Key group → consumer subtask (`operatorIndexForKeyGroup`), computed once: an array load per
   * record instead of a float multiply, divide and floor. At most 2^15 entries (64 KiB).
   */
  readonly #consumerOf: Uint16Array;
  /** The keyed operator, named in key errors. */
  readonly #operatorName: string;
  readonly #plainOperatorName: string;
  /**
   * The key group of the record of the last {@link select} call, which the record writer sends
   * along with the record so the keyed consumer does not hash the key again.
   */
  lastKeyGroup = -1;
  constructor(
    keySelector: KeySelector<any, any>,
    consumerParallelism: number,
    maxParallelism: number,
    operatorName: string,
  ) {
    this.#keySelector = keySelector;
    this.#maxParallelism = maxParallelism;
    this.#groupMask = (maxParallelism & (maxParallelism - 1)) === 0 ? maxParallelism - 1 : -1;
    this.#consumerOf = new Uint16Array(maxParallelism);
    for (let g = 0; g < maxParallelism; g++)
      this.#consumerOf[g] = operatorIndexForKeyGroup(maxParallelism, consumerParallelism, g);
    this.#operatorName = operatorName;
    // `operatorName` comes quoted for the key errors' messages; the thenable error quotes itself.
    this.#plainOperatorName = /^"(.*)"$/.exec(operatorName)?.[1] ?? operatorName;
  }
  select(record: unknown): number {
    const key = this.#keySelector(record);
    // A string key (the common one) is hashed inline: it cannot be a thenable, and hashKey's
    // type switch and the thenable check cost more than the hash itself (bench/pipeline/record-path.ts).
    const keyGroup =
      typeof key === 'string'
        ? this.#groupMask >= 0
          ? hashString(key) & this.#groupMask
          : hashString(key) % this.#maxParallelism
        : assignToKeyGroup(
            synchronousResult(key, this.#plainOperatorName, 'key selector'),
            this.#maxParallelism,
            this.#operatorName,
          );
    this.lastKeyGroup = keyGroup;
    return this.#consumerOf[keyGroup];
  }
}

/** `broadcast`: every record to every consumer. */
export class BroadcastPartitioner implements Partitioner {
  readonly partitioning = 'broadcast' as const;
  select(_record: unknown): number {
    return ALL_CONSUMERS;
  }
}

/**
 * The partitioner for producer subtask `producerSubtask` of `edge`. `operatorName` names the
 * consuming operator in key errors (default: `the consumer of edge <id>`); {@link createPartitionerFor} fills it
 * from the plan.
 *
 * @throws RangeError for out-of-range arguments, InvalidGraphError for a hash edge without key
 *   selector or a forward edge whose producer has no matching consumer.
 */
export function createPartitioner(
  edge: JobEdge,
  producerSubtask: number,
  consumerParallelism: number,
  maxParallelism: number,
  operatorName = `the consumer of edge ${edge.edgeId}`,
): Partitioner {
  if (!Number.isInteger(consumerParallelism) || consumerParallelism < 1) {
    throw new RangeError(`consumer parallelism must be an integer >= 1, got ${consumerParallelism}`);
  }
  if (!Number.isInteger(producerSubtask) || producerSubtask < 0) {
    throw new RangeError(`producer subtask must be an integer >= 0, got ${producerSubtask}`);
  }
  switch (edge.partitioning) {
    case 'forward':
      if (producerSubtask >= consumerParallelism) {
        throw new InvalidGraphError(
          `forward edge ${edge.edgeId}: producer subtask ${producerSubtask} has no consumer (parallelism ${consumerParallelism})`,
        );
      }
      return new ForwardPartitioner(producerSubtask);
    case 'rebalance':
      return new RebalancePartitioner(producerSubtask, consumerParallelism);
    case 'hash':
      if (
        !Number.isInteger(maxParallelism) ||
        maxParallelism < 1 ||
        maxParallelism > UPPER_BOUND_MAX_PARALLELISM
      ) {
        throw new RangeError(
          `maxParallelism must be an integer in [1, ${UPPER_BOUND_MAX_PARALLELISM}], got ${maxParallelism}`,
        );
      }
      if (typeof edge.keySelector !== 'function') {
        throw new InvalidGraphError(`hash edge ${edge.edgeId} (into ${operatorName}) has no key selector`);
      }
      return new HashPartitioner(edge.keySelector, consumerParallelism, maxParallelism, operatorName);
    case 'broadcast':
      return new BroadcastPartitioner();
    default:
      return assertNever(edge.partitioning);
  }
}

/** {@link createPartitioner} with everything taken from the plan. */
export function createPartitionerFor(
  plan: ExecutionPlan,
  edgeId: number,
  producerSubtask: number,
): Partitioner {
  const edge = plan.edges[edgeId];
  if (edge === undefined) throw new RangeError(`plan has no edge ${edgeId}`);
  const target = plan.vertices[edge.targetVertexId];
  const producer = plan.vertices[edge.sourceVertexId];
  if (producerSubtask >= producer.parallelism) {
    throw new RangeError(
      `producer subtask ${producerSubtask} out of range for "${producer.name}" (parallelism ${producer.parallelism})`,
    );
  }
  const head = target.operators.find((op) => op.nodeId === edge.targetNodeId);
  return createPartitioner(
    edge,
    producerSubtask,
    target.parallelism,
    target.maxParallelism,
    head === undefined ? `vertex "${target.name}"` : `"${head.name}"`,
  );
}

function assertNever(x: never): never {
  throw new Error(`unexpected partitioning ${String(x)}`);
}
