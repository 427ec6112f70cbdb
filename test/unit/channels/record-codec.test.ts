import { describe, expect, test } from 'vitest';
import { RecordCodec, SHARED_STRUCTURES } from '../../../src/channels/record-codec.js';

// Flat records of one shape take the shape path (shape-codec.test.ts); the msgpack path and its
// shared structures are exercised with records holding a nested value.
describe('RecordCodec: msgpack path', () => {
  test('shapes travel once, before the first batch that uses them', () => {
    const producer = new RecordCodec();
    const consumer = new RecordCodec();
    const first = producer.encodeBatch([{ key: 'a', value: 1, tags: ['t'] }]).slice();
    const update = producer.takeStructureUpdate();
    expect(update).not.toBeNull();
    consumer.applyStructureUpdate(update!);
    expect(consumer.decodeBatch(first)).toEqual([{ key: 'a', value: 1, tags: ['t'] }]);
    const second = producer.encodeBatch([{ key: 'b', value: 2, tags: [] }]).slice();
    expect(producer.takeStructureUpdate()).toBeNull();
    expect(consumer.decodeBatch(second)).toEqual([{ key: 'b', value: 2, tags: [] }]);
  });

  test('a consumer that missed the shapes cannot decode (the update is necessary)', () => {
    const producer = new RecordCodec();
    producer.encodeBatch([{ key: 'a', value: 1, tags: ['t'] }]);
    producer.takeStructureUpdate();
    const batch = producer.encodeBatch([{ key: 'b', value: 2, tags: [] }]).slice();
    expect(() => new RecordCodec().decodeBatch(batch)).toThrow(/undecodable/);
  });

  test('more shapes than can be shared still round-trip (inline structures)', () => {
    const producer = new RecordCodec();
    const consumer = new RecordCodec();
    const records = Array.from({ length: SHARED_STRUCTURES * 3 }, (_, i) => ({
      [`f${i}`]: i,
      common: ['x'],
    }));
    for (let round = 0; round < 2; round++) {
      const bytes = producer.encodeBatch(records).slice();
      const update = producer.takeStructureUpdate();
      if (update !== null) consumer.applyStructureUpdate(update);
      expect(consumer.decodeBatch(bytes)).toEqual(records);
    }
  });

  test('an update out of order is a protocol error', () => {
    const a = new RecordCodec();
    a.encodeBatch([{ x: [1] }]);
    a.takeStructureUpdate();
    a.encodeBatch([{ y: [1] }]);
    const second = a.takeStructureUpdate()!;
    expect(() => new RecordCodec().applyStructureUpdate(second)).toThrow(/expected 0/);
  });
});
