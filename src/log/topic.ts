/**
 * A topic of the embedded log: a fixed number of partitions, each an append-only sequence of
 * msgpack records with dense offsets from 0.
 *
 * Appends. The records of one append are encoded and routed to partitions before anything is
 * written (a record that cannot be encoded, or a key that cannot be hashed, rejects the whole
 * batch). Then a write plan is computed from the current partition metadata (next offsets,
 * retention, transaction markers) and applied in one LMDB write transaction, in one of two ways:
 * - `appendSync`/`appendTransactionSync`: plan and apply inside a synchronous transaction.
 * - `append`/`appendTransaction`/`enforceRetention` (asynchronous): plan from a read snapshot,
 *   then apply as lmdb-js conditional writes — every write of the plan happens only if the
 *   metadata it was planned from is unchanged (entry versions) and the transaction marker does
 *   not exist yet; otherwise nothing is written and the plan is recomputed (optimistic
 *   concurrency). No JavaScript runs while the write lock is held, which matters in worker
 *   threads: lmdb-js cannot release the lock of a thread terminated (`worker.terminate()`)
 *   inside a synchronous transaction, and every later writer in the process then hangs. Use
 *   the asynchronous methods in threads that may be terminated.
 * Write transactions are serialised across every thread and process with the directory open,
 * so concurrent appenders never get the same offset and never lose a record; one appender's
 * records to a partition keep their order.
 *
 * Cost: one LMDB transaction (one fsync) per append, whatever the batch size (plus one per retry
 * under contention); batch for throughput. Reads are synchronous memory-mapped range scans,
 * O(records returned).
 *
 * One file of ~680 lines on purpose: both write paths run the same planners, and the planners
 * together keep the layout invariants of `log-layout.ts` (dense offsets, byte counts, marker
 * windows, entry versions); splitting them would spread one invariant over several files.
 */

import type { Database } from 'lmdb';
import { InvalidOptionError, LogRecordEncodingError, LogStorageError } from '../errors.js';
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

/** Reads a plan depends on: the entry must still have this version (`null`: must not exist). */
interface PlanCondition {
  readonly db: Database<any, any>;
  readonly key: Key | string;
  readonly version: number | null;
}

type PlanOp =
  | {
      readonly kind: 'put';
      readonly db: Database<any, any>;
      readonly key: Key | string;
      readonly value: unknown;
      readonly version?: number;
    }
  | { readonly kind: 'remove'; readonly db: Database<any, any>; readonly key: Key };

/** The writes of one append (or retention run), computed from reads of the metadata. */
interface WritePlan<R> {
  readonly result: R;
  readonly conditions: PlanCondition[];
  readonly ops: PlanOp[];
}

/** Optimistic retries before an asynchronous append gives up (only under extreme contention). */
const MAX_ATTEMPTS = 1000;

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
    return this.#metaEntry().value.retention;
  }

  /**
   * Appends `records` in one durable transaction; resolves with their offsets once it is durable.
   * Rejects with InvalidOptionError for bad arguments, LogRecordEncodingError for a record (or
   * key) that cannot be encoded — both before anything is written; LogClosedError;
   * LogStorageError.
   */
  append(records: readonly T[], options?: AppendOptions<T>): Promise<AppendResult> {
    return rejecting(() => {
      const prepared = this.#prepare(records, options, 'append');
      if (prepared.values.length === 0) return Promise.resolve(emptyResult());
      return this.#applyOptimistic(() => this.#planAppend(prepared, null)) as Promise<AppendResult>;
    });
  }

  /**
   * {@link append}, synchronously: blocks the thread for the transaction and its fsync. Holds the
   * write lock while it runs JavaScript: do not use it in a worker thread that may be terminated
   * (see the file header).
   */
  appendSync(records: readonly T[], options?: AppendOptions<T>): AppendResult {
    const prepared = this.#prepare(records, options, 'appendSync');
    if (prepared.values.length === 0) return emptyResult();
    return this.#applySync(() => this.#planAppend(prepared, null)) as AppendResult;
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
      return this.#applyOptimistic(() => this.#planAppend(prepared, tx));
    });
  }

  /** {@link appendTransaction}, synchronously (with {@link appendSync}'s caveat). */
  appendTransactionSync(
    records: readonly T[],
    options: TransactionalAppendOptions<T>,
  ): TransactionalAppendResult {
    const prepared = this.#prepare(records, options, 'appendTransactionSync');
    const tx = this.#prepareTransaction(options, 'appendTransactionSync');
    return this.#applySync(() => this.#planAppend(prepared, tx));
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
    return this.#partitionEntry(partition).value.end;
  }

  /** The first offset of `partition` still retained (`=== endOffset` when it holds nothing). */
  startOffset(partition: number): number {
    this.#checkPartition(partition, 'startOffset(partition)');
    this.#core.freshSnapshot();
    return this.#partitionEntry(partition).value.start;
  }

  /**
   * Applies retention to every partition now (appends apply it to the partitions they write;
   * this is for topics that stopped receiving appends). Resolves with the number of records
   * deleted. Cost: one transaction, O(partitions + records deleted).
   */
  enforceRetention(): Promise<number> {
    return rejecting(() => this.#applyOptimistic(() => this.#planRetention()));
  }

  /**
   * @internal For `sinks.log`: encodes and routes `records` now (throws as `append` would), to be
   * appended later with {@link appendPreparedTransaction}.
   */
  prepareAppend(records: readonly T[], options?: AppendOptions<T>): PreparedAppend {
    return this.#prepare(records, options, 'prepareAppend');
  }

  /** @internal For `sinks.log`: {@link appendTransaction} of a batch from {@link prepareAppend}. */
  appendPreparedTransaction(
    prepared: PreparedAppend,
    transaction: { readonly transactionId: string; readonly writer: string },
  ): Promise<TransactionalAppendResult> {
    return rejecting(() => {
      const tx = this.#checkPrepared(prepared, transaction, 'appendPreparedTransaction');
      return this.#applyOptimistic(() => this.#planAppend(prepared, tx));
    });
  }

  /** @internal For `sinks.log`: {@link appendTransactionSync} of a batch from {@link prepareAppend}. */
  appendPreparedTransactionSync(
    prepared: PreparedAppend,
    transaction: { readonly transactionId: string; readonly writer: string },
  ): TransactionalAppendResult {
    const tx = this.#checkPrepared(prepared, transaction, 'appendPreparedTransactionSync');
    return this.#applySync(() => this.#planAppend(prepared, tx));
  }

  /** @internal For `sinks.log` (at-least-once): {@link append} of a batch from {@link prepareAppend}. */
  appendPrepared(prepared: PreparedAppend): Promise<AppendResult> {
    return rejecting(() => {
      this.#checkPrepared(prepared, null, 'appendPrepared');
      if (prepared.values.length === 0) return Promise.resolve(emptyResult());
      return this.#applyOptimistic(() => this.#planAppend(prepared, null)) as Promise<AppendResult>;
    });
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

  /** Checks a batch that went through a checkpoint (it may come from another weir version). */
  #checkPrepared(
    prepared: PreparedAppend,
    transaction: { readonly transactionId: string; readonly writer: string } | null,
    method: string,
  ): PreparedTransaction | null {
    this.#core.checkOpen();
    const tx = transaction === null ? null : this.#prepareTransaction(transaction, method);
    if (
      !Array.isArray(prepared?.values) ||
      (prepared.routed !== null && prepared.routed.length !== prepared.values.length)
    ) {
      throw new InvalidOptionError(`${method}(prepared)`, 'is not a prepared batch');
    }
    for (const value of prepared.values) {
      if (!(value instanceof Uint8Array) || value.length < RECORD_HEADER_BYTES) {
        throw new InvalidOptionError(
          `${method}(prepared.values)`,
          'holds a value that is not a stored record',
        );
      }
    }
    if (prepared.routed !== null) {
      for (const p of prepared.routed) this.#checkPartition(p, `${method}(prepared.routed)`);
    }
    return tx;
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

  // ---------------------------------------------------------------- applying plans

  /** Plans and applies inside one synchronous write transaction (the reads see the latest state). */
  #applySync<R>(plan: () => WritePlan<R> | R): R {
    return this.#core.writeSync(() => {
      const planned = plan();
      if (!isPlan(planned)) return planned;
      for (const op of planned.ops) applyOp(op);
      return planned.result;
    });
  }

  /**
   * Queues the write behind this handle's earlier asynchronous writes (so one handle's appends
   * land in call order), then plans from a fresh read snapshot and applies the plan as
   * conditional writes; when another writer changed what the plan read, nothing is written and
   * it plans again.
   */
  #applyOptimistic<R>(plan: () => WritePlan<R> | R): Promise<R> {
    this.#core.checkOpen();
    return this.#core.enqueue(async () => {
      for (let attempt = 1; ; attempt++) {
        this.#core.renewSnapshot();
        const planned = plan();
        if (!isPlan(planned)) return planned;
        if (planned.ops.length === 0) return planned.result;
        if (await applyConditionally(planned)) return planned.result;
        if (attempt >= MAX_ATTEMPTS) {
          throw new LogStorageError(
            `append to topic "${this.name}" gave up after ${attempt} attempts: other writers kept changing it`,
          );
        }
      }
    });
  }

  // ---------------------------------------------------------------- plans (reads only)

  /** The writes of one append; a `duplicate` result when the transaction was already applied. */
  #planAppend(
    prepared: PreparedAppend,
    tx: PreparedTransaction | null,
  ): WritePlan<TransactionalAppendResult> | TransactionalAppendResult {
    const core = this.#core;
    const conditions: PlanCondition[] = [];
    const ops: PlanOp[] = [];
    if (tx !== null) {
      const markerKey: Key = [this.#id, tx.writer, tx.transactionId];
      if (core.txMarkers.doesExist(markerKey)) return { state: 'duplicate', transactionId: tx.transactionId };
      conditions.push({ db: core.txMarkers, key: markerKey, version: null });
    }
    const topic = this.#metaEntry();
    const meta = topic.value;
    const { values } = prepared;
    let routed = prepared.routed;
    if (routed === null) {
      routed = roundRobinPartitions(values.length, this.partitions, meta.roundRobin);
      conditions.push({ db: core.topics, key: this.name, version: topic.version });
      ops.push({
        kind: 'put',
        db: core.topics,
        key: this.name,
        value: { ...meta, roundRobin: (meta.roundRobin + values.length) % this.partitions },
        version: topic.version + 1,
      });
    }
    const now = core.clock();
    const positions: LogPosition[] = new Array(values.length);
    const touched = new Map<number, { entry: VersionedEntry<PartitionMeta>; end: number; bytes: number }>();
    for (let i = 0; i < values.length; i++) {
      const partition = routed[i];
      let state = touched.get(partition);
      if (state === undefined) {
        const entry = this.#partitionEntry(partition);
        state = { entry, end: entry.value.end, bytes: entry.value.bytes };
        touched.set(partition, state);
      }
      const value = asBuffer(values[i]);
      stampAppendTime(value, now);
      ops.push({ kind: 'put', db: core.records, key: [this.#id, partition, state.end], value });
      positions[i] = { partition, offset: state.end };
      state.end++;
      state.bytes += value.length;
    }
    const ranges: OffsetRange[] = [];
    for (const [partition, { entry, end, bytes }] of [...touched].sort((a, b) => a[0] - b[0])) {
      const appended: PartitionMeta = { start: entry.value.start, end, bytes };
      const after = this.#planRetentionOf(partition, appended, meta.retention, now, ops, entry.value.end);
      this.#putPartition(partition, entry, after, conditions, ops);
      ranges.push({ partition, firstOffset: entry.value.end, endOffset: end });
    }
    if (tx !== null) this.#planMarker(tx, meta, conditions, ops);
    return { result: { state: 'appended', positions, ranges }, conditions, ops };
  }

  /** Retention over every partition (`enforceRetention`). */
  #planRetention(): WritePlan<number> | number {
    const meta = this.#metaEntry().value;
    if (!hasRetention(meta.retention)) return 0;
    const now = this.#core.clock();
    const conditions: PlanCondition[] = [];
    const ops: PlanOp[] = [];
    let deleted = 0;
    for (let p = 0; p < this.partitions; p++) {
      const entry = this.#partitionEntry(p);
      const after = this.#planRetentionOf(p, entry.value, meta.retention, now, ops, entry.value.end);
      if (after !== entry.value) {
        this.#putPartition(p, entry, after, conditions, ops);
        deleted += after.start - entry.value.start;
      }
    }
    return { result: deleted, conditions, ops };
  }

  #putPartition(
    partition: number,
    entry: VersionedEntry<PartitionMeta>,
    after: PartitionMeta,
    conditions: PlanCondition[],
    ops: PlanOp[],
  ): void {
    const key: Key = [this.#id, partition];
    conditions.push({ db: this.#core.partitions, key, version: entry.version });
    ops.push({
      kind: 'put',
      db: this.#core.partitions,
      key,
      value: after,
      version: (entry.version ?? 0) + 1,
    });
  }

  /** Records the transaction's marker and prunes the writer's markers beyond the limit. */
  #planMarker(tx: PreparedTransaction, meta: TopicMeta, conditions: PlanCondition[], ops: PlanOp[]): void {
    const core = this.#core;
    const writerKey: Key = [this.#id, tx.writer];
    const entry = core.txWriters.getEntry(writerKey);
    const writer: WriterMeta = entry?.value ?? { first: 0, next: 0 };
    const version = entry === undefined ? null : (entry.version ?? 0);
    conditions.push({ db: core.txWriters, key: writerKey, version });
    ops.push({
      kind: 'put',
      db: core.txMarkers,
      key: [this.#id, tx.writer, tx.transactionId],
      value: writer.next,
    });
    ops.push({
      kind: 'put',
      db: core.txOrder,
      key: [this.#id, tx.writer, writer.next],
      value: tx.transactionId,
    });
    let first = writer.first;
    const next = writer.next + 1;
    const keep = meta.transactionMarkers ?? DEFAULT_TRANSACTION_MARKERS;
    while (next - first > keep) {
      const oldId = core.txOrder.get([this.#id, tx.writer, first]);
      ops.push({ kind: 'remove', db: core.txOrder, key: [this.#id, tx.writer, first] });
      if (oldId !== undefined)
        ops.push({ kind: 'remove', db: core.txMarkers, key: [this.#id, tx.writer, oldId] });
      first++;
    }
    ops.push({
      kind: 'put',
      db: core.txWriters,
      key: writerKey,
      value: { first, next },
      version: (version ?? 0) + 1,
    });
  }

  /**
   * Plans the deletion of the partition's head records that the retention rule (`retention.ts`)
   * says go, and returns the partition's new metadata (the same object when nothing goes).
   * Records at offsets `>= storedEnd` are being appended by this plan: their sizes come from
   * `ops`, not from the database.
   */
  #planRetentionOf(
    partition: number,
    meta: PartitionMeta,
    policy: RetentionPolicy,
    now: number,
    ops: PlanOp[],
    storedEnd: number,
  ): PartitionMeta {
    if (!hasRetention(policy)) return meta;
    const records = this.#core.records;
    let { start, bytes } = meta;
    let pending: Map<number, Buffer> | undefined;
    while (start < meta.end) {
      let head: Uint8Array | undefined;
      if (start < storedEnd) {
        // getBinaryFast: no copy; only the header and the length are read.
        head = records.getBinaryFast([this.#id, partition, start]);
      } else {
        pending ??= new Map(
          ops
            .filter((op) => op.kind === 'put' && op.db === records && (op.key as Key)[1] === partition)
            .map((op) => [(op.key as Key)[2] as number, (op as { value: Buffer }).value]),
        );
        head = pending.get(start);
      }
      if (head === undefined) break; // cannot happen while the layout invariant holds
      const headBytes = head.length;
      const deletes = retentionDeletesHead(
        policy,
        { partitionBytes: bytes, isNewest: start === meta.end - 1, headAppendedAt: appendTimeOf(head) },
        now,
      );
      if (!deletes) break;
      ops.push({ kind: 'remove', db: records, key: [this.#id, partition, start] });
      bytes -= headBytes;
      start++;
    }
    return start === meta.start ? meta : { start, end: meta.end, bytes };
  }

  #metaEntry(): VersionedEntry<TopicMeta> & { version: number } {
    const entry = this.#core.topics.getEntry(this.name);
    if (entry === undefined || entry.value.id !== this.#id) {
      throw new InvalidOptionError('topic', `topic "${this.name}" no longer exists in ${this.#core.dir}`);
    }
    return { value: entry.value, version: entry.version ?? 0 };
  }

  /** The partition's metadata and version (`null`: never written). */
  #partitionEntry(partition: number): VersionedEntry<PartitionMeta> {
    const entry = this.#core.partitions.getEntry([this.#id, partition]);
    return entry === undefined
      ? { value: EMPTY_PARTITION, version: null }
      : { value: entry.value, version: entry.version ?? 0 };
  }
}

interface VersionedEntry<V> {
  readonly value: V;
  readonly version: number | null;
}

function isPlan<R>(planned: WritePlan<R> | R): planned is WritePlan<R> {
  return typeof planned === 'object' && planned !== null && 'ops' in planned && 'conditions' in planned;
}

/** Inside a synchronous write transaction. */
function applyOp(op: PlanOp): void {
  if (op.kind === 'put') {
    if (op.version === undefined) op.db.put(op.key, op.value);
    else op.db.put(op.key, op.value, op.version);
  } else op.db.remove(op.key);
}

/**
 * Issues the plan as nested lmdb-js conditional writes (executed by lmdb-js's native write
 * thread in one transaction, with no JavaScript in between): every op is written only if every
 * condition holds. Resolves with whether it was written.
 */
function applyConditionally(plan: WritePlan<unknown>): Promise<boolean> {
  const outcomes: Promise<boolean>[] = [];
  const writes: Promise<unknown>[] = [];
  const nest = (i: number): void => {
    if (i === plan.conditions.length) {
      for (const op of plan.ops) {
        if (op.kind === 'put') {
          writes.push(
            op.version === undefined ? op.db.put(op.key, op.value) : op.db.put(op.key, op.value, op.version),
          );
        } else writes.push(op.db.remove(op.key));
      }
      return;
    }
    const c = plan.conditions[i];
    outcomes.push(
      c.version === null
        ? c.db.ifNoExists(c.key, () => nest(i + 1))
        : c.db.ifVersion(c.key, c.version, () => nest(i + 1)),
    );
  };
  nest(0);
  // The individual writes settle with the conditions; a write error rejects here.
  return Promise.all([Promise.all(outcomes), Promise.all(writes)]).then(([ok]) => ok.every(Boolean));
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
