/**
 * `sources.log({ dir, topic, startFrom?, bounded? })`: reads a topic of the embedded log
 * (`openLog`). Replayable, so exactly-once under checkpointing.
 *
 * Splits are the topic's partitions. On a fresh start partition `p` goes to subtask
 * `p mod parallelism`; each split's position (the next offset to read) is one operator-state
 * entry, snapshotted in the same synchronous step as the barrier. On restore the runtime
 * redistributes the entries (even split, `task-restore-planner.ts`), so at any parallelism every
 * partition is read by exactly one subtask from its checkpointed offset. A subtask may hold no
 * split (parallelism > partitions): bounded, it ends at once; unbounded, it stays idle.
 *
 * `bounded: true` stops each partition at the end offset observed when the job first started;
 * that end is part of the split state, so a restore ends at the same place however much was
 * appended since. (A failure before the first completed checkpoint restarts fresh and observes
 * the ends again.) Unbounded, a caught-up reader goes idle until the log's wake-up fires
 * (`log-wakeup.ts`): at once for an append from any thread of this process, within the log's
 * `pollMs` (50 ms) for an append from another process; {@link IDLE_MS} bounds the wait anyway.
 *
 * Retention may delete records a reader has not reached: the reader skips to the first retained
 * offset and counts the skipped offsets in the `recordsLostToRetention` metric.
 *
 * Each worker thread opens its own log handle in `createReader` and closes it in `close()`.
 */

import type { Collector } from '../api/functions.js';
import { consoleLogger, errorField, type Logger } from '../api/logger.js';
import type { PollResult, Source, SourceContext, SourceLag, SourceReader } from '../api/source.js';
import { InvalidOptionError } from '../errors.js';
import { type Log, openLog } from '../log/log.js';
import type { Durability } from '../log/log-options.js';
import type { Topic } from '../log/topic.js';

export interface LogSourceOptions {
  /** The log's directory (as given to `openLog`). */
  readonly dir: string;
  /** An existing topic (created by the appending service with `log.topic(name, { partitions })`). */
  readonly topic: string;
  /** Where a fresh start begins: the first retained record (default) or the current end. */
  readonly startFrom?: 'earliest' | 'latest';
  /** Read up to the end offsets observed at the first start, then end (default `false`). */
  readonly bounded?: boolean;
  /**
   * The durability the reader's log handle is opened with (default `'fsync'`). A reader never
   * appends, but lmdb-js shares one environment per directory and process, so every handle on
   * the directory in this process must agree: a job reading the log a service in the same
   * process appends to with `durability: 'os'` sets `'os'` here too (else the reader fails with
   * InvalidOptionError). Other processes may differ.
   */
  readonly durability?: Durability;
}

/** Operator-state entry: one partition and how far it has been read. */
export interface LogSplit {
  readonly topic: string;
  readonly partition: number;
  /** Next offset to emit. */
  next: number;
  /** Bounded: the offset to stop at (exclusive); `null` when unbounded. */
  end: number | null;
}

/** Longest a caught-up unbounded reader waits before polling again (its wake-up is usually sooner). */
export const IDLE_MS = 100;

const MORE: PollResult = { state: 'more' };
const END: PollResult = { state: 'end' };

export function log<T = unknown>(options: LogSourceOptions): Source<T> {
  const {
    dir,
    topic,
    startFrom = 'earliest',
    bounded = false,
    durability = 'fsync',
  } = options ?? ({} as LogSourceOptions);
  if (typeof dir !== 'string' || dir.length === 0) {
    throw new InvalidOptionError('sources.log.dir', `must be a non-empty path, got ${String(dir)}`);
  }
  if (typeof topic !== 'string' || topic.length === 0) {
    throw new InvalidOptionError('sources.log.topic', `must be a non-empty string, got ${String(topic)}`);
  }
  if (startFrom !== 'earliest' && startFrom !== 'latest') {
    throw new InvalidOptionError(
      'sources.log.startFrom',
      `must be 'earliest' or 'latest', got ${String(startFrom)}`,
    );
  }
  if (typeof bounded !== 'boolean') {
    throw new InvalidOptionError('sources.log.bounded', `must be a boolean, got ${String(bounded)}`);
  }
  if (durability !== 'fsync' && durability !== 'os') {
    throw new InvalidOptionError(
      'sources.log.durability',
      `must be 'fsync' or 'os', got ${String(durability)}`,
    );
  }
  return {
    type: 'log',
    bounded,
    createReader(ctx: SourceContext): SourceReader<T> {
      const handle = openLog(dir, { durability });
      try {
        const t = handle.topic<T>(topic);
        const splits =
          ctx.restoredState === undefined
            ? initialLogSplits(t.partitions, ctx.subtaskIndex, ctx.parallelism).map((partition) => ({
                topic,
                partition,
                next: startFrom === 'earliest' ? t.startOffset(partition) : t.endOffset(partition),
                end: bounded ? t.endOffset(partition) : null,
              }))
            : ctx.restoredState.map((entry) => restoredSplit(entry, t, bounded));
        return new LogReader<T>(handle, t, splits, bounded, ctx.logger);
      } catch (error) {
        closeLog(handle, 'sources.log', ctx.logger);
        throw error;
      }
    },
  };
}

/** Partitions subtask `subtask` of `parallelism` reads on a fresh start: `p mod parallelism === subtask`. */
export function initialLogSplits(partitions: number, subtask: number, parallelism: number): number[] {
  const out: number[] = [];
  for (let p = subtask; p < partitions; p += parallelism) out.push(p);
  return out;
}

/**
 * A split from a checkpoint, checked against the topic. A split restored into a bounded source
 * without an end gets the end observed now; one restored into an unbounded source loses its end.
 */
function restoredSplit<T>(entry: unknown, topic: Topic<T>, bounded: boolean): LogSplit {
  const s = entry as Partial<LogSplit> | null;
  if (
    typeof s !== 'object' ||
    s === null ||
    !Number.isInteger(s.partition) ||
    !Number.isSafeInteger(s.next) ||
    !(s.end === null || Number.isSafeInteger(s.end))
  ) {
    throw new InvalidOptionError('sources.log', `restored state holds an entry that is not a log split`);
  }
  if (s.topic !== topic.name) {
    throw new InvalidOptionError(
      'sources.log.topic',
      `the checkpoint holds positions of topic "${String(s.topic)}", the source reads "${topic.name}"`,
    );
  }
  if (s.partition! >= topic.partitions) {
    throw new InvalidOptionError(
      'sources.log.topic',
      `the checkpoint holds partition ${s.partition} but topic "${topic.name}" has ${topic.partitions}`,
    );
  }
  const end = bounded ? (s.end ?? topic.endOffset(s.partition!)) : null;
  return { topic: topic.name, partition: s.partition!, next: s.next!, end };
}

class LogReader<T> implements SourceReader<T> {
  readonly #log: Log;
  readonly #topic: Topic<T>;
  readonly #splits: LogSplit[];
  readonly #bounded: boolean;
  /** Split polled next: rotates so that every partition makes progress. */
  #current = 0;
  #lostToRetention = 0;

  readonly #logger: Logger | undefined;

  constructor(
    handle: Log,
    topic: Topic<T>,
    splits: LogSplit[],
    bounded: boolean,
    logger: Logger | undefined,
  ) {
    this.#logger = logger;
    this.#log = handle;
    this.#topic = topic;
    this.#splits = splits;
    this.#bounded = bounded;
  }

  poll(out: Collector<T>, max: number): PollResult {
    if (max < 1) return MORE;
    const n = this.#splits.length;
    let unfinished = 0;
    for (let i = 0; i < n; i++) {
      const index = (this.#current + i) % n;
      const split = this.#splits[index];
      if (split.end !== null && split.next >= split.end) continue;
      unfinished++;
      const limit = split.end === null ? max : Math.min(max, split.end - split.next);
      const records = this.#topic.read(split.partition, split.next, limit);
      if (records.length === 0) {
        this.#skipDeleted(split);
        continue;
      }
      // `next` advances per record so that a snapshot taken after a failure inside downstream
      // chained code still names exactly the records that were emitted.
      for (const record of records) {
        if (split.end !== null && record.offset >= split.end) {
          this.#lostToRetention += split.end - split.next;
          split.next = split.end;
          break;
        }
        this.#lostToRetention += record.offset - split.next;
        split.next = record.offset + 1;
        out.collect(record.value);
      }
      this.#current = (index + 1) % n;
      return MORE;
    }
    if (this.#bounded && unfinished === 0) return END;
    // Synchronous since the reads above: no commit notice can have been missed in between.
    return { state: 'idle', ms: IDLE_MS, wake: this.#topic.nextAppend() };
  }

  /** Nothing readable at `next`: if retention deleted it, move to the first retained offset. */
  #skipDeleted(split: LogSplit): void {
    const start = this.#topic.startOffset(split.partition);
    if (start <= split.next) return;
    const to = split.end === null ? start : Math.min(start, split.end);
    this.#lostToRetention += to - split.next;
    split.next = to;
  }

  snapshotState(): unknown[] {
    return this.#splits.map((s) => ({ topic: s.topic, partition: s.partition, next: s.next, end: s.end }));
  }

  metrics(): Readonly<Record<string, number>> {
    return { recordsLostToRetention: this.#lostToRetention };
  }

  /** Records appended to this subtask's partitions (up to a bounded split's end) and not yet emitted. */
  lag(): SourceLag {
    let value = 0;
    for (const s of this.#splits) {
      const end = s.end ?? this.#topic.endOffset(s.partition);
      value += Math.max(0, end - s.next);
    }
    return { value, unit: 'records' };
  }

  close(): void {
    closeLog(this.#log, 'sources.log', this.#logger);
  }
}

/** Releases a connector's log handle; a failure to close is reported, not thrown (the task is ending). */
export function closeLog(handle: Log, connector: string, logger: Logger = consoleLogger): void {
  handle.close().catch((error: unknown) => {
    logger.warn({ connector, dir: handle.dir, err: errorField(error) }, 'closing the log failed');
  });
}
