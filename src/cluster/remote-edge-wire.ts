/**
 * The bytes of a remote edge on NATS: subject names and the message layout.
 *
 * One flow = one producer subtask → one consumer subtask. Two core NATS subjects per flow:
 *   `<prefix>.<flow>.d`  producer → consumer: `data`, `resumed`, `sync`
 *   `<prefix>.<flow>.c`  consumer → producer: `credit`, `resume`
 * Core NATS keeps the order of messages from one connection to one subscriber and delivers at
 * most once; the flow adds what it lacks (credits, sequence numbers, retransmission after a cut:
 * remote-edge-sender.ts, remote-edge-receiver.ts).
 *
 * Message layout (little-endian), a 16-byte header then a body by type:
 *   0  u8  'W' (0x57)          2  u8 version (1)
 *   1  u8  'E' (0x45)          3  u8 type (MESSAGE_TYPE)
 *   4  u32 generation          (the receiver's resume count: remote-edge-sequence.ts)
 *   8  f64 seq                 data: this message's sequence number; resumed: the first sequence
 *                              number resent; credit: the receiver's next expected sequence
 *                              number; resume: the first sequence number wanted; sync: 0
 *   16 body
 *     data:    frames, each u32 frame word (tag | flags, layout.ts), u32 payload length, payload.
 *              The payloads are the ring's: RecordCodec batches (with their `structures` and
 *              `key-groups` frames before them) and frame-codec control payloads, so the same
 *              bytes go on a ring and on the wire. Never fragmented: one frame fits one message.
 *     resumed: f64 the producer's next sequence number (one past the last it has sent)
 *     credit:  f64 bytes of data messages consumed so far (cumulative)
 *     resume:  f64 the same
 *     sync:    empty
 * Sequence numbers and byte counts are f64 so they stay exact to 2^53 without BigInt.
 */
import { RemoteEdgeProtocolError } from '../errors.js';

export const WIRE_HEADER_BYTES = 16;
export const WIRE_FRAME_HEADER_BYTES = 8;
const MAGIC_0 = 0x57;
const MAGIC_1 = 0x45;
export const WIRE_VERSION = 1;
const LE = true;

/** Message types, built from one list (type = position + 1). */
const MESSAGE_TYPE_NAMES = ['data', 'resumed', 'sync', 'credit', 'resume'] as const;
export type MessageType = (typeof MESSAGE_TYPE_NAMES)[number];
export const MESSAGE_TYPE: Readonly<Record<MessageType, number>> = Object.freeze(
  Object.fromEntries(MESSAGE_TYPE_NAMES.map((name, i) => [name, i + 1])) as Record<MessageType, number>,
);

export interface RemoteEdgeSubjects {
  /** Producer → consumer. */
  readonly data: string;
  /** Consumer → producer. */
  readonly control: string;
}

const TOKEN = /^[A-Za-z0-9_-]+$/;

/**
 * The subjects of flow `flow` under `prefix` (default `weir.edge`). `flow` is one subject token
 * (letters, digits, `_`, `-`): e.g. `${job}-${edge}-${producerSubtask}-${consumerSubtask}`.
 */
export function remoteEdgeSubjects(flow: string, prefix = 'weir.edge'): RemoteEdgeSubjects {
  if (!TOKEN.test(flow)) {
    throw new RangeError(
      `remote edge flow name must be one NATS token ([A-Za-z0-9_-]+), got ${JSON.stringify(flow)}`,
    );
  }
  return { data: `${prefix}.${flow}.d`, control: `${prefix}.${flow}.c` };
}

export interface WireHeader {
  readonly type: MessageType;
  readonly generation: number;
  readonly seq: number;
}

/** A small message (everything but `data`): header plus an optional f64 body. */
export function encodeSmallMessage(
  type: Exclude<MessageType, 'data'>,
  generation: number,
  seq: number,
  value?: number,
): Uint8Array {
  const bytes = new Uint8Array(WIRE_HEADER_BYTES + (value === undefined ? 0 : 8));
  const view = new DataView(bytes.buffer);
  writeHeader(view, MESSAGE_TYPE[type], generation, seq);
  if (value !== undefined) view.setFloat64(WIRE_HEADER_BYTES, value, LE);
  return bytes;
}

export function writeHeader(view: DataView, type: number, generation: number, seq: number): void {
  view.setUint8(0, MAGIC_0);
  view.setUint8(1, MAGIC_1);
  view.setUint8(2, WIRE_VERSION);
  view.setUint8(3, type);
  view.setUint32(4, generation, LE);
  view.setFloat64(8, seq, LE);
}

/** Reads and checks a message's header; throws RemoteEdgeProtocolError on anything foreign. */
export function readHeader(flow: string, bytes: Uint8Array): WireHeader {
  if (bytes.length < WIRE_HEADER_BYTES) {
    throw new RemoteEdgeProtocolError(
      flow,
      `message of ${bytes.length} bytes is shorter than the ${WIRE_HEADER_BYTES}-byte header`,
    );
  }
  if (bytes[0] !== MAGIC_0 || bytes[1] !== MAGIC_1) {
    throw new RemoteEdgeProtocolError(flow, `message does not start with the remote-edge magic 'WE'`);
  }
  if (bytes[2] !== WIRE_VERSION) {
    throw new RemoteEdgeProtocolError(
      flow,
      `message has wire version ${bytes[2]}, this build speaks ${WIRE_VERSION}`,
    );
  }
  const type = MESSAGE_TYPE_NAMES[bytes[3] - 1];
  if (type === undefined) throw new RemoteEdgeProtocolError(flow, `unknown message type ${bytes[3]}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const seq = view.getFloat64(8, LE);
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new RemoteEdgeProtocolError(flow, `${type} message has sequence number ${seq}`);
  }
  return { type, generation: view.getUint32(4, LE), seq };
}

/** The f64 body of a small message. */
export function readSmallBody(flow: string, type: MessageType, bytes: Uint8Array): number {
  if (bytes.length !== WIRE_HEADER_BYTES + 8) {
    throw new RemoteEdgeProtocolError(
      flow,
      `${type} message has ${bytes.length} bytes, expected ${WIRE_HEADER_BYTES + 8}`,
    );
  }
  const value = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getFloat64(
    WIRE_HEADER_BYTES,
    LE,
  );
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RemoteEdgeProtocolError(flow, `${type} message carries ${value}`);
  }
  return value;
}
