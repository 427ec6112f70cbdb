/**
 * RemoteEdgeSender: the producer end of one remote edge (one producer subtask → one consumer
 * subtask in another process), over core NATS. The wire is remote-edge-wire.ts; the receiver's
 * ordering rules are remote-edge-sequence.ts.
 *
 * Roles: used by one task (one thread). It owns its RecordCodec, like a ChannelWriter; the
 * NatsConnection is the caller's and may carry other flows.
 *
 * Protocol, producer side:
 * - Nothing is sent before the receiver's first `resume` (the handshake: a receiver that is not
 *   subscribed yet would lose it). Until then, and whenever the connection comes back, and when
 *   sent messages stay unacknowledged (or the window stays full) for `resyncAfterMs`, the sender
 *   publishes `sync`, which makes the receiver answer with a `resume`.
 * - `resume(g, nextSeq, consumed)` of a newer generation g: drop retained messages below nextSeq
 *   (the receiver has them), answer `resumed(g, firstSeq, producerNext)`, resend every retained
 *   message from nextSeq on in generation g, then continue. If nextSeq is below what is still
 *   retained or past what was ever sent, `resumed` says so (firstSeq ≠ nextSeq) and the receiver
 *   raises RemoteEdgeSequenceError: a gap is repaired or raised, never skipped.
 * - Credits: `credit(receivedNext, consumedBytes)` releases retained messages below receivedNext
 *   and grants the window: the bytes of data messages sent but not yet consumed never exceed
 *   `windowBytes` (one message larger than the window goes out alone when nothing is
 *   outstanding). A slow consumer therefore holds the producer: messages wait here, unsent, and
 *   {@link backlogged} tells the task to stop producing until {@link waitForCapacity} resolves.
 *
 * Memory: retained (sent, not yet received) ≤ windowBytes; unsent messages are bounded by the
 * caller checking {@link backlogged}, as with ChannelWriter (about one message beyond the window).
 *
 * Cost: one copy of each batch's encoded bytes into the message; no copy on publish (the message
 * buffer is never written again after its first publish; a resend patches a copy).
 *
 * One file (over 400 lines): the handshake, the resend and the credit window change the same
 * retained-message queue and sequence numbers; the wire and the receiver's rules already live
 * apart (remote-edge-wire.ts, remote-edge-sequence.ts).
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { ControlFrame } from '../channels/frame.js';
import { createControlScratch, encodeControlFrame } from '../channels/frame-codec.js';
import { FRAME_TAG } from '../channels/layout.js';
import { RecordCodec } from '../channels/record-codec.js';
import { ChannelClosedError, RecordTooLargeError, RemoteEdgeProtocolError } from '../errors.js';
import { RemoteEdgeLink } from './remote-edge-link.js';
import {
  encodeSmallMessage,
  MESSAGE_TYPE,
  type RemoteEdgeSubjects,
  readHeader,
  readSmallBody,
  remoteEdgeSubjects,
  WIRE_FRAME_HEADER_BYTES,
  WIRE_HEADER_BYTES,
  writeHeader,
} from './remote-edge-wire.js';

export interface RemoteEdgeSenderOptions {
  /** The caller's connection; not closed by the sender. */
  readonly connection: NatsConnection;
  /** The flow's name, one NATS token (remote-edge-wire.ts). Both ends use the same name. */
  readonly flow: string;
  /** Subject prefix. Default `weir.edge`. */
  readonly prefix?: string;
  /** Most bytes of data messages sent but not consumed. Default 1 MiB. */
  readonly windowBytes?: number;
  /** Records per encoded batch. Default 256. */
  readonly batchRecords?: number;
  /** A data message is published once it holds this many bytes (or on flush). Default 32 KiB. */
  readonly messageBytes?: number;
  /** Publish `sync` when sent messages stay unacknowledged (or the window full) this long. Default 1000 ms. */
  readonly resyncAfterMs?: number;
  /** See ChannelWriterOptions.shapeBatches. Default true. */
  readonly shapeBatches?: boolean;
}

interface OutMessage {
  readonly seq: number;
  /** Header + frames. Generation written at first publish; never written after it. */
  readonly bytes: Uint8Array;
  /** Cumulative bytes of data messages up to and including this one. */
  readonly end: number;
}

const LE = true;

export class RemoteEdgeSender {
  readonly flow: string;
  readonly subjects: RemoteEdgeSubjects;
  readonly windowBytes: number;
  readonly batchRecords: number;
  readonly messageBytes: number;
  readonly resyncAfterMs: number;
  readonly stats = {
    records: 0,
    messages: 0,
    bytes: 0,
    resent: 0,
    resumes: 0,
    syncs: 0,
    /** Times the window stopped the sender. */
    creditStalls: 0,
    /** Highest bytes sent but not consumed ever observed (≤ windowBytes, or one larger message). */
    maxOutstandingBytes: 0,
  };

  readonly #nc: NatsConnection;
  readonly #codec: RecordCodec;
  readonly #controlScratch = createControlScratch();
  #batch: unknown[] = [];
  #keyGroups: Uint16Array | null = null;
  #keyed = 0;
  /** The open message: a growable buffer, header bytes reserved. */
  #open = new Uint8Array(64 * 1024);
  #openLength = WIRE_HEADER_BYTES;
  /** Retained (sent, not known received) then unsent messages, in seq order, from #head on. */
  #messages: OutMessage[] = [];
  #head = 0;
  /** Index in #messages of the next message to publish. */
  #sendIndex = 0;
  #nextSeq = 0;
  #endBytes = 0;
  /** Cumulative bytes of the data messages published so far (`end` of the last one). */
  #sentEnd = 0;
  /** The receiver's generation we send in; 0 until the first resume (nothing is sent before). */
  #generation = 0;
  /** Receiver's next expected seq (every message below it arrived), from credit/resume. */
  #receivedNext = 0;
  #consumedBytes = 0;
  /** Whether a credit or resume arrived since the resync timer last looked. */
  #heard = false;
  #failure: Error | null = null;
  #closed = false;
  #waiters: { resolve: () => void; reject: (e: Error) => void; until: () => boolean }[] = [];
  #link: RemoteEdgeLink | null = null;
  readonly #maxPayload: number;

  constructor(options: RemoteEdgeSenderOptions) {
    this.#nc = options.connection;
    this.flow = options.flow;
    this.subjects = remoteEdgeSubjects(options.flow, options.prefix);
    this.windowBytes = positive('windowBytes', options.windowBytes ?? 1024 * 1024);
    this.batchRecords = positive('batchRecords', options.batchRecords ?? 256);
    this.messageBytes = positive('messageBytes', options.messageBytes ?? 32 * 1024);
    this.resyncAfterMs = positive('resyncAfterMs', options.resyncAfterMs ?? 1000);
    this.#codec = new RecordCodec({ shapeBatches: options.shapeBatches });
    this.#maxPayload = this.#nc.info?.max_payload ?? 1024 * 1024;
    // key-groups frames carry Uint16Array bytes in platform order (layout.ts); the wire is LE.
    if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
      throw new RemoteEdgeProtocolError(this.flow, 'remote edges need a little-endian host');
    }
  }

  /** Subscribes to the control subject and asks the receiver for its first resume. */
  start(): void {
    this.#link = new RemoteEdgeLink(this.#nc, this.subjects.control, this.resyncAfterMs, {
      onMessage: (data) => this.#onControl(data),
      onError: (error) => this.#fail(error),
      onTimer: () => this.#onTimer(),
      onReconnect: () => this.#sync(),
    });
    this.#sync();
  }

  /** Bytes of data messages sent but not yet consumed by the receiver. */
  get outstandingBytes(): number {
    return this.#sentEnd - this.#consumedBytes;
  }

  /** Whether sealed messages wait for credit (or the handshake): stop producing until {@link waitForCapacity}. */
  get backlogged(): boolean {
    return this.#sendIndex < this.#messages.length;
  }

  /** Appends a record to the open batch (`keyGroup`: see ChannelWriter.write). */
  write(record: unknown, keyGroup?: number): void {
    this.#throwIfFailed();
    if (keyGroup !== undefined) {
      this.#keyGroups ??= new Uint16Array(this.batchRecords);
      this.#keyGroups[this.#batch.length] = keyGroup;
      this.#keyed++;
    }
    this.#batch.push(record);
    this.stats.records++;
    if (this.#batch.length >= this.batchRecords) {
      this.#encodeBatch();
      if (this.#openLength >= this.messageBytes) this.#seal();
      this.#pump();
    }
  }

  /** Writes a control frame after every record written so far, and publishes at once. */
  writeControl(frame: ControlFrame): void {
    this.#throwIfFailed();
    this.#encodeBatch();
    const { word, payload } = encodeControlFrame(frame, this.#controlScratch);
    this.#append(word, payload);
    this.#seal();
    this.#pump();
  }

  /** Publishes the open batch and message (call when the task's input goes idle). True when nothing waits. */
  flush(): boolean {
    this.#throwIfFailed();
    this.#encodeBatch();
    this.#seal();
    this.#pump();
    return !this.backlogged;
  }

  /** Resolves when every sealed message has been published (credit permitting). */
  waitForCapacity(): Promise<void> {
    return this.#wait(() => !this.backlogged);
  }

  /**
   * Makes pending {@link waitForCapacity} calls resolve now (still backlogged), so a task blocked
   * on this output can serve a cancel (TaskOutputChannel.interruptWait).
   */
  interruptWait(): void {
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiting) waiter.resolve();
  }

  /** Writes end-of-partition and resolves once the receiver has received every message. */
  async finish(): Promise<void> {
    this.writeControl({ kind: 'end-of-partition' });
    await this.awaitReceived();
  }

  /**
   * Resolves once the receiver has received every message sealed so far (so closing loses none,
   * even if the connection is cut and messages must be resent). Rejects with the flow's failure.
   */
  awaitReceived(): Promise<void> {
    return this.#wait(() => this.#receivedNext === this.#nextSeq);
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Stops listening (idempotent). Unsent and unacknowledged messages are dropped. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#link?.close();
    this.#fail(new ChannelClosedError(`remote edge ${this.flow}: sender closed`));
  }

  // ---- batching ----

  #encodeBatch(): void {
    const batch = this.#batch;
    if (batch.length === 0) return;
    const groups = this.#keyed === batch.length ? this.#keyGroups!.slice(0, batch.length) : null;
    this.#batch = [];
    this.#keyed = 0;
    this.#encodeRecords(batch, groups);
  }

  /** Encodes records into frames of the open message, halving batches that exceed max_payload. */
  #encodeRecords(records: readonly unknown[], groups: Uint16Array | null): void {
    const bytes = this.#codec.encodeBatch(records);
    const structures = this.#codec.takeStructureUpdate();
    const frameBytes =
      bytes.length +
      (structures?.length ?? 0) +
      (groups === null ? 0 : groups.byteLength) +
      3 * WIRE_FRAME_HEADER_BYTES;
    if (WIRE_HEADER_BYTES + frameBytes > this.#maxPayload && records.length > 1) {
      // The codec learned the shapes already; they must precede the first half that uses them.
      if (structures !== null) this.#append(FRAME_TAG.structures, structures);
      const half = records.length >> 1;
      this.#encodeRecords(records.slice(0, half), groups?.slice(0, half) ?? null);
      this.#encodeRecords(records.slice(half), groups?.slice(half) ?? null);
      return;
    }
    if (WIRE_HEADER_BYTES + frameBytes > this.#maxPayload) {
      throw new RecordTooLargeError(
        bytes.length,
        this.#maxPayload - WIRE_HEADER_BYTES - 3 * WIRE_FRAME_HEADER_BYTES,
        "the NATS server's max_payload",
      );
    }
    if (this.#openLength + frameBytes > this.#maxPayload) this.#seal();
    if (structures !== null) this.#append(FRAME_TAG.structures, structures);
    if (groups !== null)
      this.#append(
        FRAME_TAG['key-groups'],
        new Uint8Array(groups.buffer, groups.byteOffset, groups.byteLength),
      );
    this.#append(FRAME_TAG.records, bytes);
  }

  #append(word: number, payload: Uint8Array): void {
    const need = this.#openLength + WIRE_FRAME_HEADER_BYTES + payload.length;
    if (need > this.#open.length) {
      const grown = new Uint8Array(Math.max(need, this.#open.length * 2));
      grown.set(this.#open.subarray(0, this.#openLength));
      this.#open = grown;
    }
    const view = new DataView(
      this.#open.buffer,
      this.#open.byteOffset + this.#openLength,
      WIRE_FRAME_HEADER_BYTES,
    );
    view.setUint32(0, word, LE);
    view.setUint32(4, payload.length, LE);
    this.#open.set(payload, this.#openLength + WIRE_FRAME_HEADER_BYTES);
    this.#openLength = need;
  }

  /** Closes the open message (if it holds frames) and queues it. */
  #seal(): void {
    if (this.#openLength === WIRE_HEADER_BYTES) return;
    const bytes = this.#open.slice(0, this.#openLength);
    this.#openLength = WIRE_HEADER_BYTES;
    this.#endBytes += bytes.length;
    this.#messages.push({ seq: this.#nextSeq++, bytes, end: this.#endBytes });
  }

  // ---- sending ----

  /** Sequence number of the next message to publish for the first time. */
  #sentNext(): number {
    return this.#sendIndex < this.#messages.length ? this.#messages[this.#sendIndex].seq : this.#nextSeq;
  }

  /** Publishes queued messages while the window allows. */
  #pump(): void {
    if (this.#generation === 0 || this.#failure !== null) return;
    while (this.#sendIndex < this.#messages.length) {
      const message = this.#messages[this.#sendIndex];
      const outstanding = this.#sentEnd - this.#consumedBytes;
      if (outstanding > 0 && message.end - this.#consumedBytes > this.windowBytes) {
        this.stats.creditStalls++;
        break;
      }
      writeHeader(
        new DataView(message.bytes.buffer, message.bytes.byteOffset, WIRE_HEADER_BYTES),
        MESSAGE_TYPE.data,
        this.#generation,
        message.seq,
      );
      this.#nc.publish(this.subjects.data, message.bytes);
      this.#sendIndex++;
      this.#sentEnd = message.end;
      this.stats.messages++;
      this.stats.bytes += message.bytes.length;
      this.stats.maxOutstandingBytes = Math.max(
        this.stats.maxOutstandingBytes,
        message.end - this.#consumedBytes,
      );
    }
    this.#settleWaiters();
  }

  #onControl(data: Uint8Array): void {
    try {
      const header = readHeader(this.flow, data);
      if (header.type !== 'credit' && header.type !== 'resume') {
        throw new RemoteEdgeProtocolError(this.flow, `${header.type} message on the control subject`);
      }
      const consumed = readSmallBody(this.flow, header.type, data);
      this.#heard = true;
      this.#consumedBytes = Math.max(this.#consumedBytes, consumed);
      if (header.type === 'credit') {
        // A credit of an older generation still tells the truth about what was received.
        this.#release(header.seq);
      } else if (header.generation > this.#generation) {
        this.#resume(header.generation, header.seq);
      }
      this.#pump();
    } catch (error) {
      this.#fail(error as Error);
    }
  }

  /** Drops retained messages below `receivedNext`. */
  #release(receivedNext: number): void {
    if (receivedNext > this.#nextSeq) {
      throw new RemoteEdgeProtocolError(
        this.flow,
        `credit for message ${receivedNext - 1}, never sent (next ${this.#nextSeq})`,
      );
    }
    this.#receivedNext = Math.max(this.#receivedNext, receivedNext);
    while (this.#head < this.#sendIndex && this.#messages[this.#head].seq < this.#receivedNext) this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#messages.length) {
      this.#messages = this.#messages.slice(this.#head);
      this.#sendIndex -= this.#head;
      this.#head = 0;
    }
  }

  #resume(generation: number, nextSeq: number): void {
    this.stats.resumes++;
    const sentNext = this.#sentNext();
    // Retained: #head .. #sendIndex-1 (sent, not known received); all of them if none unsent.
    const oldest = this.#head < this.#sendIndex ? this.#messages[this.#head].seq : sentNext;
    // A request outside [oldest, sentNext] cannot be served: `resumed` says from where it could,
    // and the receiver raises the gap.
    const firstSeq = Math.min(Math.max(nextSeq, oldest), sentNext);
    if (firstSeq === nextSeq) this.#release(nextSeq);
    this.#generation = generation;
    this.#nc.publish(this.subjects.data, encodeSmallMessage('resumed', generation, firstSeq, sentNext));
    if (firstSeq !== nextSeq) return;
    for (let i = this.#head; i < this.#sendIndex; i++) {
      const copy = this.#messages[i].bytes.slice();
      writeHeader(
        new DataView(copy.buffer, 0, WIRE_HEADER_BYTES),
        MESSAGE_TYPE.data,
        generation,
        this.#messages[i].seq,
      );
      this.#nc.publish(this.subjects.data, copy);
      this.stats.resent++;
    }
  }

  #sync(): void {
    if (this.#closed || this.#nc.isClosed()) return;
    this.stats.syncs++;
    this.#nc.publish(this.subjects.data, encodeSmallMessage('sync', this.#generation, 0));
  }

  #onTimer(): void {
    // Silent for a period while sent messages await acknowledgement, or while the window holds
    // us back (a lost credit would otherwise stall the flow for good): ask for a resume, which
    // carries the receiver's position. For a consumer that is merely slow this costs a `sync`
    // and a `resume` per period.
    const unacknowledged = this.#sendIndex > this.#head;
    if (this.#generation === 0 || (!this.#heard && (unacknowledged || this.backlogged))) this.#sync();
    this.#heard = false;
  }

  // ---- waiting and failure ----

  #wait(until: () => boolean): Promise<void> {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    if (until()) return Promise.resolve();
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject, until }));
  }

  #settleWaiters(): void {
    if (this.#waiters.length === 0) return;
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiting) {
      if (waiter.until()) waiter.resolve();
      else this.#waiters.push(waiter);
    }
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiting) waiter.reject(this.#failure);
  }

  #throwIfFailed(): void {
    if (this.#failure !== null) throw this.#failure;
  }
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}
