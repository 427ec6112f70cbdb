/**
 * RemoteEdgeReceiver: the consumer end of one remote edge (see remote-edge-sender.ts for the
 * protocol, remote-edge-sequence.ts for the ordering rules, remote-edge-wire.ts for the bytes).
 *
 * Roles: used by one task. Messages arrive on the NATS connection's callback and are queued
 * (a copy: nothing aliases the client's read buffers); {@link tryRead} decodes them in order, one
 * Frame at a time, with this endpoint's own RecordCodec, like a ChannelReader.
 *
 * Credits: a data message counts as consumed once its last frame was read. The receiver sends
 * `credit(receivedNext, consumedBytes)` whenever a quarter of the window was consumed since the
 * last credit, after reading end-of-partition, and from a timer (every resyncAfterMs / 4) when
 * anything is unacknowledged, so the producer never waits on
 * a receiver that is keeping up. Bytes queued here never exceed the sender's window.
 *
 * Resumes: at start, after its own connection comes back, on the producer's `sync`, on a gap,
 * and when a `resumed` is overdue (`resyncAfterMs`), the receiver opens a new generation and
 * sends `resume(generation, receivedNext, consumedBytes)`.
 *
 * Errors: a malformed message (RemoteEdgeProtocolError) or a broken sequence
 * (RemoteEdgeSequenceError) fails the flow: the next {@link tryRead} throws it, and
 * {@link waitForFrame} rejects with it. Both are task failures.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { Frame } from '../channels/frame.js';
import { decodeControlFrame, frameTag, isControlTag, isFragment } from '../channels/frame-codec.js';
import { FRAME_TAG } from '../channels/layout.js';
import { RecordCodec } from '../channels/record-codec.js';
import { ChannelClosedError, RemoteEdgeProtocolError } from '../errors.js';
import { RemoteEdgeLink } from './remote-edge-link.js';
import { decideSequence, INITIAL_SEQUENCE_STATE, type SequenceState } from './remote-edge-sequence.js';
import {
  encodeSmallMessage,
  type RemoteEdgeSubjects,
  readHeader,
  readSmallBody,
  remoteEdgeSubjects,
  WIRE_FRAME_HEADER_BYTES,
  WIRE_HEADER_BYTES,
} from './remote-edge-wire.js';

export interface RemoteEdgeReceiverOptions {
  readonly connection: NatsConnection;
  readonly flow: string;
  readonly prefix?: string;
  /** The sender's window (bytes); credits are sent every quarter of it. Default 1 MiB. */
  readonly windowBytes?: number;
  /** Re-send `resume` when its `resumed` is this late; also the idle-credit period. Default 1000 ms. */
  readonly resyncAfterMs?: number;
}

const LE = true;

export class RemoteEdgeReceiver {
  readonly flow: string;
  readonly subjects: RemoteEdgeSubjects;
  readonly windowBytes: number;
  readonly resyncAfterMs: number;
  readonly stats = {
    messages: 0,
    records: 0,
    frames: 0,
    /** Bytes of the data messages read out (a gate's throughput for buffer debloating). */
    bytes: 0,
    /** Messages of a superseded generation, dropped (each was delivered or is resent). */
    stale: 0,
    /** Gaps seen (messages lost on a cut), each repaired by a resume. */
    gaps: 0,
    resumes: 0,
    credits: 0,
  };

  readonly #nc: NatsConnection;
  readonly #codec = new RecordCodec();
  #sequence: SequenceState = INITIAL_SEQUENCE_STATE;
  /** Delivered-in-order data messages not fully read yet. The first one is being read at #offset. */
  #queue: Uint8Array[] = [];
  #queueHead = 0;
  #offset = WIRE_HEADER_BYTES;
  #queuedBytes = 0;
  #consumedBytes = 0;
  #creditedConsumed = 0;
  #creditedReceived = 0;
  #keyGroups: Uint16Array | null = null;
  #ended = false;
  #failure: Error | null = null;
  #closed = false;
  #wake: (() => void) | null = null;
  /** The input gate's wake-up (InputGate: GateChannel.onArrival), called on every arrival. */
  #onArrival: (() => void) | null = null;
  #resumeSentAt = 0;
  #link: RemoteEdgeLink | null = null;

  constructor(options: RemoteEdgeReceiverOptions) {
    this.#nc = options.connection;
    this.flow = options.flow;
    this.subjects = remoteEdgeSubjects(options.flow, options.prefix);
    this.windowBytes = options.windowBytes ?? 1024 * 1024;
    this.resyncAfterMs = options.resyncAfterMs ?? 1000;
    if (!(this.windowBytes > 0) || !(this.resyncAfterMs > 0)) {
      throw new RangeError('windowBytes and resyncAfterMs must be positive numbers');
    }
  }

  /** Subscribes, then opens the first generation (the sender sends nothing before it). */
  async start(): Promise<void> {
    // A quarter period, so idle credits reach the sender before its resync timer gives up on them.
    this.#link = new RemoteEdgeLink(this.#nc, this.subjects.data, this.resyncAfterMs / 4, {
      onMessage: (data) => this.#onData(data),
      onError: (error) => this.#fail(error),
      onTimer: () => this.#onTimer(),
      onReconnect: () => this.#issueResume(),
    });
    // The subscription must be on the server before the resume invites the producer to send.
    await this.#nc.flush();
    this.#issueResume();
  }

  /** Whether end-of-partition has been read. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The latest generation this receiver opened (one per resume; see remote-edge-sequence.ts). */
  get generation(): number {
    return this.#sequence.generation;
  }

  /** The next sequence number this receiver will deliver. */
  get expectedSeq(): number {
    return this.#sequence.expectedSeq;
  }

  /** Bytes received and not yet read (the remote edge's lag, as seen by the consumer). */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** The next frame, or null when none has arrived. Never blocks; throws the flow's failure. */
  tryRead(): Frame | null {
    for (;;) {
      if (this.#failure !== null) throw this.#failure;
      const message = this.#queue[this.#queueHead];
      if (message === undefined) return null;
      if (this.#offset >= message.length) {
        this.#finishMessage(message);
        continue;
      }
      const frame = this.#readFrame(message);
      if (frame !== null) return frame;
    }
  }

  /** Whether {@link tryRead} has something to do: a queued message or the flow's failure. */
  isReady(): boolean {
    return this.#failure !== null || this.#queueHead < this.#queue.length;
  }

  /**
   * As an input gate's channel (GateChannel): `wake` is called whenever a message is queued or the
   * flow fails, from this thread's event loop (the NATS client's callback).
   */
  onArrival(wake: () => void): void {
    this.#onArrival = wake;
  }

  /** Resolves when {@link tryRead} has something (a frame or the failure) to return. */
  waitForFrame(): Promise<void> {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    if (this.#queueHead < this.#queue.length) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#wake = () => {
        this.#wake = null;
        if (this.#failure !== null) reject(this.#failure);
        else resolve();
      };
    });
  }

  /** Unsubscribes (idempotent). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#link?.close();
    this.#fail(new ChannelClosedError(`remote edge ${this.flow}: receiver closed`));
  }

  // ---- reading ----

  #readFrame(message: Uint8Array): Frame | null {
    const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
    const at = this.#offset;
    if (at + WIRE_FRAME_HEADER_BYTES > message.length) this.#malformed('truncated frame header');
    const word = view.getUint32(at, LE);
    const length = view.getUint32(at + 4, LE);
    const start = at + WIRE_FRAME_HEADER_BYTES;
    if (start + length > message.length) this.#malformed(`frame of ${length} bytes overruns its message`);
    this.#offset = start + length;
    if (isFragment(word)) this.#malformed('fragmented frame (never sent on a remote edge)');
    const payload = message.subarray(start, start + length);
    const tag = frameTag(word);
    this.stats.frames++;
    if (this.#ended) this.#malformed('frame after end-of-partition');
    try {
      if (tag === FRAME_TAG.records) {
        const records = this.#codec.decodeBatch(payload);
        this.stats.records += records.length;
        const keyGroups = this.#keyGroups;
        if (keyGroups === null) return { kind: 'records', records };
        this.#keyGroups = null;
        if (keyGroups.length !== records.length) {
          this.#malformed(`key-groups frame has ${keyGroups.length} entries for ${records.length} records`);
        }
        return { kind: 'records', records, keyGroups };
      }
      if (tag === FRAME_TAG['key-groups']) {
        if (length % 2 !== 0) this.#malformed('key-groups frame of odd length');
        const groups = new Uint16Array(length / 2);
        new Uint8Array(groups.buffer).set(payload);
        this.#keyGroups = groups;
        return null;
      }
      if (tag === FRAME_TAG.structures) {
        this.#codec.applyStructureUpdate(payload);
        return null;
      }
      if (!isControlTag(tag)) this.#malformed(`unknown frame tag ${tag}`);
      const frame = decodeControlFrame(tag, payload);
      if (frame.kind === 'end-of-partition') {
        this.#ended = true;
        this.#sendCredit(); // the sender's finish() waits for this message to be acknowledged
      }
      return frame;
    } catch (error) {
      if (error instanceof RemoteEdgeProtocolError) throw error;
      // ChannelProtocolError from the codecs: same failure, named after this flow.
      this.#malformed((error as Error).message, error);
    }
  }

  #finishMessage(message: Uint8Array): void {
    this.#queue[this.#queueHead] = undefined as unknown as Uint8Array;
    this.#queueHead++;
    if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#queueHead);
      this.#queueHead = 0;
    }
    this.#offset = WIRE_HEADER_BYTES;
    this.#queuedBytes -= message.length;
    this.#consumedBytes += message.length;
    this.stats.messages++;
    this.stats.bytes += message.length;
    if (this.#consumedBytes - this.#creditedConsumed >= this.windowBytes / 4) this.#sendCredit();
  }

  #malformed(message: string, cause?: unknown): never {
    const error = new RemoteEdgeProtocolError(this.flow, message, { cause });
    this.#fail(error);
    throw error;
  }

  // ---- protocol ----

  #onData(data: Uint8Array): void {
    if (this.#failure !== null) return;
    try {
      const header = readHeader(this.flow, data);
      switch (header.type) {
        case 'data': {
          const { next, action } = decideSequence(this.flow, this.#sequence, {
            kind: 'data',
            generation: header.generation,
            seq: header.seq,
          });
          this.#sequence = next;
          if (action === 'stale') this.stats.stale++;
          else if (action === 'resume') {
            this.stats.gaps++;
            this.#issueResume();
          } else {
            this.#queue.push(data.slice());
            this.#queuedBytes += data.length;
            if (this.#consumedBytes + this.#queuedBytes - this.#creditedReceived >= this.windowBytes / 4)
              this.#sendCredit();
            this.#wake?.();
            this.#onArrival?.();
          }
          return;
        }
        case 'resumed': {
          const producerNext = readSmallBody(this.flow, header.type, data);
          const { next, action } = decideSequence(this.flow, this.#sequence, {
            kind: 'resumed',
            generation: header.generation,
            firstSeq: header.seq,
            producerNext,
          });
          this.#sequence = next;
          if (action === 'stale') this.stats.stale++;
          return;
        }
        case 'sync':
          if (data.length !== WIRE_HEADER_BYTES) this.#malformed(`sync message of ${data.length} bytes`);
          this.#issueResume();
          return;
        case 'credit':
        case 'resume':
          this.#malformed(`${header.type} message on the data subject`);
          break;
        default:
          header.type satisfies never;
      }
    } catch (error) {
      this.#fail(error as Error);
    }
  }

  #issueResume(): void {
    if (this.#closed || this.#nc.isClosed()) return;
    const { next } = decideSequence(this.flow, this.#sequence, { kind: 'issue-resume' });
    this.#sequence = next;
    this.stats.resumes++;
    this.#resumeSentAt = performance.now();
    this.#creditedConsumed = this.#consumedBytes;
    this.#creditedReceived = this.#consumedBytes + this.#queuedBytes;
    this.#nc.publish(
      this.subjects.control,
      encodeSmallMessage('resume', next.generation, next.expectedSeq, this.#consumedBytes),
    );
  }

  #sendCredit(): void {
    if (this.#closed || this.#nc.isClosed()) return;
    this.stats.credits++;
    this.#creditedConsumed = this.#consumedBytes;
    this.#creditedReceived = this.#consumedBytes + this.#queuedBytes;
    this.#nc.publish(
      this.subjects.control,
      encodeSmallMessage(
        'credit',
        this.#sequence.generation,
        this.#sequence.expectedSeq,
        this.#consumedBytes,
      ),
    );
  }

  #onTimer(): void {
    if (this.#failure !== null) return;
    if (this.#sequence.awaitingResumed) {
      if (performance.now() - this.#resumeSentAt >= this.resyncAfterMs) this.#issueResume();
      return;
    }
    const received = this.#consumedBytes + this.#queuedBytes;
    if (this.#consumedBytes > this.#creditedConsumed || received > this.#creditedReceived) this.#sendCredit();
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    this.#wake?.();
    this.#onArrival?.();
  }
}
