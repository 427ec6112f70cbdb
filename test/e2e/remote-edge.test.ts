/**
 * Remote edges (src/cluster/remote-edge-*.ts) against the machine's NATS server (127.0.0.1:4222):
 * order and exactness of records and control frames, credit backpressure, resume after a
 * connection cut (through an in-test TCP proxy; the shared server is never stopped), and typed
 * errors for bad messages. Imports src/ directly: no worker threads are involved.
 *
 * Cleanup: a remote edge uses core NATS subjects only (no stream, no consumer, no bucket); each
 * test's flow has a unique name and every subscription and connection is closed after it.
 */
import { isDeepStrictEqual } from 'node:util';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { Frame } from '../../src/channels/frame.js';
import { RemoteEdgeReceiver } from '../../src/cluster/remote-edge-receiver.js';
import { RemoteEdgeSender, type RemoteEdgeSenderOptions } from '../../src/cluster/remote-edge-sender.js';
import {
  encodeSmallMessage,
  MESSAGE_TYPE,
  WIRE_HEADER_BYTES,
  writeHeader,
} from '../../src/cluster/remote-edge-wire.js';
import { RemoteEdgeProtocolError, RemoteEdgeSequenceError } from '../../src/errors.js';
import { type TcpProxy, tcpProxy } from './tcp-proxy.js';

const NATS_PORT = 4222;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let flows = 0;
function flowName(): string {
  return `t${process.pid}-${Date.now().toString(36)}-${flows++}`;
}

async function natsConnection(port = NATS_PORT): Promise<NatsConnection> {
  const nc = await connect({
    servers: `127.0.0.1:${port}`,
    reconnectTimeWait: 50,
    maxReconnectAttempts: -1,
    reconnectJitter: 0,
  });
  cleanups.push(() => nc.close());
  return nc;
}

async function edge(
  options: Partial<RemoteEdgeSenderOptions> & { producerPort?: number; consumerPort?: number } = {},
) {
  const flow = flowName();
  const producer = await natsConnection(options.producerPort);
  const consumer = await natsConnection(options.consumerPort);
  const { producerPort: _p, consumerPort: _c, ...senderOptions } = options;
  const sender = new RemoteEdgeSender({ connection: producer, flow, resyncAfterMs: 200, ...senderOptions });
  const receiver = new RemoteEdgeReceiver({
    connection: consumer,
    flow,
    windowBytes: senderOptions.windowBytes,
    resyncAfterMs: 200,
  });
  cleanups.push(() => {
    sender.close();
    receiver.close();
  });
  await receiver.start();
  sender.start();
  return { flow, producer, consumer, sender, receiver };
}

/** What a frame means, flattened: one entry per record, one per control frame. */
type Event = readonly ['record', unknown, number | undefined] | readonly ['control', Frame];

/** Reads until end-of-partition; `onEvent` sees every event as it arrives. */
async function drain(receiver: RemoteEdgeReceiver, onEvent?: (events: Event[]) => void): Promise<Event[]> {
  const events: Event[] = [];
  for (;;) {
    const frame = receiver.tryRead();
    if (frame === null) {
      await receiver.waitForFrame();
      continue;
    }
    if (frame.kind === 'records') {
      frame.records.forEach((record, i) => {
        events.push(['record', record, frame.keyGroups?.[i]]);
      });
    } else {
      events.push(['control', frame]);
    }
    onEvent?.(events);
    if (frame.kind === 'end-of-partition') return events;
  }
}

/** Writes respecting the sender's backlog, like a task would. */
async function write(sender: RemoteEdgeSender, record: unknown, keyGroup?: number): Promise<void> {
  sender.write(record, keyGroup);
  if (sender.backlogged) await sender.waitForCapacity();
}

function record(i: number): unknown {
  // Mostly one flat shape (the shape codec), every 97th a msgpack-only record (array, Date).
  return i % 97 === 0
    ? { i, tags: [i, 'x'], at: new Date(i) }
    : { key: `k${i % 13}`, value: i, ok: i % 2 === 0 };
}

describe('remote edge over NATS', () => {
  it('delivers records, key groups, barriers, watermarks and end-of-partition in order and exactly', async () => {
    const { sender, receiver } = await edge({ batchRecords: 64, messageBytes: 4096 });
    const expected: Event[] = [];
    const reading = drain(receiver);
    for (let i = 0; i < 20_000; i++) {
      const keyGroup = i < 10_000 ? i % 128 : undefined;
      await write(sender, record(i), keyGroup);
      expected.push(['record', record(i), keyGroup]);
      if (i % 1500 === 1499) {
        const barrier: Frame = {
          kind: 'barrier',
          checkpointId: i,
          timestamp: 1_700_000_000_000 + i,
          checkpointType: i % 3000 === 2999 ? 'savepoint' : 'checkpoint',
          unaligned: i % 4500 === 1499,
        };
        sender.writeControl(barrier);
        expected.push(['control', barrier]);
      }
      // A control frame ends the open batch: the keyed half ends on a batch boundary (a batch
      // with some records lacking a key group carries none, as on a ring).
      if (i === 9999) {
        sender.writeControl({ kind: 'watermark', timestamp: 42.5 });
        expected.push(['control', { kind: 'watermark', timestamp: 42.5 }]);
        sender.writeControl({ kind: 'cancel-checkpoint', checkpointId: 5 });
        expected.push(['control', { kind: 'cancel-checkpoint', checkpointId: 5 }]);
      }
    }
    await sender.finish();
    expected.push(['control', { kind: 'end-of-partition' }]);
    const events = await reading;
    expect(events.length).toBe(expected.length);
    const firstMismatch = events.findIndex((e, i) => !isDeepStrictEqual(e, expected[i]));
    expect(firstMismatch === -1 ? null : [events[firstMismatch], expected[firstMismatch]]).toBeNull();
    expect(receiver.ended).toBe(true);
    expect(receiver.stats.gaps).toBe(0);
    expect(sender.stats.records).toBe(20_000);
  });

  it('holds the producer at the credit window while the consumer does not read, and releases it as it reads', async () => {
    const windowBytes = 4096;
    const { sender, receiver, producer, consumer } = await edge({
      windowBytes,
      batchRecords: 16,
      messageBytes: 512,
    });
    const n = 3000;
    // Write everything without waiting: the sender may publish only a window's worth.
    for (let i = 0; i < n; i++) sender.write({ key: `k${i % 5}`, value: i });
    sender.flush();
    // Handshake done and every publish of the sender delivered: a round trip through the server
    // on each connection, after the resume arrived.
    while (receiver.generation === 0 || sender.stats.messages === 0) await consumer.flush();
    await producer.flush();
    await consumer.flush();
    expect(sender.backlogged).toBe(true);
    expect(sender.stats.creditStalls).toBeGreaterThan(0);
    expect(sender.outstandingBytes).toBeLessThanOrEqual(windowBytes);
    expect(receiver.queuedBytes).toBeGreaterThan(0);
    expect(receiver.queuedBytes).toBeLessThanOrEqual(windowBytes);
    const sentWhileBlocked = sender.stats.bytes;
    // Now read: the producer gets its credits and finishes.
    const finished = sender.finish();
    const events = await drain(receiver);
    await finished;
    expect(sender.stats.bytes).toBeGreaterThan(sentWhileBlocked);
    expect(sender.stats.maxOutstandingBytes).toBeLessThanOrEqual(windowBytes);
    expect(events.filter((e) => e[0] === 'record').map((e) => (e[1] as { value: number }).value)).toEqual(
      Array.from({ length: n }, (_, i) => i),
    );
  });

  for (const side of ['producer', 'consumer'] as const) {
    it(`resumes after the ${side}'s connection is cut, without loss or duplicates`, async () => {
      const proxy: TcpProxy = await tcpProxy(NATS_PORT);
      cleanups.push(() => proxy.close());
      const { sender, receiver } = await edge({
        windowBytes: 64 * 1024,
        batchRecords: 32,
        messageBytes: 2048,
        ...(side === 'producer' ? { producerPort: proxy.port } : { consumerPort: proxy.port }),
      });
      const n = 30_000;
      let reached: () => void = () => {};
      const halfway = new Promise<void>((resolve) => (reached = resolve));
      const reading = drain(receiver, (events) => {
        if (events.length >= 5000) reached();
      });
      let i = 0;
      for (; i < 10_000; i++) await write(sender, { key: `k${i % 11}`, value: i });
      sender.flush();
      await halfway;
      await proxy.cut();
      // Written while the connection is down: buffered, sent or lost — the protocol decides.
      for (; i < 12_000; i++) sender.write({ key: `k${i % 11}`, value: i });
      sender.flush();
      await proxy.restore();
      for (; i < n; i++) await write(sender, { key: `k${i % 11}`, value: i });
      await sender.finish();
      const events = await reading;
      const values = events.filter((e) => e[0] === 'record').map((e) => (e[1] as { value: number }).value);
      expect(values.length).toBe(n);
      expect(values).toEqual(Array.from({ length: n }, (_, k) => k));
      expect(proxy.accepted).toBeGreaterThanOrEqual(2);
      // The handshake is one resume; the cut caused at least one more.
      expect(sender.stats.resumes).toBeGreaterThanOrEqual(2);
    });
  }

  describe('bad messages fail the flow with a typed error', () => {
    /** A flow that delivered a few records, and a raw connection to inject messages with. */
    async function runningFlow() {
      const e = await edge({ batchRecords: 4 });
      for (let i = 0; i < 12; i++) e.sender.write({ value: i });
      e.sender.flush();
      let read = 0;
      while (read < 12) {
        const frame = e.receiver.tryRead();
        if (frame === null) await e.receiver.waitForFrame();
        else if (frame.kind === 'records') read += frame.records.length;
      }
      return e;
    }

    async function failure(receiver: RemoteEdgeReceiver): Promise<unknown> {
      for (;;) {
        try {
          if (receiver.tryRead() === null) await receiver.waitForFrame();
        } catch (error) {
          return error;
        }
      }
    }

    function dataMessage(generation: number, seq: number, body: Uint8Array = new Uint8Array(0)): Uint8Array {
      const bytes = new Uint8Array(WIRE_HEADER_BYTES + body.length);
      writeHeader(new DataView(bytes.buffer), MESSAGE_TYPE.data, generation, seq);
      bytes.set(body, WIRE_HEADER_BYTES);
      return bytes;
    }

    it('garbage bytes', async () => {
      const { receiver, producer, flow } = await runningFlow();
      producer.publish(receiver.subjects.data, new TextEncoder().encode('hello, not a frame'));
      const error = await failure(receiver);
      expect(error).toBeInstanceOf(RemoteEdgeProtocolError);
      expect((error as Error).message).toContain(flow);
    });

    it('a truncated frame', async () => {
      const { receiver, producer } = await runningFlow();
      // A frame header that promises 100 payload bytes and has none.
      const body = new Uint8Array(8);
      new DataView(body.buffer).setUint32(0, 1, true);
      new DataView(body.buffer).setUint32(4, 100, true);
      producer.publish(receiver.subjects.data, dataMessage(receiver.generation, receiver.expectedSeq, body));
      const error = await failure(receiver);
      expect(error).toBeInstanceOf(RemoteEdgeProtocolError);
      expect((error as Error).message).toContain('overruns');
    });

    it('a duplicate sequence number', async () => {
      const { receiver, producer } = await runningFlow();
      producer.publish(receiver.subjects.data, dataMessage(receiver.generation, 0));
      const error = await failure(receiver);
      expect(error).toBeInstanceOf(RemoteEdgeSequenceError);
      expect(error).toMatchObject({ sequenceFault: 'duplicate', receivedSeq: 0 });
    });

    it('a gap the producer cannot fill (a message it never sent)', async () => {
      const { receiver, producer } = await runningFlow();
      producer.publish(receiver.subjects.data, dataMessage(receiver.generation, receiver.expectedSeq + 5));
      const error = await failure(receiver);
      expect(error).toBeInstanceOf(RemoteEdgeSequenceError);
      expect(error).toMatchObject({ sequenceFault: 'gap' });
    });

    it('garbage on the control subject fails the sender', async () => {
      const { sender, consumer } = await runningFlow();
      consumer.publish(sender.subjects.control, new Uint8Array([0x57, 0x45, 1, 99, 0, 0, 0, 0]));
      await consumer.flush();
      // The sender fails on the message's arrival; its next call throws the typed error.
      const error = await new Promise<unknown>((resolve) => {
        const attempt = () => {
          try {
            sender.write({ value: -1 });
            sender.flush();
            setImmediate(attempt);
          } catch (e) {
            resolve(e);
          }
        };
        attempt();
      });
      expect(error).toBeInstanceOf(RemoteEdgeProtocolError);
      expect((error as Error).message).toContain('shorter than');
    });

    it('a generation the receiver never opened', async () => {
      const { receiver, producer } = await runningFlow();
      producer.publish(receiver.subjects.data, encodeSmallMessage('resumed', receiver.generation + 7, 0, 0));
      expect(await failure(receiver)).toBeInstanceOf(RemoteEdgeProtocolError);
    });
  });
});
