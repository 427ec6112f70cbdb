/**
 * `sources.redisStream({ url, stream, bounded?, withMetadata? })`: reads a Redis stream written by
 * `XADD stream * data <json>` (as `sinks.redisStream` writes). Replayable, so exactly-once under
 * checkpointing.
 *
 * One split (the stream), read by subtask 0 on a fresh start (a Redis stream has no partitions;
 * read several streams with several sources). Its position is the ID of the last emitted entry,
 * in the checkpoint; after a restore (any parallelism: the entry goes to one subtask) reading
 * continues with `XRANGE stream (<id> + COUNT n`. Bounded: the stream's last entry ID at the first
 * start is the end (kept in the split). No consumer group: nothing on the server decides anything.
 *
 * Records: the JSON-decoded `data` field (an entry without one is a `RedisStreamError`);
 * `withMetadata: true` gives `{ id, data }`. A missing stream key is a `RedisStreamError` naming it.
 * Reads are asynchronous into a buffer of at most {@link BUFFER_LIMIT} entries (backpressure).
 *
 * Unbounded reading is `XREAD COUNT n BLOCK {@link BLOCK_MS} STREAMS stream <last>` on the reader's
 * own connection (nothing else is sent on it, so blocking it delays nobody): a backlog comes back at
 * once, a caught-up reader waits in the server until an `XADD` answers it, with no polling. Each
 * batch that arrives resolves the `wake` promise of the task's last idle poll, so neither the pump
 * nor the task thread spends CPU while the stream is quiet (one `XREAD` per {@link BLOCK_MS} ms).
 * `close()` (job stop, cancel, restart) disconnects at once instead of `QUIT`, which would queue
 * behind the blocked `XREAD`; the reply that never comes is dropped with the connection. Bounded
 * reading keeps `XRANGE (<last> <end> COUNT n`: it never waits for new entries.
 */

import type { Redis } from 'ioredis';
import type { Collector } from '../api/functions.js';
import type { PollResult, Source, SourceContext, SourceReader } from '../api/source.js';
import { InvalidOptionError, RedisStreamError } from '../errors.js';
import { connectRedis } from './redis-stream-sink.js';

export interface RedisStreamSourceOptions {
  readonly url: string;
  readonly stream: string;
  /** Read to the last entry at the first start, then end (default `false`). */
  readonly bounded?: boolean;
  readonly withMetadata?: boolean;
}

export interface RedisStreamSplit {
  readonly stream: string;
  /** ID of the last emitted entry (`0-0` before the first). */
  last: string;
  /** Bounded: ID of the last entry to emit; `null` when unbounded or not yet known. */
  end: string | null;
}

export const BUFFER_LIMIT = 4096;
const BATCH = 1024;
/** How long one `XREAD` waits in the server for new entries before it is sent again. */
export const BLOCK_MS = 1000;
/** An idle task polls again after this long even without a wake-up (a safety net, not the path). */
const IDLE_MS = 1000;

const MORE: PollResult = { state: 'more' };
const END: PollResult = { state: 'end' };

/**
 * The connection name a source reading `stream` gives its connection (`CLIENT LIST` shows it): an
 * operator can tell weir's blocked `XREAD`s apart, and a test can check none outlives its job.
 * Redis names hold no spaces, so they are replaced.
 */
export function sourceConnectionName(stream: string): string {
  return `weir-source:${stream.replace(/\s/g, '_')}`;
}

/** Compares two stream entry IDs (`ms-seq`). */
export function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt);
  const [bm, bs] = b.split('-').map(BigInt);
  if (am !== bm) return am < bm ? -1 : 1;
  return as === bs ? 0 : as < bs ? -1 : 1;
}

export function redisStreamSource<T = unknown>(options: RedisStreamSourceOptions): Source<T> {
  const o = options ?? ({} as RedisStreamSourceOptions);
  if (typeof o.url !== 'string' || o.url.length === 0) {
    throw new InvalidOptionError('sources.redisStream.url', `must be a redis:// URL, got ${String(o.url)}`);
  }
  if (typeof o.stream !== 'string' || o.stream.length === 0) {
    throw new InvalidOptionError(
      'sources.redisStream.stream',
      `must be a non-empty string, got ${String(o.stream)}`,
    );
  }
  const bounded = o.bounded ?? false;
  const stream = o.stream;
  return {
    type: 'redisStream',
    bounded,
    createReader(ctx: SourceContext): SourceReader<T> {
      const splits: RedisStreamSplit[] =
        ctx.restoredState === undefined
          ? ctx.subtaskIndex === 0
            ? [{ stream, last: '0-0', end: null }]
            : []
          : ctx.restoredState.map((e) => {
              const s = e as Partial<RedisStreamSplit>;
              if (s?.stream !== stream || typeof s.last !== 'string') {
                throw new InvalidOptionError(
                  'sources.redisStream',
                  `restored state is not a split of stream "${stream}"`,
                );
              }
              return { stream, last: s.last, end: bounded ? (s.end ?? null) : null };
            });
      return new RedisStreamReader<T>(o.url, stream, splits, bounded, o.withMetadata ?? false);
    },
  };
}

/**
 * Reads with ioredis's string commands. Measured and not kept (2026-12-02, bench/README.md
 * "connectors"): `xrangeBuffer` with only the `data` value decoded (1.4× the string API in a bare
 * loop on the main thread, but in the source's worker thread the garbage collector took 25–35 % of
 * the thread instead of 5–13 %, and the source ran slower); the buffer as a queue of reply arrays
 * (the same GC rise); `COUNT` 4096 or 256–512 instead of 1024 (no gain beyond the noise).
 */
class RedisStreamReader<T> implements SourceReader<T> {
  /** Entries read and not yet emitted, from `#head` on; emitted ones are dropped by `poll`. */
  readonly #buffer: [string, string[]][] = [];
  #head = 0;
  #done = false;
  #error: unknown = null;
  #closed = false;
  #redis: Redis | null = null;
  /** Resolves the pump's wait for buffer space. */
  #wake: (() => void) | null = null;
  /** Resolves the task's idle wait when entries arrive; one promise per idle spell. */
  #arrived: (() => void) | null = null;
  #arrivedPromise: Promise<void> | null = null;

  constructor(
    readonly url: string,
    readonly stream: string,
    readonly splits: RedisStreamSplit[],
    readonly bounded: boolean,
    readonly withMetadata: boolean,
  ) {
    if (splits.length === 0) {
      this.#done = true;
      return;
    }
    this.#pump().catch((error: unknown) => {
      if (this.#closed) return;
      this.#error =
        error instanceof RedisStreamError
          ? error
          : new RedisStreamError(stream, `reading failed: ${(error as Error).message}`, { cause: error });
      this.#wakePoll();
    });
  }

  async #pump(): Promise<void> {
    const redis = await connectRedis(this.url, sourceConnectionName(this.stream));
    this.#redis = redis;
    const split = this.splits[0];
    if ((await redis.exists(this.stream)) === 0) {
      throw new RedisStreamError(this.stream, 'the stream does not exist (sources never create it)');
    }
    if (this.bounded && split.end === null) {
      const lastEntry = await redis.xrevrange(this.stream, '+', '-', 'COUNT', 1);
      split.end = lastEntry.length === 0 ? '0-0' : lastEntry[0][0];
    }
    let from = split.last;
    while (!this.#closed) {
      let entries: [string, string[]][];
      if (this.bounded) {
        if (compareIds(from, split.end!) >= 0) break;
        entries = await redis.xrange(this.stream, `(${from}`, split.end!, 'COUNT', BATCH);
        if (entries.length === 0) break;
      } else {
        const reply = (await redis.xread('COUNT', BATCH, 'BLOCK', BLOCK_MS, 'STREAMS', this.stream, from)) as
          | [string, [string, string[]][]][]
          | null;
        if (reply === null) continue;
        entries = reply[0][1];
        if (entries.length === 0) continue;
      }
      for (const e of entries) this.#buffer.push(e);
      from = entries[entries.length - 1][0];
      this.#wakePoll();
      while (this.#buffer.length - this.#head >= BUFFER_LIMIT && !this.#closed) {
        await new Promise<void>((r) => {
          this.#wake = r;
        });
      }
    }
    this.#done = true;
    this.#wakePoll();
  }

  /** Resolves the `wake` promise handed out by the last idle poll (entries arrived, end or error). */
  #wakePoll(): void {
    const wake = this.#arrived;
    if (wake === null) return;
    this.#arrived = null;
    this.#arrivedPromise = null;
    wake();
  }

  poll(out: Collector<T>, max: number): PollResult {
    if (this.#error !== null) throw this.#error;
    const available = this.#buffer.length - this.#head;
    if (available === 0) {
      // Unbounded without a split (subtasks other than 0): idle for good, as before.
      if (this.#done && this.bounded) return END;
      this.#arrivedPromise ??= new Promise<void>((resolve) => {
        this.#arrived = resolve;
      });
      return { state: 'idle', ms: IDLE_MS, wake: this.#arrivedPromise };
    }
    const split = this.splits[0];
    const take = Math.min(max, available);
    for (let i = 0; i < take; i++) {
      const [id, fields] = this.#buffer[this.#head++];
      split.last = id;
      out.collect(this.#record(id, fields));
    }
    if (this.#head === this.#buffer.length) {
      this.#buffer.length = 0;
      this.#head = 0;
    } else if (this.#head >= BUFFER_LIMIT) {
      // Never drained to empty while entries keep coming: drop the emitted ones, or the array
      // would hold every entry ever read.
      this.#buffer.splice(0, this.#head);
      this.#head = 0;
    }
    if (this.#wake !== null) {
      const w = this.#wake;
      this.#wake = null;
      w();
    }
    return MORE;
  }

  #record(id: string, fields: string[]): T {
    const at = fields.indexOf('data');
    if (at < 0 || at % 2 !== 0) throw new RedisStreamError(this.stream, `entry ${id} has no field "data"`);
    let data: unknown;
    try {
      data = JSON.parse(fields[at + 1]);
    } catch (error) {
      throw new RedisStreamError(this.stream, `entry ${id}: field "data" is not JSON`, { cause: error });
    }
    return (this.withMetadata ? { id, data } : data) as T;
  }

  snapshotState(): unknown[] {
    return this.splits.map((s) => ({ stream: s.stream, last: s.last, end: s.end }));
  }

  close(): void {
    this.#closed = true;
    this.#wake?.();
    // Not QUIT: it would wait behind a blocked XREAD for up to BLOCK_MS.
    this.#redis?.disconnect();
  }
}
