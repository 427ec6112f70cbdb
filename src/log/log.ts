/**
 * `openLog(dir)`: weir's embedded, durable, partitioned log on LMDB. A Node service appends
 * events (`log.topic('events', { partitions: 3 }).append(records)`) and a weir job reads them
 * with `sources.log`; jobs write to it transactionally with `sinks.log`.
 *
 * Every thread or process opens its own {@link Log} on the same directory; LMDB makes their
 * writes atomic and serialised and gives their reads consistent snapshots (see `log-core.ts`).
 * The layout and its invariants are in `log-layout.ts`, the retention rule in `retention.ts`.
 */

import { InvalidOptionError, LogPartitionCountMismatchError, LogTopicNotFoundError } from '../errors.js';
import { LogCore } from './log-core.js';
import {
  DEFAULT_TRANSACTION_MARKERS,
  INFO_NEXT_TOPIC_ID,
  type RetentionPolicy,
  type TopicMeta,
} from './log-layout.js';
import {
  checkName,
  checkNonNegativeInteger,
  checkOptionsObject,
  checkPositiveInteger,
  checkRetention,
  type Durability,
  describe,
  type LogOptions,
  type TopicOptions,
} from './log-options.js';
import { DEFAULT_COMMITTER_TIMEOUT_MS, MIN_COMMITTER_TIMEOUT_MS } from './thread-relay.js';
import { Topic } from './topic.js';

/** Default of `LogOptions.maxBatchRecords`. */
export const DEFAULT_MAX_BATCH_RECORDS = 65_536;
/** Default of `LogOptions.pollMs`. */
export const DEFAULT_POLL_MS = 50;
/** Largest `LogOptions.committerTimeoutMs` (10 minutes: appends stall that long after a thread dies). */
export const MAX_COMMITTER_TIMEOUT_MS = 600_000;

export class Log {
  readonly #core: LogCore;

  /** @internal Use {@link openLog}. */
  constructor(core: LogCore) {
    this.#core = core;
  }

  get dir(): string {
    return this.#core.dir;
  }

  get closed(): boolean {
    return this.#core.closed;
  }

  /**
   * Opens topic `name`, creating it when it does not exist and `options.partitions` is given.
   * Synchronous; creating a topic or changing its policy is one durable write.
   * @throws LogTopicNotFoundError (no such topic and no `partitions`),
   *   LogPartitionCountMismatchError (exists with another partition count), InvalidOptionError,
   *   LogClosedError.
   */
  topic<T = unknown>(name: string, options?: TopicOptions): Topic<T> {
    this.#core.checkOpen();
    checkName(name, 'topic(name)');
    const o = checkOptionsObject(options, 'topic(options)');
    const partitions =
      o.partitions === undefined
        ? undefined
        : checkPositiveInteger(o.partitions, 'topic(options.partitions)');
    const retention =
      o.retention === undefined ? undefined : checkRetention(o.retention, 'topic(options.retention)');
    const markers =
      o.transactionMarkers === undefined
        ? undefined
        : checkPositiveInteger(o.transactionMarkers, 'topic(options.transactionMarkers)');
    for (const k of Object.keys(o)) {
      if (!['partitions', 'retention', 'transactionMarkers'].includes(k)) {
        throw new InvalidOptionError('topic(options)', `unknown option ${describe(k)}`);
      }
    }

    this.#core.freshSnapshot();
    const existing = this.#core.topics.get(name);
    // Topic metadata is versioned (asynchronous appends are conditional on its version): every
    // change below writes version + 1.
    if (existing !== undefined && !needsUpdate(existing, partitions, retention, markers)) {
      return new Topic<T>(this.#core, name, existing);
    }
    if (existing === undefined && partitions === undefined) throw new LogTopicNotFoundError(this.dir, name);
    // Check again inside the write transaction: another thread or process may have created or
    // changed the topic since the read above.
    const meta = this.#core.writeSync(() => {
      const entry = this.#core.topics.getEntry(name);
      const current = entry?.value;
      if (current === undefined) {
        if (partitions === undefined) throw new LogTopicNotFoundError(this.dir, name);
        const id = this.#core.info.get(INFO_NEXT_TOPIC_ID) ?? 1;
        this.#core.info.put(INFO_NEXT_TOPIC_ID, id + 1);
        const created: TopicMeta = {
          id,
          partitions,
          retention: retention ?? {},
          transactionMarkers: markers ?? DEFAULT_TRANSACTION_MARKERS,
          createdAt: this.#core.clock(),
          roundRobin: 0,
        };
        this.#core.topics.put(name, created, 1);
        return created;
      }
      if (!needsUpdate(current, partitions, retention, markers)) return current;
      if (partitions !== undefined && partitions !== current.partitions) {
        throw new LogPartitionCountMismatchError(name, current.partitions, partitions);
      }
      const updated: TopicMeta = {
        ...current,
        retention: retention ?? current.retention,
        transactionMarkers: markers ?? current.transactionMarkers,
      };
      this.#core.topics.put(name, updated, (entry?.version ?? 0) + 1);
      return updated;
    });
    return new Topic<T>(this.#core, name, meta);
  }

  /**
   * @internal Asynchronous operations this handle committed for other threads' handles on the
   * same directory (non-zero only on the process's committer handle: `thread-relay.ts`). For tests, benches.
   */
  relayedOperations(): number {
    return this.#core.relayedOps;
  }

  /**
   * @internal For tests: appends of this handle that a take-over resolved from the acknowledgement
   * the dead committer wrote with them (committed, never answered: `thread-relay.ts`).
   */
  appendsResolvedFromAck(): number {
    return this.#core.relay.resolvedFromAck;
  }

  /**
   * @internal Fault injection for tests: on the process's committer handle, `hook` runs after a
   * group holding other threads' appends committed and before they are answered.
   */
  injectBeforeRelayAnswer(hook: (() => void) | undefined): void {
    this.#core.relay.beforeAnswer = hook;
  }

  /** Names of every topic, sorted. */
  topics(): string[] {
    this.#core.freshSnapshot();
    return [...this.#core.topics.getKeys()] as string[];
  }

  /**
   * Waits for this handle's in-flight appends, then releases its LMDB handle. Idempotent. Any
   * later use of this log or its topics throws LogClosedError; other handles (other threads,
   * processes, or another `openLog` here) stay usable.
   */
  close(): Promise<void> {
    return this.#core.close();
  }
}

/**
 * Opens the log in `dir` (created when missing). Synchronous. The handle belongs to the calling
 * thread: open one per thread (worker threads, child processes) and close it when done.
 * @throws InvalidOptionError for bad options; LogStorageError when the directory cannot be opened
 *   or holds another format.
 */
export function openLog(dir: string, options?: LogOptions): Log {
  if (typeof dir !== 'string' || dir.length === 0) {
    throw new InvalidOptionError('openLog(dir)', `must be a non-empty path, got ${describe(dir)}`);
  }
  const o = checkOptionsObject(options, 'openLog(options)');
  if (o.clock !== undefined && typeof o.clock !== 'function') {
    throw new InvalidOptionError(
      'openLog(options.clock)',
      `must be a function returning ms, got ${describe(o.clock)}`,
    );
  }
  const clock = (o.clock as (() => number) | undefined) ?? Date.now;
  if (o.durability !== undefined && o.durability !== 'fsync' && o.durability !== 'os') {
    throw new InvalidOptionError(
      'openLog(options.durability)',
      `must be 'fsync' or 'os', got ${describe(o.durability)}`,
    );
  }
  const lingerMs =
    o.lingerMs === undefined ? 0 : checkNonNegativeInteger(o.lingerMs, 'openLog(options.lingerMs)');
  const maxBatchRecords =
    o.maxBatchRecords === undefined
      ? DEFAULT_MAX_BATCH_RECORDS
      : checkPositiveInteger(o.maxBatchRecords, 'openLog(options.maxBatchRecords)');
  const pollMs =
    o.pollMs === undefined ? DEFAULT_POLL_MS : checkPositiveInteger(o.pollMs, 'openLog(options.pollMs)');
  const committerTimeoutMs =
    o.committerTimeoutMs === undefined
      ? DEFAULT_COMMITTER_TIMEOUT_MS
      : checkCommitterTimeout(o.committerTimeoutMs);
  for (const k of Object.keys(o)) {
    if (!['clock', 'durability', 'lingerMs', 'maxBatchRecords', 'pollMs', 'committerTimeoutMs'].includes(k)) {
      throw new InvalidOptionError('openLog(options)', `unknown option ${describe(k)}`);
    }
  }
  return new Log(
    LogCore.open(dir, {
      clock,
      durability: (o.durability as Durability | undefined) ?? 'fsync',
      lingerMs,
      maxBatchRecords,
      pollMs,
      committerTimeoutMs,
    }),
  );
}

function checkCommitterTimeout(value: unknown): number {
  if (
    typeof value !== 'number' ||
    !Number.isSafeInteger(value) ||
    value < MIN_COMMITTER_TIMEOUT_MS ||
    value > MAX_COMMITTER_TIMEOUT_MS
  ) {
    throw new InvalidOptionError(
      'openLog(options.committerTimeoutMs)',
      `must be an integer from ${MIN_COMMITTER_TIMEOUT_MS} to ${MAX_COMMITTER_TIMEOUT_MS} (ms), got ${describe(value)}`,
    );
  }
  return value;
}

/** Whether opening with these options changes the stored topic (or must fail on a mismatch). */
function needsUpdate(
  meta: TopicMeta,
  partitions: number | undefined,
  retention: RetentionPolicy | undefined,
  markers: number | undefined,
): boolean {
  if (partitions !== undefined && partitions !== meta.partitions) return true;
  if (markers !== undefined && markers !== meta.transactionMarkers) return true;
  return (
    retention !== undefined &&
    (retention.maxBytes !== meta.retention.maxBytes || retention.maxAgeMs !== meta.retention.maxAgeMs)
  );
}
