import { describe, expect, test } from 'vitest';
import { RING_DATA_OFFSET, WRAP_MARKER } from '../../../src/channels/layout.js';
import { frameBytes, RingBuffer } from '../../../src/channels/ring-buffer.js';
import { prng } from '../../fixtures/channels/stress-sequence.js';

function payload(seq: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (seq * 31 + i) & 0xff;
  return bytes;
}

/** Reads one frame; returns [word, copy of payload] or null when empty. */
function readOne(ring: RingBuffer): [number, Uint8Array] | null {
  let got: [number, Uint8Array] | null = null;
  const n = ring.tryRead((word, bytes) => {
    got = [word, bytes.slice()];
  });
  expect(n === 0).toBe(got === null);
  return got;
}

describe('RingBuffer', () => {
  test('rejects capacities that are not powers of two or out of range', () => {
    expect(() => RingBuffer.allocate(1000)).toThrow(RangeError);
    expect(() => RingBuffer.allocate(128)).toThrow(RangeError);
    expect(() => new RingBuffer(new SharedArrayBuffer(100))).toThrow(RangeError);
  });

  test('empty ring: tryRead returns 0 and does not call the visitor', () => {
    const ring = new RingBuffer(RingBuffer.allocate(256));
    expect(ring.tryRead(() => expect.unreachable())).toBe(0);
    expect(ring.hasData()).toBe(false);
  });

  test('full ring: tryWrite returns 0, writes nothing, and succeeds again after a read', () => {
    const sab = RingBuffer.allocate(256);
    const writer = new RingBuffer(sab);
    const reader = new RingBuffer(sab);
    const frame = payload(1, 56); // 64 ring bytes per frame: exactly 4 fit
    for (let i = 0; i < 4; i++) expect(writer.tryWrite(7, frame)).toBe(64);
    expect(writer.freeBytes()).toBe(0);
    expect(writer.tryWrite(7, new Uint8Array(0))).toBe(0);
    expect(reader.availableBytes()).toBe(256);
    expect(readOne(reader)).toEqual([7, frame]);
    expect(writer.tryWrite(8, frame)).toBe(64);
    for (let i = 0; i < 3; i++) expect(readOne(reader)?.[0]).toBe(7);
    expect(readOne(reader)?.[0]).toBe(8);
    expect(readOne(reader)).toBeNull();
  });

  test('payloads above maxPayloadBytes are a caller bug (RangeError), nothing is written', () => {
    const ring = new RingBuffer(RingBuffer.allocate(256));
    expect(ring.maxPayloadBytes).toBe(120);
    expect(() => ring.tryWrite(1, new Uint8Array(121))).toThrow(RangeError);
    expect(ring.tryWrite(1, new Uint8Array(120))).toBe(frameBytes(120));
    expect(() => ring.tryWrite(1, new Uint8Array(100), new Uint8Array(21))).toThrow(RangeError);
  });

  test('wrap-around: a frame that does not fit before the end goes behind a wrap marker', () => {
    const sab = RingBuffer.allocate(256);
    const writer = new RingBuffer(sab);
    const reader = new RingBuffer(sab);
    // 3 frames of 64 bytes, read them, then a 120-byte payload (128 bytes) cannot fit in the last 64.
    for (let i = 0; i < 3; i++) writer.tryWrite(1, payload(i, 56));
    for (let i = 0; i < 3; i++) readOne(reader);
    expect(writer.tryWrite(2, payload(9, 120))).toBe(64 + 128);
    const words = new Int32Array(sab, RING_DATA_OFFSET, 64);
    expect(words[192 >> 2] >>> 0).toBe(WRAP_MARKER);
    expect(readOne(reader)).toEqual([2, payload(9, 120)]);
    expect(reader.availableBytes()).toBe(0);
  });

  test('many wraps with random sizes and gathered payloads keep content and order', () => {
    const sab = RingBuffer.allocate(512);
    const writer = new RingBuffer(sab);
    const reader = new RingBuffer(sab);
    const random = prng(42);
    const inFlight: Uint8Array[] = [];
    let written = 0;
    let read = 0;
    let mismatches = 0;
    while (read < 5000) {
      if (written < 5000 && random() < 0.6) {
        const whole = payload(written, Math.floor(random() * (writer.maxPayloadBytes + 1)));
        const cut = Math.floor(random() * (whole.length + 1));
        if (writer.tryWrite(written & 0xff, whole.subarray(0, cut), whole.subarray(cut)) > 0) {
          inFlight.push(whole);
          written++;
        }
      } else {
        reader.tryRead((word, bytes) => {
          const expected = inFlight.shift()!;
          if (word !== (read & 0xff) || Buffer.compare(bytes, expected) !== 0) mismatches++;
          read++;
        });
      }
    }
    expect(mismatches).toBe(0);
    expect(RingBuffer.canariesIntact(sab)).toBe(true);
  });

  test('free-running indices survive 32-bit wrap-around', () => {
    const sab = RingBuffer.allocate(256);
    const header = new Int32Array(sab);
    header[0] = header[16] = -64; // 2^32 - 64: the counters wrap after one frame
    const writer = new RingBuffer(sab);
    const reader = new RingBuffer(sab);
    for (let i = 0; i < 10; i++) {
      expect(writer.tryWrite(i, payload(i, 56))).toBe(64);
      expect(readOne(reader)).toEqual([i, payload(i, 56)]);
    }
    expect(header[0]).toBe(576);
  });

  test('a visitor that throws leaves the frame in the ring', () => {
    const sab = RingBuffer.allocate(256);
    const ring = new RingBuffer(sab);
    ring.tryWrite(3, payload(0, 8));
    expect(() =>
      ring.tryRead(() => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(readOne(ring)).toEqual([3, payload(0, 8)]);
  });

  test('canaries detect writes beyond the data region', () => {
    const sab = RingBuffer.allocate(256);
    expect(RingBuffer.canariesIntact(sab)).toBe(true);
    new Uint8Array(sab)[RING_DATA_OFFSET + 256] = 0;
    expect(RingBuffer.canariesIntact(sab)).toBe(false);
  });
});
