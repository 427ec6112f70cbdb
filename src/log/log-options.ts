/**
 * Options of the embedded log and their validation. Every check throws an
 * {@link InvalidOptionError} naming the option, before anything is read or written.
 */

import { InvalidOptionError } from '../errors.js';
import { MAX_NAME_LENGTH, MAX_TRANSACTION_ID_LENGTH, type RetentionPolicy } from './log-layout.js';

export type { RetentionPolicy } from './log-layout.js';

/**
 * When an asynchronous append resolves:
 * - `'fsync'` (default): after its transaction is fsynced. An acknowledged record survives a
 *   process crash and a power cut.
 * - `'os'`: after its transaction is written to the OS page cache, without fsync (like Kafka's
 *   `acks=1` without a flush). An acknowledged record survives a crash of the process (SIGKILL
 *   included) but a power cut or kernel crash may lose the last transactions of every handle
 *   that appends with `'os'` — and, as LMDB warns for `MDB_NOSYNC`, on a file system that does
 *   not keep write order, corrupt the log.
 */
export type Durability = 'fsync' | 'os';

export interface LogOptions {
  /**
   * Clock for append times and age retention, in ms since the epoch. Default `Date.now`. Meant
   * for tests and replays; every handle on a directory should use the same notion of time.
   */
  readonly clock?: () => number;
  /**
   * Default `'fsync'`. All handles on one directory within one process must agree (lmdb-js shares
   * one environment per path and process); processes may differ.
   */
  readonly durability?: Durability;
  /**
   * Group commit: how long an append that finds the handle idle waits for others to join its
   * transaction, in ms (default 0: until the next event-loop turn). Under load appends batch
   * anyway (those made while a transaction commits share the next one); a linger only helps a
   * lightly loaded handle trade latency for fewer fsyncs.
   */
  readonly lingerMs?: number;
  /**
   * Group commit: records per transaction at most (default 65536). Bounds a transaction's size
   * and so the latency of the appends behind it; one append larger than this is still written
   * whole, alone.
   */
  readonly maxBatchRecords?: number;
  /**
   * Threads of one process: how long this handle, waiting for the answer of the thread that
   * commits for the process (`thread-relay.ts`), lets that committer's heartbeat stand still
   * before it takes over, in ms (default 2000; an integer from 200 to 600000). A take-over is
   * safe either way (an append is never lost, doubled or acknowledged before it is durable); a
   * shorter delay ends the stall of appends after a worker thread dies sooner, but a committer
   * whose event loop is blocked for longer than this (a long synchronous task on its thread) is
   * taken for dead and costs one fenced group.
   */
  readonly committerTimeoutMs?: number;
  /**
   * `tail` and `sources.log`: how often a caught-up reader checks for records appended by
   * other processes, in ms (default 50). Appends from this process wake readers at once.
   */
  readonly pollMs?: number;
}

export interface TopicOptions {
  /**
   * Creates the topic with this many partitions when it does not exist. Fixed at creation:
   * opening an existing topic with another count throws LogPartitionCountMismatchError.
   * Omit it to open an existing topic only (LogTopicNotFoundError when there is none).
   */
  readonly partitions?: number;
  /**
   * Retention per partition (see `retention.ts` for the rule). A policy, not structure: given
   * when opening an existing topic, it replaces the stored one. Default: keep everything.
   */
  readonly retention?: RetentionPolicy;
  /**
   * Transaction markers kept per (topic, writer) for idempotent transactional appends (default
   * 1000): a repeated commit is recognised as long as fewer than this many later transactions of
   * the same writer committed since. Like retention, given on open it replaces the stored value.
   */
  readonly transactionMarkers?: number;
}

/** A key value: what key-groups can hash (strings, numbers, booleans, bigints, null, arrays and plain objects of those). */
export type LogKey =
  | string
  | number
  | boolean
  | bigint
  | null
  | readonly unknown[]
  | { readonly [field: string]: unknown };

/** Where an append puts its records. At most one of `key` and `partition`; neither: round-robin. */
export interface AppendOptions<T = unknown> {
  /**
   * A key for every record of the batch, or a function of the record: the partition is a stable
   * hash of the key's canonical value modulo the partition count.
   */
  readonly key?: LogKey | ((record: T) => unknown);
  /** The partition for every record of the batch. */
  readonly partition?: number;
}

/** Options of `topic.tail(partition, options)`. */
export interface TailOptions {
  /** First offset to yield: an offset, `'earliest'` (first retained record, default) or `'latest'` (the current end). */
  readonly from?: number | 'earliest' | 'latest';
  /** Records read per range scan (default 256). */
  readonly batch?: number;
}

export interface TransactionalAppendOptions<T = unknown> extends AppendOptions<T> {
  /** Names the transaction: a second append with the same id (and writer) appends nothing. */
  readonly transactionId: string;
  /**
   * The writer the transaction belongs to (default `'default'`). Markers are kept and pruned per
   * writer, so a busy writer never pushes out another writer's markers.
   */
  readonly writer?: string;
}

export function checkName(value: unknown, option: string, maxLength = MAX_NAME_LENGTH): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength) {
    throw new InvalidOptionError(
      option,
      `must be a non-empty string of at most ${maxLength} characters, got ${describe(value)}`,
    );
  }
  return value;
}

export function checkTransactionId(value: unknown, option: string): string {
  return checkName(value, option, MAX_TRANSACTION_ID_LENGTH);
}

export function checkPositiveInteger(value: unknown, option: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidOptionError(option, `must be a positive integer, got ${describe(value)}`);
  }
  return value;
}

export function checkNonNegativeInteger(value: unknown, option: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidOptionError(option, `must be a non-negative integer, got ${describe(value)}`);
  }
  return value;
}

/** A normalized copy (absent limits omitted), or throws. */
export function checkRetention(value: unknown, option: string): RetentionPolicy {
  if (typeof value !== 'object' || value === null) {
    throw new InvalidOptionError(
      option,
      `must be an object { maxBytes?, maxAgeMs? }, got ${describe(value)}`,
    );
  }
  const { maxBytes, maxAgeMs, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new InvalidOptionError(option, `unknown field(s) ${unknown.join(', ')}`);
  const out: { maxBytes?: number; maxAgeMs?: number } = {};
  if (maxBytes !== undefined) out.maxBytes = checkPositiveInteger(maxBytes, `${option}.maxBytes`);
  if (maxAgeMs !== undefined) {
    if (typeof maxAgeMs !== 'number' || !(maxAgeMs > 0) || !Number.isFinite(maxAgeMs)) {
      throw new InvalidOptionError(
        `${option}.maxAgeMs`,
        `must be a positive number, got ${describe(maxAgeMs)}`,
      );
    }
    out.maxAgeMs = maxAgeMs;
  }
  return out;
}

export function checkOptionsObject(value: unknown, option: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null) {
    throw new InvalidOptionError(option, `must be an object, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return 'an array';
  if (value === null || typeof value !== 'object') return String(value);
  return 'an object';
}
