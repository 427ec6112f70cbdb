/**
 * The shape path of RecordCodec (shape-codec.ts): flat records of one shape and primitives
 * round-trip exactly (numbers bit for bit, key order, undefined), everything else falls back to
 * msgpack, and a damaged shape batch is a typed protocol error.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { RecordCodec } from '../../../src/channels/record-codec.js';
import { SHAPE_BATCH_MARK } from '../../../src/channels/shape-codec.js';
import { ChannelProtocolError } from '../../../src/errors.js';

/** Encodes on one codec, decodes on another (the two ends of a channel), like ChannelWriter/Reader. */
function roundTrip(producer: RecordCodec, consumer: RecordCodec, records: readonly unknown[]): unknown[] {
  const bytes = new Uint8Array(producer.encodeBatch(records)); // a copy, as the ring makes
  const update = producer.takeStructureUpdate();
  if (update !== null) consumer.applyStructureUpdate(new Uint8Array(update));
  return consumer.decodeBatch(bytes);
}

/** Deep equality that also tells -0 from 0 and checks key order. */
function expectExact(actual: unknown, expected: unknown): void {
  if (typeof expected === 'number') {
    expect(Object.is(actual, expected), `${String(actual)} is ${String(expected)}`).toBe(true);
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    expect(Object.keys(actual as object)).toEqual(Object.keys(expected));
    for (const k of Object.keys(expected)) {
      expectExact((actual as Record<string, unknown>)[k], (expected as Record<string, unknown>)[k]);
    }
    return;
  }
  expect(actual).toBe(expected);
}

const primitive = fc.oneof(
  fc.integer(),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  fc.double(), // includes -0, NaN, ±Infinity
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ minLength: 250, maxLength: 300 }), // around the one-byte ASCII length
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
);

describe('RecordCodec: shape path', () => {
  test('flat records of one shape round-trip exactly (property)', () => {
    let shaped = 0;
    let runs = 0;
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.oneof(
            fc.string({ maxLength: 8 }),
            fc.string({ unit: 'grapheme', maxLength: 4 }),
            fc.constantFrom('0', '1', '10', 'key', 'value', 'constructor', 'a"b\\', '\u2028'),
          ),
          {
            maxLength: 6,
          },
        ),
        fc.integer({ min: 1, max: 300 }),
        fc.infiniteStream(primitive),
        (keys, n, values) => {
          if (keys.includes('__proto__')) return;
          const it = values[Symbol.iterator]();
          const records = Array.from({ length: n }, () => {
            const r: Record<string, unknown> = {};
            for (const k of keys) r[k] = it.next().value;
            return r;
          });
          const producer = new RecordCodec();
          const decoded = roundTrip(producer, new RecordCodec(), records);
          if (keys.length > 0) runs++; // `{}` records take msgpack (no value to check a count by)
          shaped += producer.shapeStats.shapeBatches;
          expect(decoded).toHaveLength(n);
          for (let i = 0; i < n; i++) expectExact(decoded[i], records[i]);
        },
      ),
      { seed: 20261129, numRuns: 150 },
    );
    // Every batch took the shape path (the values are primitives the shape codec covers).
    expect(shaped).toBe(runs);
  });

  test('batches of primitives round-trip exactly (property)', () => {
    let shaped = 0;
    fc.assert(
      fc.property(fc.array(primitive, { minLength: 1, maxLength: 300 }), (records) => {
        const producer = new RecordCodec();
        const decoded = roundTrip(producer, new RecordCodec(), records);
        shaped += producer.shapeStats.shapeBatches;
        expect(decoded).toHaveLength(records.length);
        records.forEach((r, i) => {
          expectExact(decoded[i], r);
        });
      }),
      { seed: 7, numRuns: 300 },
    );
    expect(shaped).toBeGreaterThan(100);
  });

  test('records with nested plain objects round-trip exactly (property)', () => {
    let shaped = 0;
    // A random shape: keys with a primitive or a nested shape, up to 3 levels.
    const shapeArb = fc.letrec((tie) => ({
      node: fc.uniqueArray(
        fc.tuple(
          fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('0', 'id', 'user', 'a"b')),
          fc.oneof({ maxDepth: 2, withCrossShrink: true }, fc.constant(null), tie('node')),
        ),
        { maxLength: 4, selector: (kv) => kv[0] },
      ),
    })).node;
    type Shape = [string, Shape | null][];
    const build = (shape: Shape, next: () => unknown): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      for (const [k, child] of shape as Shape) o[k] = child === null ? next() : build(child, next);
      return o;
    };
    fc.assert(
      fc.property(
        shapeArb,
        fc.integer({ min: 1, max: 100 }),
        fc.infiniteStream(primitive),
        (shape, n, values) => {
          const flat = JSON.stringify(shape);
          if (flat.includes('"__proto__"')) return;
          const it = values[Symbol.iterator]();
          const records = Array.from({ length: n }, () => build(shape as Shape, () => it.next().value));
          const producer = new RecordCodec();
          const decoded = roundTrip(producer, new RecordCodec(), records);
          shaped += producer.shapeStats.shapeBatches;
          expect(decoded).toHaveLength(n);
          records.forEach((r, i) => {
            expectExact(decoded[i], r);
          });
        },
      ),
      { seed: 5, numRuns: 200 },
    );
    expect(shaped).toBeGreaterThan(50);
    // Nested objects that differ from the first record's take msgpack and still round-trip.
    const batches: unknown[][] = [
      [{ u: { id: 1 } }, { u: { id: 2, extra: 1 } }],
      [{ u: { id: 1 } }, { u: null }],
      [{ u: { id: 1 } }, { u: [1] }],
      [{ u: { v: { w: { x: { y: 1 } } } } }], // deeper than MAX_SHAPE_DEPTH
    ];
    for (const batch of batches) {
      const producer = new RecordCodec();
      expect(producer.encodeBatch(batch)[0]).not.toBe(SHAPE_BATCH_MARK);
      expect(roundTrip(producer, new RecordCodec(), batch)).toEqual(batch);
    }
    const nested = new RecordCodec();
    expect(nested.encodeBatch([{ id: 1, user: { name: 'a', geo: { lat: 1.5 } } }])[0]).toBe(SHAPE_BATCH_MARK);
  });

  test('event-time envelopes [timestamp | null, record] round-trip exactly (property)', () => {
    let shaped = 0;
    const timestamp = fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 2 ** 52 }), fc.double());
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(fc.tuple(timestamp, primitive, primitive), { minLength: 1, maxLength: 200 }),
        (objects, rows) => {
          const records = rows.map(([ts, a, b]) => [ts, objects ? { id: a, v: b } : a]);
          const producer = new RecordCodec();
          const decoded = roundTrip(producer, new RecordCodec(), records);
          shaped += producer.shapeStats.shapeBatches;
          expect(decoded).toHaveLength(records.length);
          records.forEach((r, i) => {
            const d = decoded[i] as unknown[];
            expect(Array.isArray(d) && d.length === 2).toBe(true);
            expectExact(d[0], r[0]);
            expectExact(d[1], r[1]);
          });
        },
      ),
      { seed: 11, numRuns: 200 },
    );
    expect(shaped).toBeGreaterThan(100);
    // Not envelopes: other arrays, a timestamp that is not a number, envelopes of mixed kinds.
    for (const batch of [
      [[1, 2, 3]],
      [['x', { a: 1 }]],
      [
        [1, { a: 1 }],
        [2, 5],
      ],
      [[1, { a: 1 }], { a: 1 }],
    ]) {
      const producer = new RecordCodec();
      expect(producer.encodeBatch(batch)[0]).not.toBe(SHAPE_BATCH_MARK);
      expect(roundTrip(producer, new RecordCodec(), batch)).toEqual(batch);
    }
  });

  test('strings with lone surrogates send their batch to msgpack, which keeps them', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 20 }), { minLength: 1, maxLength: 50 }),
        (strings) => {
          const records = strings.map((s, i) => ({ i, s }));
          expect(roundTrip(new RecordCodec(), new RecordCodec(), records)).toEqual(records);
        },
      ),
      { seed: 3, numRuns: 100 },
    );
    // (msgpackr itself turns -0 into 0 and lone surrogates in keys into U+FFFD; the shape codec
    // keeps both where it applies.)
  });

  test('flat records take the shape path; nested values, other shapes and class instances take msgpack', () => {
    const producer = new RecordCodec();
    const consumer = new RecordCodec();
    const flat = [
      { key: 'a', value: 1 },
      { key: 'b', value: 2.5 },
    ];
    expect(producer.encodeBatch(flat)[0]).toBe(SHAPE_BATCH_MARK);
    expect(producer.shapeStats).toEqual({ shapeBatches: 1, fallbacks: 0 });

    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    const others: unknown[][] = [
      [{ key: 'a', tags: ['x'] }], // nested array
      [
        { key: 'a', value: 1 },
        { value: 1, key: 'a' },
      ], // same keys, other order
      [{ key: 'a', value: 1 }, { key: 'a' }], // fewer keys
      [
        { key: 'a', value: 1 },
        { key: 'a', value: 1, extra: true },
      ], // more keys
      [new Point(1, 2)],
      [new Date(5)],
      [new Map([['a', 1]])],
      [{ n: 10n }],
      [{ a: 1 }, 'not an object'],
      ['a string', { a: 1 }],
      [JSON.parse('{"__proto__": 1, "a": 2}')],
      [Object.assign(Object.create({ inherited: 5 }), { own: 1 })], // for-in would see `inherited`
      [Object.assign(Object.create(null), { a: 1 })],
      [{ 'a\uD800': 1 }], // a key UTF-8 cannot carry
      [{ ['k'.repeat(70_000)]: 1 }], // a key longer than the header's u16 length
      [{}, {}], // no value per record
      // a later record whose for-in keys match only through an inherited key
      [{ own: 1, inherited: 2 }, Object.assign(Object.create({ inherited: 5 }), { own: 1 })],
    ];
    for (const batch of others) {
      const fresh = new RecordCodec();
      expect(fresh.encodeBatch(batch)[0], `batch #${others.indexOf(batch)}`).not.toBe(SHAPE_BATCH_MARK);
      expect(fresh.shapeStats.shapeBatches).toBe(0);
      const decoded = roundTrip(producer, consumer, batch);
      expect(decoded).toHaveLength(batch.length);
    }
    const mixed = roundTrip(producer, consumer, others[1]);
    expect(mixed.map((r) => Object.keys(r as object))).toEqual([
      ['key', 'value'],
      ['value', 'key'],
    ]);
    expect(roundTrip(producer, consumer, others[6])).toEqual(others[6]);
    // The msgpack path keeps own properties only, as it always did.
    expect(roundTrip(producer, consumer, others[11])).toEqual([{ own: 1 }]);
    expect(roundTrip(producer, consumer, others[16])).toEqual([{ own: 1, inherited: 2 }, { own: 1 }]);
  });

  test('a batch that does not fit its first record skips the shape path for a while, then retries', () => {
    const producer = new RecordCodec();
    producer.encodeBatch([{ a: 1 }, { b: 1 }]);
    expect(producer.shapeStats).toEqual({ shapeBatches: 0, fallbacks: 1 });
    let shaped = 0;
    for (let i = 0; i < 40; i++) if (producer.encodeBatch([{ a: i }])[0] === SHAPE_BATCH_MARK) shaped++;
    expect(shaped).toBeGreaterThan(0);
    expect(shaped).toBeLessThan(40);
    // every batch is counted once, as shaped or as a fallback
    expect(producer.shapeStats.shapeBatches + producer.shapeStats.fallbacks).toBe(41);
  });

  test('decoding from shared memory: nothing decoded aliases the ring', () => {
    const producer = new RecordCodec();
    const records = Array.from({ length: 50 }, (_, i) => ({ id: i, name: `n${i}`, text: 'é'.repeat(i) }));
    const bytes = producer.encodeBatch(records);
    const shared = new Uint8Array(new SharedArrayBuffer(bytes.length + 16), 8, bytes.length);
    shared.set(bytes);
    const decoded = new RecordCodec().decodeBatch(shared);
    shared.fill(0x41);
    expect(decoded).toEqual(records);
  });

  test('one encoder keeps many shapes apart', () => {
    const producer = new RecordCodec();
    const consumer = new RecordCodec();
    for (let round = 0; round < 3; round++) {
      for (let s = 0; s < 10; s++) {
        const batch = Array.from({ length: 5 }, (_, i) => ({ [`k${s}`]: i, shared: s }));
        expect(roundTrip(producer, consumer, batch)).toEqual(batch);
      }
    }
  });

  test('the decoder keeps its own copy of a header read from a Buffer over shared memory', () => {
    const producer = new RecordCodec();
    const aa = new Uint8Array(producer.encodeBatch([{ aa: 1 }]));
    const bb = new Uint8Array(producer.encodeBatch([{ bb: 1 }]));
    const ring = Buffer.from(new SharedArrayBuffer(64), 0, aa.length);
    const consumer = new RecordCodec();
    ring.set(aa);
    expect(consumer.decodeBatch(ring)).toEqual([{ aa: 1 }]);
    ring.set(bb);
    expect(consumer.decodeBatch(ring)).toEqual([{ bb: 1 }]);
  });

  test('a damaged shape batch is a ChannelProtocolError, never a wrong record', () => {
    const producer = new RecordCodec();
    const bytes = new Uint8Array(
      producer.encodeBatch(Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: i }))),
    );
    const consumer = new RecordCodec();
    expect(() => consumer.decodeBatch(bytes.subarray(0, bytes.length - 3))).toThrow(ChannelProtocolError);
    expect(() => consumer.decodeBatch(Uint8Array.of(...bytes, 0))).toThrow(/after its last record/);
    const badTag = bytes.slice();
    badTag[badTag.length - 5] = 0xee; // the tag of the last value (an i32)
    expect(() => consumer.decodeBatch(badTag)).toThrow(/unknown value tag/);
    const badKind = bytes.slice();
    badKind[1] = 9;
    expect(() => consumer.decodeBatch(badKind)).toThrow(/unknown kind/);
    // header: mark, kind, u16 2, (u16 3 'key' flag), (u16 5 'value' flag), then the u32 count at 18
    const bomb = bytes.slice();
    new DataView(bomb.buffer).setUint32(18, 0xffffffff, true);
    expect(() => consumer.decodeBatch(bomb)).toThrow(/cannot fit/);
    // A payload cut right after an ASCII tag, inside a large shared buffer: an error, not a
    // string read to the end of the buffer.
    const strings = new Uint8Array(producer.encodeBatch(Array.from({ length: 10 }, () => ({ s: 'abc' }))));
    const ring = new Uint8Array(new SharedArrayBuffer(1 << 20));
    ring.set(strings.subarray(0, strings.length - 4));
    expect(() => new RecordCodec().decodeBatch(ring.subarray(0, strings.length - 4))).toThrow(/past its end/);
    const repeated = new Uint8Array(producer.encodeBatch([{ ab: 1, ac: 2 }]));
    repeated[12] = 0x62; // 'ac' -> 'ab' (mark, kind, u16 2, u16 2 'ab' flag, u16 2 'ac' flag)
    expect(() => new RecordCodec().decodeBatch(repeated)).toThrow(/not allowed or repeated/);
  });
});
