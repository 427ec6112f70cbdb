/**
 * The on-disk layout of an embedded log directory (`openLog(dir)`): one LMDB environment
 * (`data.mdb` + `lock.mdb` directly in `dir`) holding eight named sub-databases. Keys are
 * lmdb-js ordered-binary arrays, so numbers sort numerically and a partition's records are one
 * contiguous key range.
 *
 * | sub-database | key                               | value                                               |
 * |--------------|-----------------------------------|-----------------------------------------------------|
 * | `log-info`   | `'format'`, `'nextTopicId'`       | numbers                                             |
 * | `topics`     | topic name                        | {@link TopicMeta}                                   |
 * | `partitions` | `[topicId, partition]`            | {@link PartitionMeta}: `start`, `end`, `bytes`       |
 * | `records`    | `[topicId, partition, baseOffset]`| binary: a record batch, or (format 1) one record (`record-batch.ts`) |
 * | `txWriters`  | `[topicId, writer]`               | {@link WriterMeta}: marker sequence window           |
 * | `txMarkers`  | `[topicId, writer, transactionId]`| the marker's sequence number                        |
 * | `txOrder`    | `[topicId, writer, sequence]`     | the transaction id (to prune markers oldest first)  |
 * | `relay`      | `['a', follower]`, `['f', generation, epoch]` | cross-thread committer bookkeeping (`thread-relay.ts`) |
 *
 * Invariants (every write is one LMDB transaction, atomic and serialised across all threads and
 * processes that have the directory open):
 * - For each partition, the entries of `records` hold every offset of `[start, end)` exactly once,
 *   dense, no holes, each entry keyed by its first offset; the first entry may also hold offsets
 *   below `start` (retention deleted the head of a batch it keeps; reads skip them), no entry
 *   holds only offsets below `start`. `end` only grows (an offset is never reused, even after
 *   retention empties a partition); `start` only grows (retention deletes a prefix).
 * - `bytes` is the sum of the logical sizes (8 + msgpack payload bytes) of the records in
 *   `[start, end)`, the stored value size of a format-1 record.
 * - A transaction marker exists iff the records of that transaction were appended, in the same
 *   LMDB transaction. Per (topic, writer) the markers with sequence `[first, next)` exist.
 * - `topics`, `partitions` and `txWriters` entries are versioned (lmdb-js `useVersions`); every
 *   write of one increments its version, so a conditional write planned from a read can tell
 *   whether the entry changed since.
 */

import type { RootDatabaseOptionsWithPath } from 'lmdb';
import type { Durability } from './log-options.js';

/**
 * Bumped on any incompatible change of the layout above. 2: `records` entries are record batches
 * (1: one record per entry). `openLog` reads both, marks a format-1 directory as format 2 when it
 * opens it (a weir of format 1 then refuses it instead of misreading batches), and refuses others.
 */
export const LOG_FORMAT_VERSION = 2;
/** Formats `openLog` opens (and upgrades to {@link LOG_FORMAT_VERSION}). */
export const READABLE_LOG_FORMATS: readonly number[] = [1, 2];

/** Not `info`: a checkpoint directory has an `info` database with a `format` key too. */
export const DB_INFO = 'log-info';
export const DB_TOPICS = 'topics';
export const DB_PARTITIONS = 'partitions';
export const DB_RECORDS = 'records';
export const DB_TX_WRITERS = 'txWriters';
export const DB_TX_MARKERS = 'txMarkers';
export const DB_TX_ORDER = 'txOrder';
/** Cross-thread group commit: followers' acknowledgements and fenced committer epochs. */
export const DB_RELAY = 'relay';

export const INFO_FORMAT = 'format';
export const INFO_NEXT_TOPIC_ID = 'nextTopicId';

/** Name of LMDB's data file inside the directory. */
export const DATA_FILE = 'data.mdb';

/** Bytes of the header of an encoded record (and of a format-1 `records` value: the append time). */
export const RECORD_HEADER_BYTES = 8;

/** Topic names and writer names are LMDB key parts: kept well below LMDB's 1978-byte key limit. */
export const MAX_NAME_LENGTH = 200;
/** Transaction ids are key parts too. */
export const MAX_TRANSACTION_ID_LENGTH = 400;

/** Default for {@link TopicMeta.transactionMarkers}. */
export const DEFAULT_TRANSACTION_MARKERS = 1000;

export interface RetentionPolicy {
  /** Per partition: stored bytes (8-byte header + msgpack payload per record) kept at most. */
  readonly maxBytes?: number;
  /** Records appended longer ago than this are deleted. */
  readonly maxAgeMs?: number;
}

export interface TopicMeta {
  readonly id: number;
  readonly partitions: number;
  readonly retention: RetentionPolicy;
  /** Markers kept per (topic, writer); older ones are pruned. */
  readonly transactionMarkers: number;
  readonly createdAt: number;
  /** Next round-robin partition for appends without key or partition. */
  readonly roundRobin: number;
}

export interface PartitionMeta {
  /** First retained offset. */
  readonly start: number;
  /** Next offset to assign. */
  readonly end: number;
  /** Stored bytes of the records in `[start, end)`. */
  readonly bytes: number;
}

export interface WriterMeta {
  /** Sequence number of the oldest marker still kept. */
  readonly first: number;
  /** Sequence number the next marker gets. */
  readonly next: number;
}

/** Address space reserved for the memory map (sparse: costs nothing until written). */
export const LOG_MAP_BYTES = 2 ** 36;

/**
 * Environment options. Every handle in every thread must open the environment with the same
 * options: lmdb-js shares one native environment per path within a process and refuses
 * mismatched flags.
 *
 * `overlappingSync: false`: a synchronous transaction returns, and an asynchronous write
 * resolves, only after its commit is fsynced, so "append returned" means "durable". With
 * `durability: 'os'` the environment is opened `noSync`: a commit is written to the OS page cache
 * (it survives the process, not a power cut) and never fsynced by this handle. `cache: false`: other
 * threads and processes write the same databases, so a per-handle value cache would go stale.
 */
export function logEnvironmentOptions(dir: string, durability: Durability): RootDatabaseOptionsWithPath {
  // `txnStartThreshold` is a documented lmdb-js option (see `eventTurnBatching` in its typings)
  // missing from the option type.
  const options: RootDatabaseOptionsWithPath & { txnStartThreshold: number } = {
    path: dir,
    maxDbs: 8,
    mapSize: LOG_MAP_BYTES,
    overlappingSync: false,
    noSync: durability === 'os',
    compression: false,
    cache: false,
    // lmdb-js's write thread must never start on a conditional block the JavaScript thread is
    // still writing: a worker terminated mid-block would leave it waiting, holding the write lock,
    // forever (and the terminated worker waiting for it). Without event-turn batching and with
    // an unreachable start threshold, it starts only from a later event turn, when every block
    // issued so far is complete; appends of one handle are queued, so blocks never overlap a run.
    eventTurnBatching: false,
    txnStartThreshold: Number.MAX_SAFE_INTEGER,
  };
  return options;
}
