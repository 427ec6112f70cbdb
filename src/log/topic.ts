/**
 * A topic of the embedded log: a fixed number of partitions, each an append-only sequence of
 * msgpack records with dense offsets from 0.
 *
 * Appends. The records of one append are encoded and routed to partitions before anything is
 * written (a record that cannot be encoded, or a key that cannot be hashed, rejects that call
 * only). Then the append is planned on a {@link PlanView} (next offsets, retention, transaction
 * marker) and applied in one LMDB write transaction, in one of two ways:
 * - `appendSync`/`appendTransactionSync`: plan and apply inside a synchronous transaction.
 * - `append`/`appendTransaction`/`enforceRetention` (asynchronous): queued on the handle's group
 *   commit (`group-commit.ts`): every operation queued while the previous group was written is
 *   planned together, in call order, from a fresh read snapshot, and applied as lmdb-js
 *   conditional writes — the group is written only if the metadata it was planned from is
 *   unchanged (entry versions) and its transaction markers do not exist yet; otherwise nothing
 *   is written and the group is planned again (optimistic concurrency across handles). No
 *   JavaScript runs while the write lock is held, which matters in worker threads: lmdb-js cannot
 *   release the lock of a thread terminated (`worker.terminate()`) inside a synchronous
 *   transaction, and every later writer in the process then hangs. Use the asynchronous methods
 *   in threads that may be terminated.
 * Write transactions are serialised across every thread and process with the directory open,
 * so concurrent appenders never get the same offset and never lose a record; one handle's
 * appends land in call order.
 *
 * Storage: the records an append puts into one partition are one record batch, one LMDB value
 * keyed by the first one's offset (`record-batch.ts`); directories of the format-1 layout (one value
 * per record) are read as they are.
 *
 * Cost: asynchronous appends share one LMDB transaction (one fsync with `durability: 'fsync'`)
 * per group — under load, everything appended on the handle while the previous group committed
 * (plus one more per conflict with another handle); a synchronous append is one transaction.
 * Either way, one LMDB put per (append, partition), whatever the number of records. Reads are
 * synchronous memory-mapped range scans: one reverse cursor step to the batch holding the first
 * offset asked for, then O(records returned).
 *
 * One file of ~640 lines on purpose: both write paths run the same planners, and the planners
 * together keep the layout invariants of `log-layout.ts` (dense offsets, byte counts, marker
 * windows, entry versions); splitting them would spread one invariant over several files.
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
  describe,
  type TailOptions,
  type TransactionalAppendOptions,
} from './log-options.js';
import {
  type PartitionRouting,
  RoutingError,
  roundRobinPartitions,
  routeRecords,
} from './partition-routing.js';
import { applyOpSync, type Key, PlanView, type VersionedEntry } from './plan-view.js';
import { encodeRecordBatch, StoredEntry, singleRecordEntry } from './record-batch.js';
import type { PreparedAppend, WireOp } from './relay-wire.js';

export type { PreparedAppend } from './relay-wire.js';

import { hasRetention, retentionDeletesHead } from './retention.js';
import { TopicTail } from './topic-tail.js';

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

interface PreparedTransaction {
  readonly transactionId: string;
  readonly writer: string;
}

const EMPTY_PARTITION: PartitionMeta = { start: 0, end: 0, bytes: 0 };

/**
 * Bounds of one stored record batch (an append's records in one partition are split into entries
 * of at most this many records and bytes; one record larger than the byte bound is its own entry).
 */
export const MAX_BATCH_RECORDS = 512;
export const MAX_BATCH_BYTES = 128 * 1024;

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
      return this.#submit(
        prepared.values.length,
        (view) => this.#planAppend(view, prepared, null),
        this.#wireAppend(prepared, null),
      ) as Promise<AppendResult>;
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
    return this.#applySync((view) => this.#planAppend(view, prepared, null)) as AppendResult;
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
      return this.#submit(
        prepared.values.length,
        (view) => this.#planAppend(view, prepared, tx),
        this.#wireAppend(prepared, tx),
      );
    });
  }

  /** {@link appendTransaction}, synchronously (with {@link appendSync}'s caveat). */
  appendTransactionSync(
    records: readonly T[],
    options: TransactionalAppendOptions<T>,
  ): TransactionalAppendResult {
    const prepared = this.#prepare(records, options, 'appendTransactionSync');
    const tx = this.#prepareTransaction(options, 'appendTransactionSync');
    return this.#applySync((view) => this.#planAppend(view, prepared, tx));
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
    // Retention may have deleted the head of a batch it keeps: skip below `start`.
    const from = Math.max(fromOffset, this.#partitionEntry(undefined, partition).value.start);
    const out: LogRecord<T>[] = [];
    const { codec, records } = this.#core;
    // The entry holding `from` has the greatest key at or below it (a batch may start earlier).
    let first: Key = [this.#id, partition, from];
    for (const key of records.getKeys({
      start: first,
      end: [this.#id, partition],
      reverse: true,
      limit: 1,
    })) {
      first = key as Key;
    }
    for (const { key, value } of records.getRange({ start: first, end: [this.#id, partition + 1] })) {
      const entry = new StoredEntry(key[2] as number, value, this.#where(partition));
      for (let i = Math.max(0, from - entry.base); i < entry.count; i++) {
        out.push({ offset: entry.base + i, value: codec.decodePayload(entry.payloadAt(i)) as T });
        if (out.length === max) return out;
      }
    }
    return out;
  }

  /**
   * Reads `partition` from `options.from` on (an offset, `'earliest'` — the first retained
   * record, the default — or `'latest'` — the current end), and once caught up waits for new
   * records: woken at once by appends from this process, within `pollMs` (an `openLog` option,
   * default 50) by appends from other processes. `break` out of `for await` (or `return()`) ends
   * it, also while it waits; closing the log ends it too. Records are read `options.batch` (default
   * 256) at a time. See `topic-tail.ts`.
   */
  tail(partition: number, options?: TailOptions): TopicTail<T> {
    this.#checkPartition(partition, 'tail(partition)');
    const o = checkOptionsObject(options, 'tail(options)');
    for (const k of Object.keys(o)) {
      if (k !== 'from' && k !== 'batch')
        throw new InvalidOptionError('tail(options)', `unknown option ${describe(k)}`);
    }
    const batch = o.batch === undefined ? 256 : checkPositiveInteger(o.batch, 'tail(options.batch)');
    let from: number;
    if (o.from === undefined || o.from === 'earliest') from = this.startOffset(partition);
    else if (o.from === 'latest') from = this.endOffset(partition);
    else if (typeof o.from === 'number' && Number.isSafeInteger(o.from) && o.from >= 0) from = o.from;
    else {
      throw new InvalidOptionError(
        'tail(options.from)',
        `must be a non-negative integer offset, 'earliest' or 'latest', got ${describe(o.from)}`,
      );
    }
    return new TopicTail<T>(this.#core, this, partition, from, batch);
  }

  /**
   * @internal For `sources.log`: resolves at the next append committed by this process, or after
   * at most `pollMs` (appends by other processes are seen by polling). May resolve spuriously.
   */
  nextAppend(): Promise<void> {
    return this.#core.wakeup.next();
  }

  /** The next offset `partition` will assign (= number of records ever appended to it). */
  endOffset(partition: number): number {
    this.#checkPartition(partition, 'endOffset(partition)');
    this.#core.freshSnapshot();
    return this.#partitionEntry(undefined, partition).value.end;
  }

  /** The first offset of `partition` still retained (`=== endOffset` when it holds nothing). */
  startOffset(partition: number): number {
    this.#checkPartition(partition, 'startOffset(partition)');
    this.#core.freshSnapshot();
    return this.#partitionEntry(undefined, partition).value.start;
  }

  /**
   * Applies retention to every partition now (appends apply it to the partitions they write;
   * this is for topics that stopped receiving appends). Resolves with the number of records
   * deleted. Cost: one transaction, O(partitions + records deleted).
   */
  enforceRetention(): Promise<number> {
    return rejecting(() =>
      this.#submit(1, (view) => this.#planRetention(view), {
        kind: 'retention',
        topic: this.name,
        topicId: this.#id,
      }),
    );
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
      return this.#submit(
        prepared.values.length,
        (view) => this.#planAppend(view, prepared, tx),
        this.#wireAppend(prepared, tx),
      );
    });
  }

  /** @internal For `sinks.log`: {@link appendTransactionSync} of a batch from {@link prepareAppend}. */
  appendPreparedTransactionSync(
    prepared: PreparedAppend,
    transaction: { readonly transactionId: string; readonly writer: string },
  ): TransactionalAppendResult {
    const tx = this.#checkPrepared(prepared, transaction, 'appendPreparedTransactionSync');
    return this.#applySync((view) => this.#planAppend(view, prepared, tx));
  }

  /** @internal For `sinks.log` (at-least-once): {@link append} of a batch from {@link prepareAppend}. */
  appendPrepared(prepared: PreparedAppend): Promise<AppendResult> {
    return rejecting(() => {
      this.#checkPrepared(prepared, null, 'appendPrepared');
      if (prepared.values.length === 0) return Promise.resolve(emptyResult());
      return this.#submit(
        prepared.values.length,
        (view) => this.#planAppend(view, prepared, null),
        this.#wireAppend(prepared, null),
      ) as Promise<AppendResult>;
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
  #applySync<R>(plan: (view: PlanView) => R): R {
    let wrote = false;
    const result = this.#core.writeSync(() => {
      const view = new PlanView();
      const planned = plan(view);
      for (const op of view.ops) applyOpSync(op);
      wrote = view.ops.length > 0;
      return planned;
    });
    if (wrote) this.#core.wakeup.committed();
    return result;
  }

  /** Queues the plan for this handle's next group commit (`group-commit.ts`). */
  #submit<R>(records: number, plan: (view: PlanView) => R, wire: WireOp): Promise<R> {
    this.#core.checkOpen();
    return this.#core.submit(records, plan, wire);
  }

  #wireAppend(prepared: PreparedAppend, tx: PreparedTransaction | null): WireOp {
    return { kind: 'append', topic: this.name, topicId: this.#id, prepared, tx };
  }

  /**
   * @internal For the process's committer (`thread-relay.ts`): the plan of an operation
   * another thread's handle sent, on this thread's handle.
   */
  planWire(op: WireOp): (view: PlanView) => unknown {
    if (op.kind === 'retention') return (view) => this.#planRetention(view);
    return (view) => this.#planAppend(view, op.prepared, op.tx);
  }

  // ---------------------------------------------------------------- plans (reads only, on a view)

  /**
   * Writes one append into `view`; a `duplicate` result (and no writes) when the transaction was
   * already applied, by an earlier group or earlier in this one. Offsets continue from the
   * partition's end as the view sees it: the committed tail plus earlier appends of the group.
   */
  #planAppend(
    view: PlanView,
    prepared: PreparedAppend,
    tx: PreparedTransaction | null,
  ): TransactionalAppendResult {
    const core = this.#core;
    if (tx !== null) {
      const markerKey: Key = [this.#id, tx.writer, tx.transactionId];
      if (view.exists(core.txMarkers, markerKey))
        return { state: 'duplicate', transactionId: tx.transactionId };
      view.require(core.txMarkers, markerKey, null);
    }
    const topic = this.#metaEntry(view);
    const meta = topic.value;
    const { values } = prepared;
    let routed = prepared.routed;
    if (routed === null) {
      routed = roundRobinPartitions(values.length, this.partitions, meta.roundRobin);
      view.require(core.topics, this.name, topic.version);
      view.put(
        core.topics,
        this.name,
        { ...meta, roundRobin: (meta.roundRobin + values.length) % this.partitions },
        topic.version + 1,
      );
    }
    const now = core.clock();
    // Only retention reads records while planning: without it, batches skip the view's overlay.
    const retained = hasRetention(meta.retention);
    const positions: LogPosition[] = new Array(values.length);
    const ranges: OffsetRange[] = [];
    for (const { partition, indices } of partitionRuns(routed)) {
      const entry = this.#partitionEntry(view, partition);
      const count = indices === null ? values.length : indices.length;
      const at = (k: number) => (indices === null ? k : indices[k]);
      const start = entry.value.end;
      const end = start + count;
      let bytes = entry.value.bytes;
      for (let k = 0; k < count; k++) {
        const i = at(k);
        positions[i] = { partition, offset: start + k };
        bytes += values[i].length;
      }
      for (let from = 0; from < count; ) {
        let to = from + 1;
        let size = values[at(from)].length;
        while (to < count && to - from < MAX_BATCH_RECORDS && size + values[at(to)].length <= MAX_BATCH_BYTES)
          size += values[at(to++)].length;
        const base = start + from;
        const batch =
          to - from === 1
            ? singleRecordEntry(values[at(from)], now)
            : encodeRecordBatch(values, batchIndices(indices, values.length, from, to), now);
        const key: Key = [this.#id, partition, base];
        if (retained) {
          view.put(core.records, key, batch);
          view.wroteBatch(batchesKey(this.#id, partition), base, batch);
        } else view.putUnread(core.records, key, batch);
        from = to;
      }
      const appended: PartitionMeta = { start: entry.value.start, end, bytes };
      const after = this.#planRetentionOf(view, partition, appended, meta.retention, now);
      this.#putPartition(view, partition, entry, after);
      ranges.push({ partition, firstOffset: start, endOffset: end });
    }
    if (tx !== null) this.#planMarker(view, tx, meta);
    return { state: 'appended', positions, ranges };
  }

  /** Retention over every partition (`enforceRetention`). */
  #planRetention(view: PlanView): number {
    const meta = this.#metaEntry(view).value;
    if (!hasRetention(meta.retention)) return 0;
    const now = this.#core.clock();
    let deleted = 0;
    for (let p = 0; p < this.partitions; p++) {
      const entry = this.#partitionEntry(view, p);
      const after = this.#planRetentionOf(view, p, entry.value, meta.retention, now);
      if (after !== entry.value) {
        this.#putPartition(view, p, entry, after);
        deleted += after.start - entry.value.start;
      }
    }
    return deleted;
  }

  #putPartition(
    view: PlanView,
    partition: number,
    entry: VersionedEntry<PartitionMeta>,
    after: PartitionMeta,
  ): void {
    const key: Key = [this.#id, partition];
    view.require(this.#core.partitions, key, entry.version);
    view.put(this.#core.partitions, key, after, (entry.version ?? 0) + 1);
  }

  /** Records the transaction's marker and prunes the writer's markers beyond the limit. */
  #planMarker(view: PlanView, tx: PreparedTransaction, meta: TopicMeta): void {
    const core = this.#core;
    const writerKey: Key = [this.#id, tx.writer];
    const entry = view.getEntry<WriterMeta>(core.txWriters, writerKey);
    const writer: WriterMeta = entry?.value ?? { first: 0, next: 0 };
    const version = entry === undefined ? null : (entry.version ?? 0);
    view.require(core.txWriters, writerKey, version);
    view.put(core.txMarkers, [this.#id, tx.writer, tx.transactionId], writer.next);
    view.put(core.txOrder, [this.#id, tx.writer, writer.next], tx.transactionId);
    let first = writer.first;
    const next = writer.next + 1;
    const keep = meta.transactionMarkers ?? DEFAULT_TRANSACTION_MARKERS;
    while (next - first > keep) {
      const oldId = view.get<string>(core.txOrder, [this.#id, tx.writer, first]);
      view.remove(core.txOrder, [this.#id, tx.writer, first]);
      if (oldId !== undefined) view.remove(core.txMarkers, [this.#id, tx.writer, oldId]);
      first++;
    }
    view.put(core.txWriters, writerKey, { first, next }, (version ?? 0) + 1);
  }

  /**
   * Plans the deletion of the partition's head records that the retention rule (`retention.ts`)
   * says go, and returns the partition's new metadata (the same object when nothing goes).
   * Heads appended earlier in this group are read from the view.
   */
  #planRetentionOf(
    view: PlanView,
    partition: number,
    meta: PartitionMeta,
    policy: RetentionPolicy,
    now: number,
  ): PartitionMeta {
    if (!hasRetention(policy)) return meta;
    let { start, bytes } = meta;
    let holding: StoredEntry | undefined;
    while (start < meta.end) {
      if (holding === undefined || start >= holding.end) holding = this.#entryHolding(view, partition, start);
      if (holding === undefined) break; // cannot happen while the layout invariant holds
      const headBytes = holding.storedBytes(start - holding.base);
      const deletes = retentionDeletesHead(
        policy,
        { partitionBytes: bytes, isNewest: start === meta.end - 1, headAppendedAt: holding.appendedAt },
        now,
      );
      if (!deletes) break;
      // A batch goes with its last record; until then reads skip its records below `start`.
      if (start + 1 === holding.end) view.remove(this.#core.records, [this.#id, partition, holding.base]);
      bytes -= headBytes;
      start++;
    }
    return start === meta.start ? meta : { start, end: meta.end, bytes };
  }

  /**
   * The stored entry (batch or single record) holding `offset` of `partition`: one written earlier
   * in the view's group, else the snapshot's entry with the greatest key at or below `offset`.
   */
  #entryHolding(view: PlanView, partition: number, offset: number): StoredEntry | undefined {
    const written = view.batchesOf(batchesKey(this.#id, partition));
    if (written !== undefined && offset >= written[0].base) {
      let k = written.length - 1;
      while (written[k].base > offset) k--;
      return new StoredEntry(written[k].base, written[k].value, this.#where(partition));
    }
    for (const { key, value } of this.#core.records.getRange({
      start: [this.#id, partition, offset],
      end: [this.#id, partition],
      reverse: true,
      limit: 1,
    })) {
      return new StoredEntry(key[2] as number, value, this.#where(partition));
    }
    return undefined;
  }

  #where(partition: number): string {
    return `log ${this.#core.dir}, topic "${this.name}" partition ${partition}`;
  }

  #metaEntry(view?: PlanView): VersionedEntry<TopicMeta> & { version: number } {
    const entry =
      view === undefined
        ? this.#core.topics.getEntry(this.name)
        : view.getEntry<TopicMeta>(this.#core.topics, this.name);
    if (entry === undefined || entry.value.id !== this.#id) {
      throw new InvalidOptionError('topic', `topic "${this.name}" no longer exists in ${this.#core.dir}`);
    }
    return { value: entry.value, version: entry.version ?? 0 };
  }

  /** The partition's metadata and version (`null`: never written). */
  #partitionEntry(view: PlanView | undefined, partition: number): VersionedEntry<PartitionMeta> {
    const key: Key = [this.#id, partition];
    const entry =
      view === undefined
        ? this.#core.partitions.getEntry(key)
        : view.getEntry<PartitionMeta>(this.#core.partitions, key);
    return entry === undefined
      ? { value: EMPTY_PARTITION, version: null }
      : { value: entry.value, version: entry.version ?? 0 };
  }
}

/** {@link PlanView.batchesOf} key of a partition. */
function batchesKey(topicId: number, partition: number): string {
  return `${topicId},${partition}`;
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

/**
 * The records of one append grouped by partition, in ascending partition order; `indices` lists
 * the records (in append order) or is `null` for all of them. Most appends write one partition (a
 * key, a partition, a single record): that case allocates no map and sorts nothing (issue 13: the
 * grouping was a fifth of a single-record append's allocation on the appending thread).
 */
function partitionRuns(routed: readonly number[]): { partition: number; indices: number[] | null }[] {
  const first = routed[0];
  let same = 1;
  while (same < routed.length && routed[same] === first) same++;
  if (same === routed.length) return [{ partition: first, indices: null }];
  const byPartition = new Map<number, number[]>();
  for (let i = 0; i < routed.length; i++) {
    const list = byPartition.get(routed[i]);
    if (list === undefined) byPartition.set(routed[i], [i]);
    else list.push(i);
  }
  return [...byPartition].sort((a, b) => a[0] - b[0]).map(([partition, indices]) => ({ partition, indices }));
}

/** The `indices` argument of `encodeRecordBatch` for records `[from, to)` of a partition run. */
function batchIndices(indices: number[] | null, total: number, from: number, to: number): number[] | null {
  if (indices !== null) return from === 0 && to === indices.length ? indices : indices.slice(from, to);
  if (from === 0 && to === total) return null;
  return Array.from({ length: to - from }, (_, k) => from + k);
}
