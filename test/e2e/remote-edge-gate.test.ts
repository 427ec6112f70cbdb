/**
 * A remote edge as an input gate's channel, next to a ring (src/channels/input-gate.ts with a
 * RemoteEdgeReceiver as one of its channels), against the machine's NATS server: seeded scripts of
 * records and barriers arrive per channel in order and exactly, an asynchronous park is woken by
 * a remote arrival, a blocked remote channel (barrier alignment) holds its producer through the
 * credit window and releases it when unblocked, a flow's failure surfaces from `pollNext`, and
 * such a gate refuses a blocking park. Imports src/ directly; the task loop over such a gate runs
 * in test/e2e/remote-edge-job.test.ts.
 *
 * Cleanup: core NATS subjects only; flows are named per test; subscriptions and connections close.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelWriter } from '../../src/channels/channel-writer.js';
import { Doorbell } from '../../src/channels/doorbell.js';
import type { ControlFrame, Frame } from '../../src/channels/frame.js';
import { InputGate } from '../../src/channels/input-gate.js';
import { RingBuffer } from '../../src/channels/ring-buffer.js';
import { RemoteEdgeReceiver } from '../../src/cluster/remote-edge-receiver.js';
import { RemoteEdgeSender } from '../../src/cluster/remote-edge-sender.js';
import { InvalidOptionError, RemoteEdgeProtocolError } from '../../src/errors.js';
import { prng } from '../fixtures/channels/stress-sequence.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let flows = 0;

async function natsConnection(): Promise<NatsConnection> {
  const nc = await connect({ servers: '127.0.0.1:4222' });
  cleanups.push(() => nc.close());
  return nc;
}

/** A gate over [ring, remote edge], both producers on this thread. */
async function mixedGate(windowBytes = 1024 * 1024) {
  const flow = `gate${process.pid}-${Date.now().toString(36)}-${flows++}`;
  const producer = await natsConnection();
  const consumer = await natsConnection();
  const sender = new RemoteEdgeSender({
    connection: producer,
    flow,
    windowBytes,
    batchRecords: 16,
    messageBytes: 1024,
    resyncAfterMs: 200,
  });
  const receiver = new RemoteEdgeReceiver({ connection: consumer, flow, windowBytes, resyncAfterMs: 200 });
  const ring = RingBuffer.allocate(256 * 1024);
  const doorbell = Doorbell.allocate();
  const ringWriter = new ChannelWriter(ring, doorbell, { batchRecords: 16 });
  const gate = new InputGate([ring, receiver], doorbell);
  cleanups.push(() => {
    sender.close();
    gate.close();
  });
  await receiver.start();
  sender.start();
  return { producer, consumer, sender, receiver, ringWriter, gate };
}

type Item = { record: unknown } | { control: ControlFrame };

/** A seeded script: records with barriers (aligned or not) in between, then end-of-partition. */
function script(seed: number, count: number): Item[] {
  const random = prng(seed);
  const items: Item[] = [];
  let checkpointId = 1;
  for (let i = 0; i < count; i++) {
    items.push({ record: { seed, i, key: `k${Math.floor(random() * 7)}`, pad: 'x'.repeat(random() * 40) } });
    if (random() < 0.02) {
      items.push({
        control: {
          kind: 'barrier',
          checkpointId: checkpointId++,
          timestamp: 1_700_000_000_000 + i,
          checkpointType: 'checkpoint',
          unaligned: random() < 0.5,
        },
      });
    }
  }
  items.push({ control: { kind: 'end-of-partition' } });
  return items;
}

function flatten(frame: Frame): Item[] {
  return frame.kind === 'records' ? frame.records.map((record) => ({ record })) : [{ control: frame }];
}

/** Reads the gate until every channel ended, parking asynchronously when nothing is ready. */
async function readAll(gate: InputGate): Promise<Item[][]> {
  const out: Item[][] = gate.channels.map(() => []);
  while (!gate.allEnded) {
    const next = gate.pollNext();
    if (next === null) await gate.waitAsync();
    else out[next.channelIndex].push(...flatten(next.frame));
  }
  return out;
}

describe('a remote edge as an input gate channel', () => {
  for (const seed of [1, 2, 3]) {
    it(`seeded script ${seed}: records and barriers from a ring and a remote edge arrive per channel in order and exactly`, async () => {
      const { sender, ringWriter, gate } = await mixedGate();
      expect(gate.mayParkBlocking).toBe(false);
      const viaRing = script(seed * 2, 600);
      const viaRemote = script(seed * 2 + 1, 600);
      const reading = readAll(gate);
      for (const item of viaRing) {
        if ('record' in item) ringWriter.write(item.record);
        else ringWriter.writeControl(item.control);
      }
      ringWriter.flush();
      for (const item of viaRemote) {
        if ('record' in item) sender.write(item.record);
        else sender.writeControl(item.control);
        if (sender.backlogged) await sender.waitForCapacity();
      }
      sender.flush();
      const [fromRing, fromRemote] = await reading;
      expect(fromRing).toEqual(viaRing);
      expect(fromRemote).toEqual(viaRemote);
    });
  }

  it('a blocked remote channel holds its producer through the credit window; unblocking releases it', async () => {
    const windowBytes = 4096;
    const { producer, consumer, sender, receiver, gate } = await mixedGate(windowBytes);
    // The handshake first (a sender holds everything until the receiver's first resume): one
    // record through the gate.
    sender.write({ first: true });
    sender.flush();
    for (let next = gate.pollNext(); next?.frame.kind !== 'records'; next = gate.pollNext())
      if (next === null) await gate.waitAsync();
    gate.block(1);
    let written = 0;
    while (!sender.backlogged) {
      sender.write({ i: written++, pad: 'y'.repeat(50) });
      if (written % 16 === 0) sender.flush();
      expect(written).toBeLessThan(10_000); // the window must stop it long before
    }
    let released = false;
    const capacity = sender.waitForCapacity().then(() => {
      released = true;
    });
    // Round trips on both connections: every credit the receiver could send has reached the sender.
    await consumer.flush();
    await producer.flush();
    await consumer.flush();
    expect(gate.pollNext()).toBeNull(); // blocked: nothing is read
    expect(released).toBe(false);
    expect(sender.stats.creditStalls).toBeGreaterThan(0);
    expect(sender.outstandingBytes).toBeLessThanOrEqual(windowBytes);
    expect(receiver.queuedBytes).toBeLessThanOrEqual(windowBytes);

    gate.unblock(1);
    const records: unknown[] = [];
    const reading = (async () => {
      while (records.length < written) {
        const next = gate.pollNext();
        if (next === null) await gate.waitAsync();
        else if (next.frame.kind === 'records') records.push(...next.frame.records);
      }
    })();
    await capacity;
    expect(released).toBe(true);
    sender.flush();
    await reading;
    expect(records).toEqual(Array.from({ length: written }, (_, i) => ({ i, pad: 'y'.repeat(50) })));
  });

  it("a remote flow's failure surfaces from pollNext; a blocking park is refused", async () => {
    const { producer, receiver, gate } = await mixedGate();
    expect(() => gate.waitSync(0)).toThrow(InvalidOptionError);
    producer.publish(receiver.subjects.data, new Uint8Array([1, 2, 3]));
    await expect(
      (async () => {
        for (;;) {
          if (gate.pollNext() === null) await gate.waitAsync();
        }
      })(),
    ).rejects.toThrow(RemoteEdgeProtocolError);
  });

  it('a gate of rings only may park blocking', () => {
    const gate = new InputGate([RingBuffer.allocate(4096)], Doorbell.allocate());
    expect(gate.mayParkBlocking).toBe(true);
    gate.close();
  });
});
