/**
 * `sinks.redisStream({ url, stream, writer? })`: appends records to a Redis stream (`XADD stream *
 * data <json>`). A committing sink (`src/api/committing-sink.ts`).
 *
 * Exactly-once (checkpointing `exactly-once`): the records written since the last barrier are
 * JSON-encoded at the barrier and stored in the checkpoint; once the checkpoint completed the
 * committer runs one Lua script that compares the marker key `weir:sink:<writer>/<nonce>/<subtask>`
 * with the checkpoint id, and only when the marker is older XADDs every record and sets the
 * marker. A script runs atomically, so a commit retried after a crash appends nothing twice. The
 * nonce is per writer instance and travels in the committable (a fresh start restarts checkpoint
 * ids at 1). Marker keys expire after 7 days.
 *
 * At-least-once (or no checkpointing): XADDs as records arrive (pipelined per barrier or 1024
 * records); a pre-commit resolves once they are all acknowledged.
 *
 * Failures: Redis down makes the commit fail (`RedisStreamError`), it is retried with backoff,
 * then the task fails and the job restarts from its latest checkpoint and commits again.
 */

import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type {
  CommitRetryOptions,
  Committer,
  CommittingSink,
  CommittingSinkWriter,
} from '../api/committing-sink.js';
import { InvalidOptionError, RedisStreamError } from '../errors.js';
import { loadIoredis } from './client-libraries.js';
import { custom } from './custom-sink.js';
import { WriteThroughWriter } from './write-through-writer.js';

export interface RedisStreamSinkOptions {
  /** e.g. `redis://127.0.0.1:6379`. */
  readonly url: string;
  /** The stream key (created by the first XADD). */
  readonly stream: string;
  /** Marker name prefix (default `<stream>:<operator name>`). */
  readonly writer?: string;
  readonly commitRetry?: CommitRetryOptions;
}

export interface RedisStreamTransaction {
  readonly markerKey: string;
  /** JSON of each record, stored as field `data`. */
  readonly payloads: readonly string[];
}

const CHUNK = 1024;
const MARKER_TTL_S = 7 * 24 * 3600;

/** KEYS: stream, marker. ARGV: checkpoint id, ttl, payloads... Returns 1 when it appended. */
const COMMIT_SCRIPT = `
local m = tonumber(redis.call('GET', KEYS[2]) or '-1')
if m >= tonumber(ARGV[1]) then return 0 end
for i = 3, #ARGV do redis.call('XADD', KEYS[1], '*', 'data', ARGV[i]) end
redis.call('SET', KEYS[2], ARGV[1], 'EX', tonumber(ARGV[2]))
return 1
`;

export function redisStreamSink<T = unknown>(
  options: RedisStreamSinkOptions,
): CommittingSink<T, RedisStreamTransaction> {
  const o = options ?? ({} as RedisStreamSinkOptions);
  if (typeof o.url !== 'string' || o.url.length === 0) {
    throw new InvalidOptionError('sinks.redisStream.url', `must be a redis:// URL, got ${String(o.url)}`);
  }
  if (typeof o.stream !== 'string' || o.stream.length === 0) {
    throw new InvalidOptionError(
      'sinks.redisStream.stream',
      `must be a non-empty string, got ${String(o.stream)}`,
    );
  }
  const stream = o.stream;
  const sink = custom<T, RedisStreamTransaction>({
    name: 'redisStream',
    ...(o.commitRetry ? { commitRetry: o.commitRetry } : {}),
    createWriter(ctx) {
      const markerKey = `weir:sink:${o.writer ?? `${stream}:${ctx.operatorName}`}/${randomBytes(6).toString('hex')}/${ctx.subtaskIndex}`;
      return ctx.checkpointingMode === 'exactly-once'
        ? new StagingWriter<T>(markerKey, stream)
        : new DirectWriter<T>(connectRedis(o.url), stream);
    },
    createCommitter(): Committer<RedisStreamTransaction> {
      let redis: Redis | null = null;
      return {
        async commit(tx, cctx) {
          redis ??= await connectRedis(o.url);
          try {
            await redis.eval(
              COMMIT_SCRIPT,
              2,
              stream,
              tx.markerKey,
              cctx.checkpointId,
              MARKER_TTL_S,
              ...tx.payloads,
            );
          } catch (error) {
            throw new RedisStreamError(
              stream,
              `committing checkpoint ${cctx.checkpointId}: ${(error as Error).message}`,
              {
                cause: error,
              },
            );
          }
        },
        async close() {
          await redis?.quit().catch(() => redis?.disconnect());
        },
      };
    },
  });
  return { ...sink, type: 'redisStream', readCommitted: () => readCommittedEntries(o.url, stream) };
}

/**
 * Every entry of the stream (XRANGE, pages of {@link CHUNK}), its `data` field parsed as JSON, in
 * stream order; a missing stream has none. For `weir verify` (main thread, after a run). A read
 * that fails throws a RedisStreamError. Cost: the whole stream, O(entries).
 */
async function readCommittedEntries(url: string, stream: string): Promise<unknown[]> {
  const redis = await connectRedis(url);
  try {
    const out: unknown[] = [];
    let from = '-';
    for (;;) {
      const page = await redis.xrange(stream, from, '+', 'COUNT', CHUNK);
      for (const [, fields] of page) {
        const i = fields.indexOf('data');
        if (i < 0 || i % 2 !== 0) throw new Error(`entry without a data field: ${JSON.stringify(fields)}`);
        out.push(JSON.parse(fields[i + 1]));
      }
      if (page.length < CHUNK) return out;
      from = `(${page[page.length - 1][0]}`;
    }
  } catch (error) {
    throw new RedisStreamError(stream, `reading back the committed entries: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** A client that fails commands at once while disconnected (the committer's retries decide). */
/** `connectionName`: the `CLIENT SETNAME` of the connection (what `CLIENT LIST` shows as `name`). */
export async function connectRedis(url: string, connectionName?: string): Promise<Redis> {
  const { Redis } = await loadIoredis();
  const redis = new Redis(url, {
    lazyConnect: false,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    connectionName,
  });
  redis.on('error', (error: Error) => {
    console.warn(`weir: redis ${url}: ${error.message}`);
  });
  return redis;
}

function encode(stream: string, record: unknown): string {
  const s = JSON.stringify(record);
  if (s === undefined) throw new RedisStreamError(stream, `a record has no JSON form (${typeof record})`);
  return s;
}

class StagingWriter<T> implements CommittingSinkWriter<T, RedisStreamTransaction> {
  #payloads: string[] = [];
  constructor(
    readonly markerKey: string,
    readonly stream: string,
  ) {}
  write(record: T): void {
    this.#payloads.push(encode(this.stream, record));
  }
  preCommit(): RedisStreamTransaction | undefined {
    if (this.#payloads.length === 0) return undefined;
    const tx = { markerKey: this.markerKey, payloads: this.#payloads };
    this.#payloads = [];
    return tx;
  }
}

/** At-least-once / no checkpointing: XADDs as records arrive (see WriteThroughWriter). */
class DirectWriter<T> extends WriteThroughWriter<T, string> {
  constructor(
    /** Connecting (ioredis loads on first use); a failed load fails the first send. */
    readonly redis: Promise<Redis>,
    readonly stream: string,
  ) {
    super(CHUNK);
    this.redis.catch(() => undefined); // handled where awaited (send, close)
  }
  protected item(record: T): string {
    return encode(this.stream, record);
  }
  protected async send(chunk: string[]): Promise<void> {
    const p = (await this.redis).pipeline();
    for (const data of chunk) p.xadd(this.stream, '*', 'data', data);
    const results = (await p.exec()) ?? [];
    const failed = results.find(([error]) => error !== null);
    if (failed) throw failed[0];
  }
  protected sendError(error: unknown): unknown {
    return new RedisStreamError(this.stream, `XADD failed: ${(error as Error).message}`, { cause: error });
  }
  protected async closeClient(): Promise<void> {
    const redis = await this.redis.catch(() => null);
    await redis?.quit().catch(() => redis.disconnect());
  }
}
