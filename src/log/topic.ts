/**
 * A topic of the embedded log: a fixed number of partitions, each an append-only sequence of
 * msgpack records with dense offsets from 0.
 *
 * Appends. The records of one append are encoded and routed to partitions before the write
 * transaction starts (a record that cannot be encoded, or a key that cannot be hashed, rejects
 * the whole batch before anything is written). Inside one LMDB write transaction each partition's
 * next offset is read, the records are written at the following offsets, the offset advances,
 * and retention runs on the partitions written. Write transactions are serialised across every
 * thread and process with the directory open, so concurrent appenders never get the same offset
 * and never lose a record; one appender's records to a partition keep their order.
 *
 * Cost: one LMDB transaction (one fsync) per append, whatever the batch size; batch for
 * throughput. Reads are synchronous memory-mapped range scans, O(records returned).
 */

import { InvalidOptionError, LogRecordEncodingError } from '../errors.js';
import type { LogCore } from './log-core.js';
import {
  DEFAULT_TRANSACTION_MARKERS,
  type PartitionMeta,
  RECORD_HEADER_BYTES,
  type RetentionPolicy,
  type TopicMeta,
  type WriterMeta,
} from './log-layout.js';
import {
  type AppendOptions,
  checkName,
  checkNonNegativeInteger,
  checkOptionsObject,
  checkPositiveInteger,
  checkTransactionId,
  type TransactionalAppendOptions,
} from './log-options.js';
import { appendTimeOf, stampAppendTime } from './log-record-codec.js';
import {
  type PartitionRouting,
  RoutingError,
  roundRobinPartitions,
  routeRecords,
} from './partition-routing.js';
import { hasRetention, retentionDeletesHead } from './retention.js';

/** One record read back. */
export interface LogRecord<T = unknown> {
  readonly offset: number;
  readonly value: T;
}

export interface LogPosition {
  readonly partition: number;
  readonly offset: number;
}

/** Offsets `[firstOffset, endOffset)` one append assigned in one partition. */
export interface OffsetRange {
  readonly partition: number;
  readonly firstOffset: number;
  readonly endOffset: number;
}

export interface AppendResult {
  readonly state: 'appended';
  /** Partition and offset of each record, in input order. */
  readonly positions: readonly LogPosition[];
  /** One range per partition that received records, ascending by partition. */
  readonly ranges: readonly OffsetRange[];
}

export type TransactionalAppendResult =
  | AppendResult
  /** A transaction with this id (and writer) was already appended; nothing was written. */
  | { readonly state: 'duplicate'; readonly transactionId: string };

/**
 * Records encoded and routed, ready for a write transaction. Plain data (survives msgpack), so a
 * transactional sink can keep a sealed batch in its checkpoint and commit it after a restore.
 */
export interface PreparedAppend {
  /** Stored values (header + msgpack), one per record. */
  readonly values: Uint8Array[];
  /** Partition per record, or null for round-robin (decided inside the transaction). */
  readonly routed: number[] | null;
}

interface PreparedTransaction {
  readonly transactionId: string;
  readonly writer: string;
}

type Key = (string | number)[];

const EMPTY_PARTITION: PartitionMeta = { start: 0, end: 0, bytes: 0 };

export class Topic<T = unknown> {
  readonly name: string;
  /** Fixed at creation. */
  readonly partitions: number;
  readonly #id: number;
  readonly #core: LogCore;

  /** @internal Use `log.topic(name, options)`. */
  constructor(core: LogCore, name: string, meta: TopicMeta) {
    this.#core = core;
    this.name = name;
    this.partitions = meta.partitions;
    this.#id = meta.id;
  }

  /** The topic's current retention policy (as stored; another handle may have changed it). */
  get retention(): RetentionPolicy {
    this.#core.freshSnapshot();
    return this.#meta().retention;
  }

  /**
   * Appends `records` in one durable transaction; resolves with their offsets once it is durable.
   * Rejects with InvalidOptionError for bad arguments, LogRecordEncodingError for a record (or key)
   *   that cannot be encoded — both before anything is written; LogClosedError; LogStorageError.
   */
  append(records: readonly T[], options?: AppendOptions<T>): Promise<AppendResult> {
    return rejecting(() => {
      const prepared = this.#prepare(records, options, 'append');
      if (prepared.values.length === 0) return Promise.resolve(emptyResult());
      return this.#core.write(() => this.#appendInTransaction(prepared, null) as AppendResult);
    });
  }

  /** {@link append}, synchronously: blocks the thread for the transaction and its fsync. */
  appendSync(records: readonly T[], options?: AppendOptions<T>): AppendResult {
    const prepared = this.#prepare(records, options, 'appendSync');
    if (prepared.values.length === 0) return emptyResult();
    return this.#core.writeSync(() => this.#appendInTransaction(prepared, null) as AppendResult);
  }

  /**
   * Appends `records` as transaction `transactionId` of `writer`, idempotently: the marker that
   * the transaction was applied is written in the same LMDB transaction as the records, so a
   * repeated call (from any thread, process or restart) appends nothing and returns
   * `duplicate` — as long as the marker is kept (the newest `transactionMarkers` per writer).
   * An empty transaction writes only its marker.
   */
  appendTransaction(
    records: readonly T[],
    options: TransactionalAppendOptions<T>,
  ): Promise<TransactionalAppendResult> {
    return rejecting(() => {
      const prepared = this.#prepare(records, options, 'appendTransaction');
      const tx = this.#prepareTransaction(options, 'appendTransaction');
      return this.#core.write(() => this.#appendInTransaction(prepared, tx));
    });
  }

  /** {@link appendTransaction}, synchronously. */
  appendTransactionSync(
    records: readonly T[],
    options: TransactionalAppendOptions<T>,
  ): TransactionalAppendResult {
    const prepared = this.#prepare(records, options, 'appendTransactionSync');
    const tx = this.#prepareTransaction(options, 'appendTransactionSync');
    return this.#core.writeSync(() => this.#appendInTransaction(prepared, tx));
  }

  /**
   * Up to `max` records of `partition` from `fromOffset` on, in offset order. Offsets below
   * `startOffset` were deleted by retention: the result then starts at the first retained one
   * (its `offset` shows the gap). Sees every append committed before the call.
   */
  read(partition: number, fromOffset: number, max: number): LogRecord<T>[] {
    this.#checkPartition(partition, 'read(partition)');
    checkNonNegativeInteger(fromOffset, 'read(fromOffset)');
    checkPositiveInteger(max, 'read(max)');
    this.#core.freshSnapshot();
    const out: LogRecord<T>[] = [];
    const codec = this.#core.codec;
    for (const { key, value } of this.#core.records.getRange({
      start: [this.#id, partition, fromOffset],
      end: [this.#id, partition + 1],
      limit: max,
    })) {
      out.push({ offset: key[2] as number, value: codec.decode(value) as T });
    }
    return out;
  }

  /** The next offset `partition` will assign (= number of records ever appended to it). */
  endOffset(partition: number): number {
    this.#checkPartition(partition, 'endOffset(partition)');
    this.#core.freshSnapshot();
    return this.#partitionMeta(partition).end;
  }

  /** The first offset of `partition` still retained (`=== endOffset` when it holds nothing). */
  startOffset(partition: number): number {
    this.#checkPartition(partition, 'startOffset(partition)');
    this.#core.freshSnapshot();
    return this.#partitionMeta(partition).start;
  }

  /**
   * Applies retention to every partition now (appends apply it to the partitions they write;
   * this is for topics that stopped receiving appends). Resolves with the number of records
   * deleted. Cost: one transaction, O(partitions + records deleted).
   */
  enforceRetention(): Promise<number> {
    return rejecting(() =>
      this.#core.write(() => {
        const meta = this.#meta();
        if (!hasRetention(meta.retention)) return 0;
        const now = this.#core.clock();
        let deleted = 0;
        for (let p = 0; p < this.partitions; p++) {
          const before = this.#partitionMeta(p);
          const after = this.#applyRetention(p, before, meta.retention, now);
          if (after !== before) {
            this.#core.partitions.put([this.#id, p], after);
            deleted += after.start - before.start;
          }
        }
        return deleted;
      }),
    );
  }

  /**
   * @internal For `sinks.log`: encodes and routes `records` now (throws as `append` would), to be
   * appended later with {@link appendPreparedTransactionSync}.
   */
  prepareAppend(records: readonly T[], options?: AppendOptions<T>): PreparedAppend {
    return this.#prepare(records, options, 'prepareAppend');
  }

  /** @internal For `sinks.log`: {@link appendTransactionSync} of a batch from {@link prepareAppend}. */
  appendPreparedTransactionSync(
    prepared: PreparedAppend,
    transaction: { readonly transactionId: string; readonly writer: string },
  ): TransactionalAppendResult {
    this.#core.checkOpen();
    const tx = this.#prepareTransaction(transaction, 'appendPreparedTransactionSync');
    if (
      !Array.isArray(prepared?.values) ||
      (prepared.routed !== null && prepared.routed.length !== prepared.values.length)
    ) {
      throw new InvalidOptionError('appendPreparedTransactionSync(prepared)', 'is not a prepared batch');
    }
    for (const value of prepared.values) {
      if (!(value instanceof Uint8Array) || value.length < RECORD_HEADER_BYTES) {
        throw new InvalidOptionError(
          'appendPreparedTransactionSync(prepared.values)',
          'holds a value that is not a stored record',
        );
      }
    }
    if (prepared.routed !== null) {
      for (const p of prepared.routed)
        this.#checkPartition(p, 'appendPreparedTransactionSync(prepared.routed)');
    }
    return this.#core.writeSync(() => this.#appendInTransaction(prepared, tx));
  }

  // ---------------------------------------------------------------- preparation (no I/O)

  #prepare(records: readonly T[], options: AppendOptions<T> | undefined, method: string): PreparedAppend {
    this.#core.checkOpen();
    if (!Array.isArray(records)) {
      throw new InvalidOptionError(`${method}(records)`, 'must be an array of records');
    }
    const o = checkOptionsObject(options, `${method}(options)`);
    let routing: PartitionRouting;
    if (o.key !== undefined && o.partition !== undefined) {
      throw new InvalidOptionError(`${method}(options)`, 'give either key or partition, not both');
    } else if (o.partition !== undefined) {
      routing = {
        kind: 'partition',
        partition: this.#checkPartition(o.partition, `${method}(options.partition)`),
      };
    } else if (typeof o.key === 'function') {
      routing = { kind: 'key-function', keyOf: o.key as (record: unknown) => unknown };
    } else if (o.key !== undefined) {
      routing = { kind: 'key', key: o.key };
    } else {
      routing = { kind: 'round-robin' };
    }
    let routed: number[] | null;
    try {
      routed = routeRecords(records, this.partitions, routing);
    } catch (error) {
      if (error instanceof RoutingError) {
        throw new LogRecordEncodingError(this.name, error.recordIndex, error.message, { cause: error.cause });
      }
      // A constant key that cannot be hashed concerns every record; name the first.
      throw new LogRecordEncodingError(this.name, 0, 'the key cannot be hashed', { cause: error });
    }
    const values = this.#core.codec.encodeAll(this.name, records);
    return { values, routed };
  }

  #prepareTransaction(
    options: { readonly transactionId: string; readonly writer?: string },
    method: string,
  ): PreparedTransaction {
    const o = checkOptionsObject(options, `${method}(options)`);
    return {
      transactionId: checkTransactionId(o.transactionId, `${method}(options.transactionId)`),
      writer: o.writer === undefined ? 'default' : checkName(o.writer, `${method}(options.writer)`),
    };
  }

  #checkPartition(partition: unknown, option: string): number {
    if (
      typeof partition !== 'number' ||
      !Number.isInteger(partition) ||
      partition < 0 ||
      partition >= this.partitions
    ) {
      throw new InvalidOptionError(
        option,
        `must be an integer in [0, ${this.partitions}) for topic "${this.name}", got ${String(partition)}`,
      );
    }
    return partition;
  }

  // ---------------------------------------------------------------- inside a write transaction

  /** The body of every append's write transaction (see the file header for the invariants). */
  #appendInTransaction(prepared: PreparedAppend, tx: PreparedTransaction | null): TransactionalAppendResult {
    const core = this.#core;
    if (tx !== null && core.txMarkers.doesExist([this.#id, tx.writer, tx.transactionId])) {
      return { state: 'duplicate', transactionId: tx.transactionId };
    }
    let meta = this.#meta();
    const { values } = prepared;
    let routed = prepared.routed;
    if (routed === null) {
      routed = roundRobinPartitions(values.length, this.partitions, meta.roundRobin);
      meta = { ...meta, roundRobin: (meta.roundRobin + values.length) % this.partitions };
      core.topics.put(this.name, meta);
    }
    const now = core.clock();
    const positions: LogPosition[] = new Array(values.length);
    const touched = new Map<number, { before: PartitionMeta; end: number; bytes: number }>();
    for (let i = 0; i < values.length; i++) {
      const partition = routed[i];
      let state = touched.get(partition);
      if (state === undefined) {
        const before = this.#partitionMeta(partition);
        state = { before, end: before.end, bytes: before.bytes };
        touched.set(partition, state);
      }
      const value = asBuffer(values[i]);
      stampAppendTime(value, now);
      core.records.put([this.#id, partition, state.end], value);
      positions[i] = { partition, offset: state.end };
      state.end++;
      state.bytes += value.length;
    }
    const ranges: OffsetRange[] = [];
    for (const [partition, { before, end, bytes }] of [...touched].sort((a, b) => a[0] - b[0])) {
      const appended: PartitionMeta = { start: before.start, end, bytes };
      core.partitions.put(
        [this.#id, partition],
        this.#applyRetention(partition, appended, meta.retention, now),
      );
      ranges.push({ partition, firstOffset: before.end, endOffset: end });
    }
    if (tx !== null) this.#writeMarker(tx, meta);
    return { state: 'appended', positions, ranges };
  }

  /** Records the transaction's marker and prunes the writer's markers beyond the limit. */
  #writeMarker(tx: PreparedTransaction, meta: TopicMeta): void {
    const core = this.#core;
    const writerKey: Key = [this.#id, tx.writer];
    const writer: WriterMeta = core.txWriters.get(writerKey) ?? { first: 0, next: 0 };
    core.txMarkers.put([this.#id, tx.writer, tx.transactionId], writer.next);
    core.txOrder.put([this.#id, tx.writer, writer.next], tx.transactionId);
    let first = writer.first;
    const next = writer.next + 1;
    const keep = meta.transactionMarkers ?? DEFAULT_TRANSACTION_MARKERS;
    while (next - first > keep) {
      const oldId = core.txOrder.get([this.#id, tx.writer, first]);
      core.txOrder.remove([this.#id, tx.writer, first]);
      if (oldId !== undefined) core.txMarkers.remove([this.#id, tx.writer, oldId]);
      first++;
    }
    core.txWriters.put(writerKey, { first, next });
  }

  /**
   * Deletes the partition's head records that the retention rule (`retention.ts`) says go, and
   * returns the partition's new metadata (the same object when nothing was deleted).
   */
  #applyRetention(
    partition: number,
    meta: PartitionMeta,
    policy: RetentionPolicy,
    now: number,
  ): PartitionMeta {
    if (!hasRetention(policy)) return meta;
    const records = this.#core.records;
    let { start, bytes } = meta;
    while (start < meta.end) {
      const key = [this.#id, partition, start];
      // getBinaryFast: no copy; only the header and the length are read before the removal.
      const head = records.getBinaryFast(key);
      if (head === undefined) break; // cannot happen while the layout invariant holds
      const headBytes = head.length;
      const deletes = retentionDeletesHead(
        policy,
        { partitionBytes: bytes, isNewest: start === meta.end - 1, headAppendedAt: appendTimeOf(head) },
        now,
      );
      if (!deletes) break;
      records.remove(key);
      bytes -= headBytes;
      start++;
    }
    return start === meta.start ? meta : { start, end: meta.end, bytes };
  }

  #meta(): TopicMeta {
    const meta = this.#core.topics.get(this.name);
    if (meta === undefined || meta.id !== this.#id) {
      throw new InvalidOptionError('topic', `topic "${this.name}" no longer exists in ${this.#core.dir}`);
    }
    return meta;
  }

  #partitionMeta(partition: number): PartitionMeta {
    return this.#core.partitions.get([this.#id, partition]) ?? EMPTY_PARTITION;
  }
}

/** A Buffer view of `bytes` (no copy); restored checkpoint state may hold plain Uint8Arrays. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Promise-returning methods report bad input and a closed log as rejections, never as throws. */
function rejecting<R>(start: () => Promise<R>): Promise<R> {
  try {
    return start();
  } catch (error) {
    return Promise.reject(error);
  }
}

function emptyResult(): AppendResult {
  return { state: 'appended', positions: [], ranges: [] };
}
