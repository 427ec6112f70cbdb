import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ChannelWriter } from '../../../src/channels/channel-writer.js';
import { Doorbell } from '../../../src/channels/doorbell.js';
import { InputGate } from '../../../src/channels/input-gate.js';
import { RingBuffer } from '../../../src/channels/ring-buffer.js';
import { ChannelClosedError } from '../../../src/errors.js';
import { Peer } from '../../fixtures/channels/peer-handle.js';
import { channels, drain } from './helpers.js';

/** Yields to the event loop until `condition` (a reading of shared memory) holds. No timers. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe('close while the peer is blocked (two threads)', () => {
  let peer: Peer;
  beforeAll(() => {
    peer = new Peer();
  });
  afterAll(() => peer.terminate());

  test.each(['sync', 'async'] as const)(
    'writer parked on a full ring (%s) gets ChannelClosedError',
    async (mode) => {
      const ring = RingBuffer.allocate(256);
      const doorbell = Doorbell.allocate();
      const reply = peer.request({ cmd: 'fill-and-block', ring, doorbell, mode });
      const reader = new RingBuffer(ring);
      await Promise.race([until(() => reader.writerParked), peer.failure]);
      new InputGate([ring], doorbell).close(); // the consumer is cancelled
      expect(await reply).toMatchObject({
        ok: false,
        name: 'ChannelClosedError',
        message: expect.stringMatching(/consumer/),
      });
    },
  );

  test.each(['sync', 'async'] as const)(
    'reader parked on its doorbell (%s) gets ChannelClosedError',
    async (mode) => {
      const ring = RingBuffer.allocate(1024);
      const doorbell = Doorbell.allocate();
      const writer = new ChannelWriter(ring, doorbell);
      writer.write('published before the close');
      writer.flush();
      const reply = peer.request({ cmd: 'read-and-block', ring, doorbell, mode });
      // The peer parks only after it drained the ring: the frame published before the close is read.
      await Promise.race([
        until(() => writer.doorbell.consumerParked && writer.ring.availableBytes() === 0),
        peer.failure,
      ]);
      writer.close(); // the producer is cancelled: no EndOfPartition
      expect(await reply).toMatchObject({
        ok: false,
        name: 'ChannelClosedError',
        message: expect.stringMatching(/producer before end of partition/),
      });
    },
  );

  test('reader parked (sync) wakes when another thread closes its doorbell (task cancel)', async () => {
    const ring = RingBuffer.allocate(1024);
    const doorbell = Doorbell.allocate();
    const bell = new Doorbell(doorbell);
    const reply = peer.request({ cmd: 'read-and-block', ring, doorbell, mode: 'sync' });
    await Promise.race([until(() => bell.consumerParked), peer.failure]);
    bell.close();
    expect(await reply).toMatchObject({
      ok: false,
      name: 'ChannelClosedError',
      message: expect.stringMatching(/doorbell/),
    });
  });
});

describe('close while the peer is blocked (one thread, async)', () => {
  test('waitForCapacity rejects when the consumer closes', async () => {
    const { writers, gate } = channels(1, 256, { batchRecords: 1 });
    while (!writers[0].backlogged) writers[0].write('x'.repeat(50));
    const waiting = writers[0].waitForCapacity();
    expect(writers[0].ring.writerParked).toBe(true);
    gate.close();
    await expect(waiting).rejects.toThrow(ChannelClosedError);
    expect(() => writers[0].write(1)).toThrow(/closed by its consumer/); // batchRecords 1: seals at once
    expect(() => writers[0].flush()).toThrow(ChannelClosedError);
  });

  test('waitForCapacity rejects when the writer itself closes', async () => {
    const { writers } = channels(1, 256, { batchRecords: 1 });
    while (!writers[0].backlogged) writers[0].write('x'.repeat(50));
    const waiting = writers[0].waitForCapacity();
    writers[0].close();
    await expect(waiting).rejects.toThrow(/closed by this writer/);
    expect(() => writers[0].write(1)).toThrow(ChannelClosedError);
  });

  test('gate.waitAsync resolves when the producer closes; earlier frames are still delivered first', async () => {
    const { writers, gate } = channels(2);
    writers[0].write('early');
    writers[0].flush();
    expect(drain(gate)).toHaveLength(1);
    const parked = gate.waitAsync();
    writers[1].write('late');
    writers[1].flush();
    writers[1].close();
    await parked;
    expect(gate.pollNext()?.frame).toEqual({ kind: 'records', records: ['late'] });
    expect(() => gate.pollNext()).toThrow(
      /input channel 1: channel closed by its producer before end of partition/,
    );
  });

  test('gate.waitAsync rejects when the gate is closed on its own thread', async () => {
    const { writers, gate } = channels(1);
    const parked = gate.waitAsync();
    gate.close();
    await expect(parked).rejects.toThrow(ChannelClosedError);
    expect(() => gate.pollNext()).toThrow(ChannelClosedError);
    expect(() => writers[0].flush()).toThrow(/closed by its consumer/);
  });
});
