/**
 * `sinks.jetstream({ servers, subject, format?, writer? })`: publishes records to NATS JetStream. A
 * committing sink (`src/api/committing-sink.ts`).
 *
 * Exactly-once (checkpointing `exactly-once`): the records written since the last barrier are
 * encoded at the barrier and stored in the checkpoint as the committable; once the checkpoint
 * completed the committer publishes them, each with the deterministic message id
 * `<writer>/<nonce>/<subtask>/<checkpoint>/<index>` (`Nats-Msg-Id`), and awaits every ack. A
 * commit retried after a crash (also from another process after `--restore latest`) publishes the
 * same ids, and the stream drops the ones it already holds. The nonce is random per writer
 * instance and travels in the committable, so a fresh start (whose checkpoint ids restart at 1)
 * never collides with an older run's ids.
 *
 * The bound this puts on recovery: the stream de-duplicates within its `duplicate_window`
 * (default 2 minutes). A commit retried later than that after its first attempt (a long outage,
 * or a restore from an old checkpoint whose commit half-happened) publishes duplicates. Keep the
 * time from a failure to the restored commit below the window, or raise the window.
 *
 * At-least-once (or no checkpointing): publishes as records arrive (acks awaited in windows of
 * {@link WINDOW}); a barrier's pre-commit resolves once every publish so far is acknowledged.
 *
 * Failures: a publish without a stream for its subject, or a server that does not answer, fails
 * the commit (`JetStreamSinkError`); the commit is retried with backoff (`commitRetry`), then the
 * task fails and the job restarts from its latest checkpoint and commits again.
 */

import { randomBytes } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type {
  CommitContext,
  CommitRetryOptions,
  Committer,
  CommittingSink,
  CommittingSinkWriter,
} from '../api/committing-sink.js';
import { InvalidOptionError, JetStreamSinkError } from '../errors.js';
import { loadNats } from './client-libraries.js';
import { custom } from './custom-sink.js';
import type { JetStreamFormat } from './jetstream-source.js';
import { WriteThroughWriter } from './write-through-writer.js';

export interface JetStreamSinkOptions<T> {
  /** Server URL(s), e.g. `nats://127.0.0.1:4222`. */
  readonly servers: string | readonly string[];
  /** The subject of every record, or a function of the record. A stream must capture it. */
  readonly subject: string | ((record: T) => string);
  /** Payload encoding (default `json`; `string` takes strings, `bytes` Uint8Arrays). */
  readonly format?: JetStreamFormat;
  /** Prefix of the message ids (default `<operator name>`). */
  readonly writer?: string;
  readonly commitRetry?: CommitRetryOptions;
}

/** Committable of one checkpoint of one subtask. */
export interface JetStreamTransaction {
  /** `<writer>/<nonce>/<subtask>`; the message id adds `/<checkpoint>/<index>`. */
  readonly idPrefix: string;
  readonly subjects: readonly string[];
  readonly payloads: readonly Uint8Array[];
}

/** Publishes awaited together (in flight at once). */
export const WINDOW = 1024;

export function jetstreamSink<T = unknown>(
  options: JetStreamSinkOptions<T>,
): CommittingSink<T, JetStreamTransaction> {
  const o = options ?? ({} as JetStreamSinkOptions<T>);
  const servers = typeof o.servers === 'string' ? [o.servers] : o.servers;
  if (
    !Array.isArray(servers) ||
    servers.length === 0 ||
    servers.some((s) => typeof s !== 'string' || s === '')
  ) {
    throw new InvalidOptionError('sinks.jetstream.servers', 'must be a URL or a non-empty array of URLs');
  }
  const subject = o.subject;
  if (!((typeof subject === 'string' && subject.length > 0) || typeof subject === 'function')) {
    throw new InvalidOptionError(
      'sinks.jetstream.subject',
      'must be a non-empty string or a function of the record',
    );
  }
  const format = o.format ?? 'json';
  if (format !== 'json' && format !== 'string' && format !== 'bytes') {
    throw new InvalidOptionError(
      'sinks.jetstream.format',
      `must be 'json', 'string' or 'bytes', got ${String(format)}`,
    );
  }
  const subjectOf = typeof subject === 'string' ? () => subject : subject;
  const encode = encoder(format);
  const label = typeof subject === 'string' ? subject : '(per record)';
  const sink = custom<T, JetStreamTransaction>({
    name: 'jetstream',
    ...(o.commitRetry ? { commitRetry: o.commitRetry } : {}),
    createWriter(ctx) {
      const idPrefix = `${o.writer ?? ctx.operatorName}/${randomBytes(6).toString('hex')}/${ctx.subtaskIndex}`;
      return ctx.checkpointingMode === 'exactly-once'
        ? new StagingWriter<T>(idPrefix, subjectOf, encode, label)
        : new DirectWriter<T>(new Connection(servers, label), subjectOf, encode, label);
    },
    createCommitter(): Committer<JetStreamTransaction> {
      const conn = new Connection(servers, label);
      return {
        async commit(tx, cctx) {
          const js = await conn.get();
          await publishAll(js, tx, cctx, label);
        },
        close: () => conn.close(),
      };
    },
  });
  return {
    ...sink,
    type: 'jetstream',
    // Read-back needs to know the subject: a function of the record has none to filter on.
    ...(typeof subject === 'string'
      ? { readCommitted: () => readCommittedMessages(servers, subject, format) }
      : {}),
  };
}

/**
 * Every message the stream that captures `subject` holds on that subject, decoded as the sink
 * encoded it, in stream order. For `weir verify` (main thread, after a run): an ordered consumer
 * filtered on the subject reads until nothing is pending. A subject that no stream captures, or a
 * server that does not answer, throws a JetStreamSinkError. Cost: the whole subject, O(messages).
 */
async function readCommittedMessages(
  servers: readonly string[],
  subject: string,
  format: JetStreamFormat,
): Promise<unknown[]> {
  const { transport, jetstream } = await loadNats();
  let nc: NatsConnection;
  try {
    nc = await transport.connect({ servers: [...servers], name: `weir:jetstream-sink:read:${subject}` });
  } catch (error) {
    throw publishError(subject, 'connecting to read back', error);
  }
  try {
    const jsm = await jetstream.jetstreamManager(nc);
    const stream = await jsm.streams.find(subject);
    const consumer = await jsm.jetstream().consumers.get(stream, {
      // A string: sent as `filter_subject`, which servers before 2.10 understand too.
      filter_subjects: subject,
    });
    const out: unknown[] = [];
    if ((await consumer.info()).num_pending === 0) return out;
    const messages = await consumer.consume();
    for await (const m of messages) {
      out.push(format === 'json' ? m.json() : format === 'string' ? m.string() : m.data);
      if (m.info.pending === 0) break;
    }
    await messages.close();
    return out;
  } catch (error) {
    throw publishError(subject, 'reading back the committed messages', error);
  } finally {
    await nc.close();
  }
}

function encoder(format: JetStreamFormat): (record: unknown) => Uint8Array {
  if (format === 'bytes') {
    return (r) => {
      if (!(r instanceof Uint8Array))
        throw new TypeError(`format 'bytes' takes Uint8Array records, got ${typeof r}`);
      return r;
    };
  }
  if (format === 'string') {
    return (r) => {
      if (typeof r !== 'string') throw new TypeError(`format 'string' takes string records, got ${typeof r}`);
      return Buffer.from(r, 'utf8');
    };
  }
  return (r) => {
    const s = JSON.stringify(r);
    if (s === undefined) throw new TypeError(`record has no JSON form (${typeof r})`);
    return Buffer.from(s, 'utf8');
  };
}

/** The message id of message `index` of checkpoint `checkpointId`'s committable. */
export function messageId(idPrefix: string, checkpointId: number, index: number): string {
  return `${idPrefix}/${checkpointId}/${index}`;
}

/** Publishes a committable with deterministic ids, {@link WINDOW} at a time; every ack awaited. */
async function publishAll(
  js: JetStreamClient,
  tx: JetStreamTransaction,
  ctx: CommitContext,
  label: string,
): Promise<void> {
  for (let i = 0; i < tx.payloads.length; i += WINDOW) {
    const acks: Promise<unknown>[] = [];
    const end = Math.min(tx.payloads.length, i + WINDOW);
    for (let k = i; k < end; k++) {
      acks.push(
        js.publish(tx.subjects[k], tx.payloads[k], { msgID: messageId(tx.idPrefix, ctx.checkpointId, k) }),
      );
    }
    try {
      await Promise.all(acks);
    } catch (error) {
      throw publishError(label, `committing checkpoint ${ctx.checkpointId}`, error);
    }
  }
}

function publishError(label: string, what: string, error: unknown): JetStreamSinkError {
  const message = error instanceof Error ? error.message : String(error);
  const hint = /no responders|503/i.test(message) ? ' (no stream captures the subject?)' : '';
  return new JetStreamSinkError(label, `${what}: ${message}${hint}`, { cause: error });
}

/** A lazily opened connection; a failed connect is retried by the next call. */
class Connection {
  #nc: Promise<NatsConnection> | null = null;
  constructor(
    readonly servers: readonly string[],
    readonly label: string,
  ) {}

  async get(): Promise<JetStreamClient> {
    this.#nc ??= loadNats().then(({ transport }) =>
      transport.connect({ servers: [...this.servers], name: `weir:jetstream-sink:${this.label}` }),
    );
    try {
      const { jetstream } = await loadNats();
      return jetstream.jetstream(await this.#nc);
    } catch (error) {
      this.#nc = null;
      throw publishError(this.label, 'connecting', error);
    }
  }

  async close(): Promise<void> {
    const nc = this.#nc;
    this.#nc = null;
    if (nc === null) return;
    const c = await nc.catch(() => null);
    await c?.close();
  }
}

class StagingWriter<T> implements CommittingSinkWriter<T, JetStreamTransaction> {
  #subjects: string[] = [];
  #payloads: Uint8Array[] = [];
  constructor(
    readonly idPrefix: string,
    readonly subjectOf: (r: T) => string,
    readonly encode: (r: unknown) => Uint8Array,
    readonly label: string,
  ) {}

  write(record: T): void {
    let subject: string;
    let payload: Uint8Array;
    try {
      subject = this.subjectOf(record);
      payload = this.encode(record);
    } catch (error) {
      throw new JetStreamSinkError(this.label, `cannot encode a record: ${(error as Error).message}`, {
        cause: error,
      });
    }
    this.#subjects.push(subject);
    this.#payloads.push(payload);
  }

  preCommit(): JetStreamTransaction | undefined {
    if (this.#payloads.length === 0) return undefined;
    const tx = { idPrefix: this.idPrefix, subjects: this.#subjects, payloads: this.#payloads };
    this.#subjects = [];
    this.#payloads = [];
    return tx;
  }
}

/** At-least-once / no checkpointing: publishes as records arrive (see WriteThroughWriter). */
class DirectWriter<T> extends WriteThroughWriter<T, { subject: string; payload: Uint8Array }> {
  #js: JetStreamClient | null = null;

  constructor(
    readonly conn: Connection,
    readonly subjectOf: (r: T) => string,
    readonly encode: (r: unknown) => Uint8Array,
    readonly label: string,
  ) {
    super(WINDOW);
  }

  protected item(record: T): { subject: string; payload: Uint8Array } {
    return { subject: this.subjectOf(record), payload: this.encode(record) };
  }

  protected async send(chunk: { subject: string; payload: Uint8Array }[]): Promise<void> {
    this.#js ??= await this.conn.get();
    const js = this.#js;
    await Promise.all(chunk.map((m) => js.publish(m.subject, m.payload)));
  }

  protected sendError(error: unknown): unknown {
    return publishError(this.label, 'publishing', error);
  }

  protected closeClient(): Promise<void> {
    return this.conn.close();
  }
}
