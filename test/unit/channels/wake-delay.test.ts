import { describe, expect, test } from 'vitest';
import { ChannelWriter, type ChannelWriterOptions } from '../../../src/channels/channel-writer.js';
import { Doorbell } from '../../../src/channels/doorbell.js';
import { InputGate } from '../../../src/channels/input-gate.js';
import { DOORBELL_SLEEPING } from '../../../src/channels/layout.js';
import { RingBuffer } from '../../../src/channels/ring-buffer.js';
import { InvalidOptionError } from '../../../src/errors.js';
import { drain } from './helpers.js';

/**
 * Wake-up batching (ChannelWriterOptions.wakeDelayMs), both ends on this thread: the consumer's
 * park is simulated by setting the doorbell's sleeping word, as `Doorbell.#prepare` does before
 * it waits; a ring is seen as the doorbell's sequence moving (and the flag cleared).
 */
function setup(options: ChannelWriterOptions & { capacity?: number }) {
  const ring = RingBuffer.allocate(options.capacity ?? 1 << 16);
  const bell = Doorbell.allocate();
  let clock = 0;
  const writer = new ChannelWriter(ring, bell, { batchRecords: 4, now: () => clock, ...options });
  const gate = new InputGate([ring], bell);
  const words = new Int32Array(bell);
  return {
    writer,
    gate,
    park: () => Atomics.store(words, DOORBELL_SLEEPING, 1),
    parked: () => Atomics.load(words, DOORBELL_SLEEPING) === 1,
    sequence: () => gate.doorbell.sequence(),
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

const batch = (w: ChannelWriter, from: number) => {
  for (let i = from; i < from + 4; i++) w.write(i);
};

describe('ChannelWriter wakeDelayMs', () => {
  test('off (0, the default): every full batch rings a parked consumer', () => {
    const s = setup({ wakeDelayMs: 0 });
    s.park();
    const before = s.sequence();
    batch(s.writer, 0);
    expect(s.sequence()).toBe(before + 1);
    expect(s.parked()).toBe(false);
    expect(s.writer.stats.deferredRings).toBe(0);
  });

  test('full batches for a parked consumer stay unrung, yet published, until the delay passed', () => {
    const s = setup({ wakeDelayMs: 10 });
    s.park();
    const before = s.sequence();
    batch(s.writer, 0);
    s.advance(9);
    batch(s.writer, 4);
    expect(s.sequence()).toBe(before);
    expect(s.parked()).toBe(true);
    expect(s.writer.stats.deferredRings).toBe(2);
    // Published: a consumer that looks (woken by anything) reads them.
    expect(s.gate.hasReady()).toBe(true);
    s.advance(1); // 10 ms since the first unrung batch
    batch(s.writer, 8);
    expect(s.sequence()).toBe(before + 1);
    expect(s.parked()).toBe(false);
    const records = drain(s.gate).flatMap((f) => (f.frame.kind === 'records' ? f.frame.records : []));
    expect(records).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  test('a producer slow per record still rings once the delay passed, at its next 8th record', () => {
    const s = setup({ wakeDelayMs: 10, batchRecords: 64 });
    s.park();
    const before = s.sequence();
    for (let i = 0; i < 64; i++) s.writer.write(i); // full: published, left unrung
    expect(s.sequence()).toBe(before);
    s.advance(10);
    for (let i = 64; i < 71; i++) s.writer.write(i);
    expect(s.sequence()).toBe(before);
    s.writer.write(71); // the 8th record of the open batch
    expect(s.sequence()).toBe(before + 1);
    expect(s.parked()).toBe(false);
    expect(s.writer.bufferedRecords).toBe(8); // the open batch is not flushed for it
  });

  test('a consumer that is not parked is rung (cheaply) after every full batch', () => {
    const s = setup({ wakeDelayMs: 1000 });
    const before = s.sequence();
    batch(s.writer, 0);
    batch(s.writer, 4);
    expect(s.sequence()).toBe(before + 2);
    expect(s.writer.stats.deferredRings).toBe(0);
  });

  test('flush, control frames and ringDeferred ring at once', () => {
    for (const stop of [
      (w: ChannelWriter) => w.flush(),
      (w: ChannelWriter) => w.writeControl({ kind: 'watermark', timestamp: 1 }),
      (w: ChannelWriter) => w.ringDeferred(),
    ]) {
      const s = setup({ wakeDelayMs: 1000 });
      s.park();
      const before = s.sequence();
      batch(s.writer, 0);
      expect(s.sequence()).toBe(before);
      stop(s.writer);
      expect(s.sequence()).toBe(before + 1);
      expect(s.parked()).toBe(false);
    }
  });

  test('a ring a quarter full rings, so the producer does not run into backpressure unrung', () => {
    const s = setup({ wakeDelayMs: 1000, capacity: 4096 });
    s.park();
    const before = s.sequence();
    let i = 0;
    while (s.sequence() === before) {
      batch(s.writer, i);
      i += 4;
      expect(s.writer.backlogged).toBe(false);
    }
    const used = s.writer.ring.usedBytes;
    expect(used).toBeGreaterThanOrEqual(1024);
    expect(used).toBeLessThan(2048);
  });

  /** Two producers into one parked consumer, one clock (a keyed task at parallelism 2). */
  function twoProducers(wakeDelayMs: number, batchRecords = 4) {
    const rings = [RingBuffer.allocate(1 << 16), RingBuffer.allocate(1 << 16)];
    const bell = Doorbell.allocate();
    let clock = 0;
    const [a, b] = rings.map(
      (r) => new ChannelWriter(r, bell, { batchRecords, wakeDelayMs, now: () => clock }),
    );
    const gate = new InputGate(rings, bell);
    const words = new Int32Array(bell);
    const received: number[][] = [[], []];
    return {
      a,
      b,
      park: () => Atomics.store(words, DOORBELL_SLEEPING, 1),
      sequence: () => gate.doorbell.sequence(),
      at: (ms: number) => {
        clock = ms;
      },
      /** The consumer wakes (rung by either producer) and reads everything published. */
      consume: () => {
        for (const f of drain(gate))
          if (f.frame.kind === 'records') received[f.channelIndex].push(...(f.frame.records as number[]));
      },
      received,
    };
  }

  test('a consumer that read the unrung batches (woken by another producer) restarts the wait', () => {
    const s = twoProducers(10);
    s.park();
    const start = s.sequence();
    batch(s.a, 0); // t=0: A's wait starts
    batch(s.b, 100); // t=0: B's wait starts
    s.at(10);
    batch(s.a, 4); // A's first unrung batch waited 10 ms: A rings
    expect(s.sequence()).toBe(start + 1);
    s.consume(); // the consumer reads A's and B's batches, then parks again
    s.park();
    s.at(15);
    batch(s.b, 104); // B's t=0 batch was read: its wait restarts at 15 instead of ringing
    expect(s.sequence()).toBe(start + 1);
    expect(s.b.stats.deferredRings).toBe(2);
    s.at(24);
    batch(s.b, 108);
    expect(s.sequence()).toBe(start + 1);
    s.at(25); // the bound still holds for the unread batch of t=15
    batch(s.b, 112);
    expect(s.sequence()).toBe(start + 2);
    s.consume();
    expect(s.received[0]).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(s.received[1]).toEqual(Array.from({ length: 16 }, (_, i) => 100 + i));
  });

  test('a slow producer whose unrung batch was read does not ring for it at its next 8th record', () => {
    const s = twoProducers(10, 16);
    s.park();
    const start = s.sequence();
    for (let i = 0; i < 16; i++) s.b.write(i); // t=0: full, published, unrung
    s.consume(); // woken by another producer: B's batch is read
    s.park();
    s.at(10);
    for (let i = 16; i < 24; i++) s.b.write(i); // overdue, but nothing published is unread
    expect(s.sequence()).toBe(start);
    expect(s.b.bufferedRecords).toBe(8);
    s.b.flush(); // the input went idle: the open batch goes out and rings at once
    expect(s.sequence()).toBe(start + 1);
    s.consume();
    expect(s.received[1]).toEqual(Array.from({ length: 24 }, (_, i) => i));
  });

  test('close rings', () => {
    const s = setup({ wakeDelayMs: 1000 });
    s.park();
    const before = s.sequence();
    batch(s.writer, 0);
    s.writer.close();
    expect(s.sequence()).toBe(before + 1);
  });

  test('options are checked up front', () => {
    const ring = RingBuffer.allocate(256);
    const bell = Doorbell.allocate();
    expect(() => new ChannelWriter(ring, bell, { wakeDelayMs: -1 })).toThrow(InvalidOptionError);
    expect(() => new ChannelWriter(ring, bell, { wakeDelayMs: Number.NaN })).toThrow(InvalidOptionError);
  });
});
