import { describe, expect, test } from 'vitest';
import { ChannelWriter } from '../../../src/channels/channel-writer.js';
import { Doorbell } from '../../../src/channels/doorbell.js';
import { InputGate } from '../../../src/channels/input-gate.js';
import { frameBytes, RingBuffer } from '../../../src/channels/ring-buffer.js';
import { prng } from '../../fixtures/channels/stress-sequence.js';
import { drain } from './helpers.js';

const payload = (n: number, fill = 7): Uint8Array => new Uint8Array(n).fill(fill);

describe('RingBuffer in-flight limit', () => {
  test('the writer stops at the limit although the ring has room, and goes on as the reader releases', () => {
    const ring = new RingBuffer(RingBuffer.allocate(4096));
    ring.setInFlightLimit(1000);
    expect(ring.inFlightLimit).toBe(1000);
    const frame = frameBytes(192); // 200 bytes
    let written = 0;
    while (ring.tryWrite(1, payload(192)) > 0) written++;
    expect(written).toBe(5); // 5 × 200 = 1000; the 6th would exceed the limit
    expect(ring.availableBytes()).toBe(5 * frame);
    expect(ring.canWrite(192)).toBe(false);
    expect(ring.tryRead(() => {})).toBe(frame);
    expect(ring.canWrite(192)).toBe(true);
    expect(ring.tryWrite(1, payload(192))).toBe(frame);
    expect(ring.tryWrite(1, payload(192))).toBe(0);
  });

  test('an empty ring takes one frame whatever the limit', () => {
    const ring = new RingBuffer(RingBuffer.allocate(4096));
    ring.setInFlightLimit(256);
    expect(ring.tryWrite(1, payload(1500))).toBe(frameBytes(1500));
    expect(ring.tryWrite(1, payload(8))).toBe(0);
    ring.tryRead(() => {});
    expect(ring.tryWrite(1, payload(8))).toBe(frameBytes(8));
  });

  test('0 or at least the capacity means no limit', () => {
    const ring = new RingBuffer(RingBuffer.allocate(4096));
    ring.setInFlightLimit(1 << 20);
    expect(ring.inFlightLimit).toBe(4096);
    let bytes = 0;
    for (let n = ring.tryWrite(1, payload(248)); n > 0; n = ring.tryWrite(1, payload(248))) bytes += n;
    expect(bytes).toBe(4096);
  });

  test('raising the limit wakes a parked writer; lowering it keeps published frames', async () => {
    const ring = new RingBuffer(RingBuffer.allocate(4096));
    ring.setInFlightLimit(600);
    while (ring.tryWrite(1, payload(192)) > 0);
    expect(ring.availableBytes()).toBe(600);
    const parked = ring.parkWriterAsync(192);
    expect(ring.writerParked).toBe(true);
    ring.setInFlightLimit(2000);
    expect(await parked).toBe('ok');
    expect(ring.tryWrite(1, payload(192))).toBeGreaterThan(0);
    ring.setInFlightLimit(300); // below what is in the ring: nothing lost, nothing more accepted
    expect(ring.tryWrite(1, payload(8))).toBe(0);
    let read = 0;
    while (ring.tryRead(() => {}) > 0) read++;
    expect(read).toBe(4);
  });

  test('under a limit a parked writer is woken once the ring is down to half of it, not per frame', async () => {
    const ring = new RingBuffer(RingBuffer.allocate(4096));
    ring.setInFlightLimit(1000);
    while (ring.tryWrite(1, payload(192)) > 0); // 5 frames of 200 bytes
    let woken = false;
    const parked = ring.parkWriterAsync(192).then((outcome) => {
      woken = true;
      return outcome;
    });
    ring.tryRead(() => {}); // 800 left: above 500
    ring.tryRead(() => {}); // 600 left
    await Promise.resolve();
    expect(ring.writerParked).toBe(true);
    expect(ring.stats.writerNotifies).toBe(0);
    ring.tryRead(() => {}); // 400 left: at most half the limit → wake
    expect(ring.stats.writerNotifies).toBe(1);
    expect(await parked).toBe('ok');
    expect(woken).toBe(true);
  });

  test('seeded: frames stay in order and a non-empty ring never goes past the limit', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const random = prng(seed);
      const ring = new RingBuffer(RingBuffer.allocate(8192));
      let nextWrite = 0;
      let nextRead = 0;
      let limit = 8192;
      for (let step = 0; step < 2000; step++) {
        const roll = random();
        if (roll < 0.05) {
          limit = 256 + Math.floor(random() * 8192);
          ring.setInFlightLimit(limit);
        } else if (roll < 0.6) {
          const size = 4 + Math.floor(random() * 600);
          const before = ring.availableBytes();
          const body = payload(size, nextWrite & 0xff);
          new DataView(body.buffer).setUint32(0, nextWrite, true);
          if (ring.tryWrite(1, body) > 0) {
            nextWrite++;
            if (before > 0) expect(ring.availableBytes()).toBeLessThanOrEqual(Math.min(limit, 8192));
          }
        } else {
          ring.tryRead((_word, bytes) => {
            expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true)).toBe(nextRead);
            nextRead++;
          });
        }
      }
      while (ring.tryRead(() => nextRead++) > 0);
      expect(nextRead).toBe(nextWrite);
    }
  });
});

describe('InputGate debloating', () => {
  function gateWithClock(n: number) {
    const rings = Array.from({ length: n }, () => RingBuffer.allocate(1 << 16));
    const doorbell = Doorbell.allocate();
    const writers = rings.map((r) => new ChannelWriter(r, doorbell, { batchRecords: 16 }));
    const clock = { now: 0 };
    const gate = new InputGate(rings, doorbell, {
      debloat: { targetMs: 10, periodMs: 100, minBytes: 256, samples: 1, thresholdPercent: 10 },
      now: () => clock.now,
    });
    return { rings: rings.map((r) => new RingBuffer(r)), writers, gate, clock };
  }

  test('publishes throughput × target / open channels to every open ring once per period', () => {
    const { rings, writers, gate, clock } = gateWithClock(2);
    for (const w of writers) {
      for (let i = 0; i < 64; i++) w.write('x'.repeat(100));
      w.flush();
    }
    clock.now = 50;
    expect(drain(gate).length).toBeGreaterThan(0); // inside the first period: nothing decided
    expect(gate.debloatStats.published).toBe(0);
    expect(rings[0].inFlightLimit).toBe(1 << 16);
    // One more frame after the period ends: the gate measures all bytes read over 100 busy ms.
    writers[0].write('y');
    writers[0].flush();
    clock.now = 100;
    drain(gate);
    const total = gate.channels[0].stats.bytes + gate.channels[1].stats.bytes;
    const expected = Math.floor(((total / 100) * 10) / 2);
    expect(expected).toBeGreaterThan(256); // not the floor: the figure is the throughput's
    expect(gate.debloatStats.published).toBe(1);
    expect(gate.debloatStats.limit).toBe(expected);
    expect(rings[0].inFlightLimit).toBe(expected);
    expect(rings[1].inFlightLimit).toBe(expected);
  });

  test('time spent waiting for input is not busy time', async () => {
    const { writers, gate, clock } = gateWithClock(1);
    for (let i = 0; i < 64; i++) writers[0].write('x'.repeat(100));
    writers[0].flush();
    drain(gate);
    // A wait that "lasts" 90 ms of the 100 ms period (the clock moves while the gate waits).
    const waiting = gate.waitAsync(1);
    clock.now = 90;
    await waiting;
    writers[0].write('y');
    writers[0].flush();
    clock.now = 100;
    drain(gate);
    const bytes = gate.channels[0].stats.bytes;
    // 10 busy ms of 100: ten times what the same bytes over 100 busy ms would give.
    expect(gate.debloatStats.limit).toBe(Math.floor((bytes / 10) * 10));
    expect(gate.debloatStats.limit).toBeGreaterThan(256);
  });

  test('without the option the rings are left alone', () => {
    const rings = [RingBuffer.allocate(4096)];
    const doorbell = Doorbell.allocate();
    const gate = new InputGate(rings, doorbell);
    expect(gate.debloat).toBeNull();
    const writer = new ChannelWriter(rings[0], doorbell);
    writer.write(1);
    writer.flush();
    expect(drain(gate)).toHaveLength(1);
    expect(new RingBuffer(rings[0]).inFlightLimit).toBe(4096);
  });
});
