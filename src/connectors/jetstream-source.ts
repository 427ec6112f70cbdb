/**
 * `sources.jetstream({ servers, stream, filterSubjects?, bounded?, format?, withMetadata? })`:
 * reads a NATS JetStream stream. Replayable, so exactly-once under checkpointing.
 *
 * Splits: one split per entry of `filterSubjects` (each may be a wildcard), or one split reading
 * the whole stream when none is given. On a fresh start split `i` goes to subtask
 * `i mod parallelism`, so a stream read without filter subjects is read by one subtask (the
 * others stay idle, or end at once when bounded). Give disjoint filter subjects to read in
 * parallel; overlapping ones would read a message twice.
 *
 * Positions: each split's position (the next stream sequence to emit) is one operator-state
 * entry, snapshotted in the same synchronous step as the barrier. After a restore (any
 * parallelism: the runtime redistributes the entries) each split is read again from its next
 * sequence through an ordered consumer (ephemeral, no acks, recreated by the client after a gap
 * or a lost heartbeat). Nothing the broker holds decides what is replayed.
 *
 * Bounded: the stream's last sequence observed at the first start is each split's end
 * (inclusive) and part of the split state, so a restore ends at the same place. A split ends at
 * a message with sequence >= end, or when the broker reports nothing more pending for its filter.
 *
 * Backpressure: messages arrive asynchronously into a per-split buffer of at most
 * {@link BUFFER_LIMIT} messages; the reader stops taking from the consumer when it is full, so
 * the consumer's own pull window ({@link PULL_BATCH}) bounds what is in flight.
 *
 * Failures: the connection is opened in `createReader` asynchronously; a failure (server down, a
 * missing stream, a lost consumer) is recorded and thrown by the next `poll` as a
 * {@link JetStreamSourceError} (`JetStreamStreamNotFoundError` for a missing stream), which fails
 * the task: the job restarts from its latest checkpoint. A dropped connection is reconnected by
 * the client; the ordered consumer resumes after the last message it delivered.
 *
 * Why one file: the options, split assignment and restore, payload decoding and the reader (one
 * ordered consumer per split, buffering, positions) form one connector and share its constants.
 */

import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Collector } from '../api/functions.js';
import type { PollResult, Source, SourceContext, SourceLag, SourceReader } from '../api/source.js';
import { InvalidOptionError, JetStreamSourceError, JetStreamStreamNotFoundError } from '../errors.js';
import { loadNats, natsIfLoaded } from './client-libraries.js';

export type JetStreamFormat = 'json' | 'string' | 'bytes';

export interface JetStreamSourceOptions {
  /** Server URL(s), e.g. `nats://127.0.0.1:4222`. */
  readonly servers: string | readonly string[];
  /** An existing stream (the source does not create it). */
  readonly stream: string;
  /** One split per subject filter (wildcards allowed; keep them disjoint). Default: the whole stream. */
  readonly filterSubjects?: readonly string[];
  /** Read up to the stream's last sequence at the first start, then end (default `false`). */
  readonly bounded?: boolean;
  /** Payload decoding (default `json`). */
  readonly format?: JetStreamFormat;
  /** Emit `{ subject, seq, timestamp, data }` instead of the decoded payload (default `false`). */
  readonly withMetadata?: boolean;
}

/** A record with `withMetadata: true`. `timestamp`: the broker's store time in ms since the epoch. */
export interface JetStreamRecord<T = unknown> {
  readonly subject: string;
  readonly seq: number;
  readonly timestamp: number;
  readonly data: T;
}

/** Operator-state entry: one split and how far it has been read. */
export interface JetStreamSplit {
  readonly stream: string;
  /** The split's subject filter; `null` reads the whole stream. */
  readonly filter: string | null;
  /** Next stream sequence to emit. */
  next: number;
  /** Bounded: the last stream sequence to emit (inclusive); `null` when unbounded. */
  end: number | null;
}

/** Messages buffered per split before the reader stops taking from the consumer. */
export const BUFFER_LIMIT = 4096;
/** The consumer's pull window (messages requested from the server at a time). */
export const PULL_BATCH = 1024;
/**
 * Lifetime of one pull request (the server's idle heartbeat is half of it). A pull lost with a
 * dropped connection is noticed by missed heartbeats, after which the ordered consumer is
 * recreated from the last delivered sequence: this bounds how long a reader stalls after a
 * reconnect (the client's default, 30 s, stalled it for longer than that).
 */
export const PULL_EXPIRES_MS = 4000;
/** How long an empty reader waits before polling again. */
export const IDLE_MS = 5;

const MORE: PollResult = { state: 'more' };
const END: PollResult = { state: 'end' };
const IDLE: PollResult = { state: 'idle', ms: IDLE_MS };

export function jetstreamSource<T = unknown>(options: JetStreamSourceOptions): Source<T> {
  const o = options ?? ({} as JetStreamSourceOptions);
  const servers = typeof o.servers === 'string' ? [o.servers] : o.servers;
  if (
    !Array.isArray(servers) ||
    servers.length === 0 ||
    servers.some((s) => typeof s !== 'string' || s === '')
  ) {
    throw new InvalidOptionError('sources.jetstream.servers', `must be a URL or a non-empty array of URLs`);
  }
  if (typeof o.stream !== 'string' || o.stream.length === 0) {
    throw new InvalidOptionError(
      'sources.jetstream.stream',
      `must be a non-empty string, got ${String(o.stream)}`,
    );
  }
  const filters = o.filterSubjects;
  if (
    filters !== undefined &&
    (!Array.isArray(filters) ||
      filters.length === 0 ||
      filters.some((s) => typeof s !== 'string' || s === ''))
  ) {
    throw new InvalidOptionError('sources.jetstream.filterSubjects', 'must be a non-empty array of subjects');
  }
  if (filters !== undefined && new Set(filters).size !== filters.length) {
    throw new InvalidOptionError('sources.jetstream.filterSubjects', 'holds a subject twice');
  }
  const format = o.format ?? 'json';
  if (format !== 'json' && format !== 'string' && format !== 'bytes') {
    throw new InvalidOptionError(
      'sources.jetstream.format',
      `must be 'json', 'string' or 'bytes', got ${String(format)}`,
    );
  }
  const bounded = o.bounded ?? false;
  if (typeof bounded !== 'boolean') {
    throw new InvalidOptionError('sources.jetstream.bounded', `must be a boolean, got ${String(bounded)}`);
  }
  const withMetadata = o.withMetadata ?? false;
  const stream = o.stream;
  const splitFilters: (string | null)[] = filters === undefined ? [null] : [...filters];
  return {
    type: 'jetstream',
    bounded,
    createReader(ctx: SourceContext): SourceReader<T> {
      const restored =
        ctx.restoredState === undefined ? undefined : ctx.restoredState.map((e) => restoredSplit(e, stream));
      const mine =
        restored === undefined
          ? initialJetStreamSplits(splitFilters.length, ctx.subtaskIndex, ctx.parallelism).map(
              (i) => splitFilters[i],
            )
          : undefined;
      return new JetStreamReader<T>({ servers, stream, bounded, format, withMetadata }, mine, restored);
    },
  };
}

/** Split indexes subtask `subtask` of `parallelism` reads on a fresh start: `i mod parallelism === subtask`. */
export function initialJetStreamSplits(splits: number, subtask: number, parallelism: number): number[] {
  const out: number[] = [];
  for (let i = subtask; i < splits; i += parallelism) out.push(i);
  return out;
}

function restoredSplit(entry: unknown, stream: string): JetStreamSplit {
  const s = entry as Partial<JetStreamSplit> | null;
  if (
    typeof s !== 'object' ||
    s === null ||
    !(s.filter === null || typeof s.filter === 'string') ||
    !Number.isSafeInteger(s.next) ||
    !(s.end === null || Number.isSafeInteger(s.end))
  ) {
    throw new InvalidOptionError(
      'sources.jetstream',
      'restored state holds an entry that is not a JetStream split',
    );
  }
  if (s.stream !== stream) {
    throw new InvalidOptionError(
      'sources.jetstream.stream',
      `the checkpoint holds positions of stream "${String(s.stream)}", the source reads "${stream}"`,
    );
  }
  return { stream, filter: s.filter!, next: s.next!, end: s.end! };
}

/** Decodes one payload. A JSON payload that does not parse fails the task, naming the message. */
export function decodePayload(data: Uint8Array, format: JetStreamFormat, where: string): unknown {
  if (format === 'bytes') return data;
  const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
  if (format === 'string') return text;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new JetStreamSourceError(where, 'payload is not valid JSON (use format: string or bytes)', {
      cause: error,
    });
  }
}

interface ReaderConfig {
  readonly servers: readonly string[];
  readonly stream: string;
  readonly bounded: boolean;
  readonly format: JetStreamFormat;
  readonly withMetadata: boolean;
}

interface LiveSplit {
  readonly split: JetStreamSplit;
  readonly buffer: JsMsg[];
  /** Position in `buffer` of the next message to emit (avoids shifting). */
  head: number;
  /** Bounded: no more messages at or below `end` will come. */
  done: boolean;
  /** Broker-reported messages after the last delivered one (consumer lag), -1 before the first. */
  pending: number;
  /** Resolves the fetch loop's wait for buffer space. */
  wake: (() => void) | null;
  messages: ConsumerMessages | null;
}

class JetStreamReader<T> implements SourceReader<T> {
  readonly #cfg: ReaderConfig;
  readonly #splits: LiveSplit[];
  #ready = false;
  #error: unknown = null;
  #closed = false;
  #nc: NatsConnection | null = null;
  #current = 0;

  constructor(
    cfg: ReaderConfig,
    fresh: (string | null)[] | undefined,
    restored: JetStreamSplit[] | undefined,
  ) {
    this.#cfg = cfg;
    // The splits exist from the start, so a snapshot taken before the connection is up still
    // names every split this subtask owns. A fresh split starts at sequence 1 (the consumer
    // delivers from the first retained message); its bounded end is observed once connected.
    const splits: JetStreamSplit[] =
      restored ?? (fresh ?? []).map((filter) => ({ stream: cfg.stream, filter, next: 1, end: null }));
    this.#splits = splits.map((split) => ({
      split,
      buffer: [],
      head: 0,
      done: false,
      pending: -1,
      wake: null,
      messages: null,
    }));
    this.#start().catch((error: unknown) => this.#fail(error));
  }

  #fail(error: unknown): void {
    if (this.#closed || this.#error !== null) return;
    if (isStreamNotFound(error)) {
      this.#error = new JetStreamStreamNotFoundError(this.#cfg.stream, { cause: error });
    } else if (error instanceof JetStreamSourceError || error instanceof JetStreamStreamNotFoundError) {
      this.#error = error;
    } else {
      this.#error = new JetStreamSourceError(
        `stream "${this.#cfg.stream}"`,
        `reading failed: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  async #start(): Promise<void> {
    const { transport, jetstream: natsJs } = await loadNats();
    const nc = await transport.connect({
      servers: [...this.#cfg.servers],
      name: `weir:jetstream-source:${this.#cfg.stream}`,
    });
    this.#nc = nc;
    if (this.#closed) {
      await nc.close();
      return;
    }
    const jsm = await natsJs.jetstreamManager(nc);
    const info = await jsm.streams.info(this.#cfg.stream);
    for (const live of this.#splits) {
      const split = live.split;
      // A bounded split restored into an unbounded source reads on; an unbounded one restored
      // into a bounded source (or a fresh one) ends at the last sequence observed now.
      if (!this.#cfg.bounded) split.end = null;
      else if (split.end === null) split.end = info.state.last_seq;
      live.done = split.end !== null && split.next > split.end;
    }
    const js = natsJs.jetstream(nc);
    for (const live of this.#splits) {
      if (live.done) continue;
      const consumer = await js.consumers.get(this.#cfg.stream, {
        ...(live.split.filter === null ? {} : { filter_subjects: live.split.filter }),
        deliver_policy: natsJs.DeliverPolicy.StartSequence,
        opt_start_seq: live.split.next,
      });
      if (this.#cfg.bounded) {
        const ci = await consumer.info();
        if (ci.num_pending === 0) live.done = true;
      }
      if (!live.done) this.#pump(live, consumer).catch((error: unknown) => this.#fail(error));
    }
    this.#ready = true;
  }

  /** Moves messages from the consumer into the split's buffer, waiting while the buffer is full. */
  async #pump(live: LiveSplit, consumer: Consumer): Promise<void> {
    const messages = await consumer.consume({ max_messages: PULL_BATCH, expires: PULL_EXPIRES_MS });
    live.messages = messages;
    if (this.#closed) {
      await messages.close();
      return;
    }
    for await (const m of messages) {
      if (this.#closed) break;
      const end = live.split.end;
      if (end !== null && m.seq > end) {
        live.done = true;
        break;
      }
      live.buffer.push(m);
      live.pending = m.info.pending;
      if (end !== null && (m.seq >= end || m.info.pending === 0)) {
        live.done = true;
        break;
      }
      while (live.buffer.length - live.head >= BUFFER_LIMIT && !this.#closed) {
        await new Promise<void>((resolve) => {
          live.wake = resolve;
        });
      }
    }
    if (live.done || this.#closed) await messages.close();
    else throw new JetStreamSourceError(`stream "${this.#cfg.stream}"`, 'the consumer stopped delivering');
  }

  poll(out: Collector<T>, max: number): PollResult {
    if (this.#error !== null) throw this.#error;
    if (!this.#ready || max < 1) return this.#ready ? MORE : IDLE;
    const n = this.#splits.length;
    let unfinished = 0;
    for (let i = 0; i < n; i++) {
      const index = (this.#current + i) % n;
      const live = this.#splits[index];
      const available = live.buffer.length - live.head;
      if (available === 0) {
        if (!live.done) unfinished++;
        continue;
      }
      unfinished++;
      const take = Math.min(max, available);
      for (let k = 0; k < take; k++) {
        const m = live.buffer[live.head];
        live.buffer[live.head] = undefined as unknown as JsMsg;
        live.head++;
        // `next` advances per record so that a snapshot after a failure in chained downstream
        // code still names exactly the records that were emitted.
        live.split.next = m.seq + 1;
        out.collect(this.#record(m));
      }
      if (live.head === live.buffer.length) {
        live.buffer.length = 0;
        live.head = 0;
      } else if (live.head > BUFFER_LIMIT) {
        live.buffer.splice(0, live.head);
        live.head = 0;
      }
      if (live.wake !== null && live.buffer.length - live.head < BUFFER_LIMIT) {
        const wake = live.wake;
        live.wake = null;
        wake();
      }
      this.#current = (index + 1) % n;
      return MORE;
    }
    return this.#cfg.bounded && unfinished === 0 ? END : IDLE;
  }

  #record(m: JsMsg): T {
    const data = decodePayload(m.data, this.#cfg.format, `stream "${this.#cfg.stream}" seq ${m.seq}`);
    if (!this.#cfg.withMetadata) return data as T;
    return {
      subject: m.subject,
      seq: m.seq,
      timestamp: Math.floor(m.info.timestampNanos / 1e6),
      data,
    } as T;
  }

  snapshotState(): unknown[] {
    return this.#splits.map((l) => ({
      stream: l.split.stream,
      filter: l.split.filter,
      next: l.split.next,
      end: l.split.end,
    }));
  }

  /**
   * Messages the broker holds beyond what this subtask has emitted (buffered + pending, as the
   * broker reported with the last delivery); unknown until a consumer reported once. A gauge: it
   * is exported as `weir_source_lag_records` only, never among the operator counters (`metrics()`,
   * exported as the counter `weir_operator_counter_total`, so it must hold counters only).
   */
  lag(): SourceLag | undefined {
    let value = 0;
    let known = false;
    for (const l of this.#splits) {
      if (l.pending < 0) continue;
      known = true;
      value += l.pending + (l.buffer.length - l.head);
    }
    return known ? { value, unit: 'records' } : undefined;
  }

  close(): void {
    this.#closed = true;
    for (const l of this.#splits) {
      if (l.wake !== null) l.wake();
      l.messages?.close().catch((error: unknown) => {
        console.warn('weir: sources.jetstream: closing a consumer failed:', error);
      });
    }
    const nc = this.#nc;
    if (nc !== null) {
      nc.close().catch((error: unknown) => {
        console.warn('weir: sources.jetstream: closing the connection failed:', error);
      });
    }
  }
}

/** Whether a JetStream API error says the stream does not exist. */
export function isStreamNotFound(error: unknown): boolean {
  const nats = natsIfLoaded(); // not loaded: the error cannot come from the JetStream API
  return (
    nats !== null &&
    error instanceof nats.jetstream.JetStreamApiError &&
    error.code === nats.jetstream.JetStreamApiCodes.StreamNotFound
  );
}
