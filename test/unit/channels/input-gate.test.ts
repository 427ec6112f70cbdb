import { describe, expect, test } from 'vitest';
import { Doorbell } from '../../../src/channels/doorbell.js';
import { InputGate, SPIN_GIVE_UP_AFTER, SPIN_PROBE_EVERY } from '../../../src/channels/input-gate.js';
import { RingBuffer } from '../../../src/channels/ring-buffer.js';
import { channels, drain } from './helpers.js';

describe('InputGate', () => {
  test('a blocked channel is not read: its frames stay in its ring, its producer backs up', () => {
    const { rings, writers, gate } = channels(2, 256, { batchRecords: 1 });
    gate.block(0);
    expect(gate.isBlocked(0)).toBe(true);
    let n = 0;
    while (!writers[0].backlogged) writers[0].write(n++);
    writers[1].write('other');
    const held = new RingBuffer(rings[0]).availableBytes();
    expect(drain(gate).map((f) => [f.channelIndex, f.frame])).toEqual([
      [1, { kind: 'records', records: ['other'] }],
    ]);
    expect(new RingBuffer(rings[0]).availableBytes()).toBe(held);
    expect(writers[0].flush()).toBe(false); // backpressure is real
    gate.unblock(0);
    expect(gate.isBlocked(0)).toBe(false);
    const got = drain(gate);
    expect(got.length).toBeGreaterThan(0);
    expect(got.every((f) => f.channelIndex === 0)).toBe(true);
  });

  test('round-robin: a channel with a long backlog cannot starve the others', () => {
    const { writers, gate } = channels(3, 65536, { batchRecords: 1 });
    for (let i = 0; i < 50; i++) writers[0].write(i); // long backlog on channel 0
    writers[1].write('a');
    writers[2].write('b');
    writers[1].write('c');
    const order = drain(gate).map((f) => f.channelIndex);
    expect(order.slice(0, 5)).toEqual([0, 1, 2, 0, 1]);
    expect(order).toHaveLength(53);
  });

  test('tracks EndOfPartition per channel and allEnded; ended channels are skipped', () => {
    const { writers, gate } = channels(2);
    writers[0].writeControl({ kind: 'end-of-partition' });
    drain(gate);
    expect(gate.isEnded(0)).toBe(true);
    expect(gate.isEnded(1)).toBe(false);
    expect(gate.allEnded).toBe(false);
    writers[0].close(); // closing after the end is normal: no error
    writers[1].write(1);
    writers[1].writeControl({ kind: 'end-of-partition' });
    expect(drain(gate).map((f) => f.frame.kind)).toEqual(['records', 'end-of-partition']);
    expect(gate.allEnded).toBe(true);
    expect(gate.pollNext()).toBeNull();
  });

  test('channel indices are range-checked', () => {
    const { gate } = channels(2);
    expect(() => gate.block(2)).toThrow(RangeError);
    expect(() => gate.isEnded(-1)).toThrow(RangeError);
  });

  test('waitSync returns at once when a frame is ready and times out when none comes', () => {
    const { writers, gate } = channels(1);
    expect(gate.waitSync(1)).toBe(false);
    writers[0].write(1);
    writers[0].flush();
    expect(gate.waitSync(10_000)).toBe(true);
  });

  test('waitAsync resolves on a write, and on wake() from the same thread', async () => {
    const { writers, gate } = channels(1);
    const parked = gate.waitAsync();
    expect(gate.doorbell.consumerParked).toBe(true);
    writers[0].write('x');
    writers[0].flush(); // rings the doorbell: the consumer flagged that it sleeps, so it notifies
    await parked;
    expect(writers[0].doorbell.stats.notifies).toBe(1);
    expect(drain(gate)).toHaveLength(1);

    const parkedAgain = gate.waitAsync();
    gate.wake(); // e.g. a control message arrived on the task's own thread
    await parkedAgain;
    expect(gate.pollNext()).toBeNull();
  });

  test('producers do not notify a consumer that is not parked', () => {
    const { writers, gate } = channels(1, 4096, { batchRecords: 1 });
    for (let i = 0; i < 10; i++) writers[0].write(i);
    expect(writers[0].doorbell.stats.rings).toBe(10);
    expect(writers[0].doorbell.stats.notifies).toBe(0);
    drain(gate);
  });

  test('adaptive spin: gives up after fruitless spins, probes now and then, resumes on a hit', () => {
    const ring = RingBuffer.allocate(4096);
    const gate = new InputGate([ring], Doorbell.allocate(), { spinMicros: 1 });
    // Nothing is ever published: every wait times out at once (timeout 0) after its spin, if any.
    for (let i = 0; i < SPIN_GIVE_UP_AFTER; i++) gate.waitSync(0);
    expect(gate.spinStats).toEqual({ hits: 0, misses: SPIN_GIVE_UP_AFTER, skipped: 0 });
    for (let i = 0; i < SPIN_PROBE_EVERY - 1; i++) gate.waitSync(0);
    expect(gate.spinStats.skipped).toBe(SPIN_PROBE_EVERY - 1);
    gate.waitSync(0); // the probe
    expect(gate.spinStats).toEqual({
      hits: 0,
      misses: SPIN_GIVE_UP_AFTER + 1,
      skipped: SPIN_PROBE_EVERY - 1,
    });
    // Data already there returns before any spin (neither a hit nor a miss).
    new RingBuffer(ring).tryWrite(1, new Uint8Array([1]));
    expect(gate.waitSync(0)).toBe(true);
    expect(gate.spinStats.hits).toBe(0);
  });
});
