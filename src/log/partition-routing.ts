/**
 * Which partition each appended record goes to. Pure: the same key gives the same partition in
 * every thread, process and run (the hash is key-groups' {@link hashKey} over the key's
 * canonical value, so `1` and `1.0` agree and object key order does not matter).
 */

import { KeyNotSerializableError } from '../errors.js';
import { hashKey } from '../state/key-groups.js';

/** How an append chooses partitions. */
export type PartitionRouting =
  /** Every record to this partition. */
  | { readonly kind: 'partition'; readonly partition: number }
  /** Every record to the partition of this key. */
  | { readonly kind: 'key'; readonly key: unknown }
  /** Each record to the partition of the key the function returns for it. */
  | { readonly kind: 'key-function'; readonly keyOf: (record: unknown) => unknown }
  /** Record `i` of a batch to partition `(cursor + i) mod partitions`; the cursor lives in the topic. */
  | { readonly kind: 'round-robin' };

/** The partition of `key` among `partitions`. Throws KeyNotSerializableError for keys without a canonical value. */
export function partitionForKey(key: unknown, partitions: number): number {
  return hashKey(key, 'log append key') % partitions;
}

/**
 * Partitions of `records` for every routing except round-robin (which needs the topic's cursor,
 * read inside the write transaction): computed before the transaction so that a bad key
 * rejects the batch before anything is written.
 * @returns per record its partition, or `null` for round-robin.
 * @throws KeyNotSerializableError (with the record index in `recordIndex`) or what `keyOf` throws.
 */
export function routeRecords(
  records: readonly unknown[],
  partitions: number,
  routing: PartitionRouting,
): number[] | null {
  switch (routing.kind) {
    case 'partition':
      return records.map(() => routing.partition);
    case 'key': {
      const p = partitionForKey(routing.key, partitions);
      return records.map(() => p);
    }
    case 'key-function':
      return records.map((r, i) => {
        try {
          return partitionForKey(routing.keyOf(r), partitions);
        } catch (error) {
          throw new RoutingError(i, error);
        }
      });
    case 'round-robin':
      return null;
    default: {
      const never: never = routing;
      throw new RangeError(`unknown routing ${String((never as { kind: unknown }).kind)}`);
    }
  }
}

/** Round-robin partitions for a batch of `count` records starting at `cursor`. */
export function roundRobinPartitions(count: number, partitions: number, cursor: number): number[] {
  const out: number[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = (cursor + i) % partitions;
  return out;
}

/** A key function threw or returned an unhashable key for record `recordIndex`. Internal: the topic rewraps it. */
export class RoutingError extends Error {
  constructor(
    readonly recordIndex: number,
    override readonly cause: unknown,
  ) {
    super(
      cause instanceof KeyNotSerializableError
        ? `its key cannot be hashed (${cause.keyDescription})`
        : `its key function threw: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
  }
}
