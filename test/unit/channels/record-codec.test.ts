import { describe, expect, test } from 'vitest';
import { RecordCodec, SHARED_STRUCTURES } from '../../../src/channels/record-codec.js';

describe('RecordCodec', () => {
  test('shapes travel once, before the first batch that uses them', () => {
    const producer = new RecordCodec();
    const consumer = new RecordCodec();
    const first = producer.encodeBatch([{ key: 'a', value: 1 }]).slice();
    const update = producer.takeStructureUpdate();
    expect(update).not.toBeNull();
    consumer.applyStructureUpdate(update!);
    expect(consumer.decodeBatch(first)).toEqual([{ key: 'a', value: 1 }]);
    const second = producer.encodeBatch([{ key: 'b', value: 2 }]).slice();
    expect(producer.takeStructureUpdate()).toBeNull();
    expect(consumer.decodeBatch(second)).toEqual([{ key: 'b', value: 2 }]);
  });

  test('a consumer that missed the shapes cannot decode (the update is necessary)', () => {
    const producer = new RecordCodec();
    producer.encodeBatch([{ key: 'a', value: 1 }]);
    producer.takeStructureUpdate();
    const batch = producer.encodeBatch([{ key: 'b', value: 2 }]).slice();
    expect(() => new RecordCodec().decodeBatch(batch)).toThrow(/undecodable/);
  });

  test('more shapes than can be shared still round-trip (inline structures)', () => {
    const producer = new RecordCodec();
    const consumer = new RecordCodec();
    const records = Array.from({ length: SHARED_STRUCTURES * 3 }, (_, i) => ({ [`f${i}`]: i, common: 'x' }));
    for (let round = 0; round < 2; round++) {
      const bytes = producer.encodeBatch(records).slice();
      const update = producer.takeStructureUpdate();
      if (update !== null) consumer.applyStructureUpdate(update);
      expect(consumer.decodeBatch(bytes)).toEqual(records);
    }
  });

  test('an update out of order is a protocol error', () => {
    const a = new RecordCodec();
    a.encodeBatch([{ x: 1 }]);
    a.takeStructureUpdate();
    a.encodeBatch([{ y: 1 }]);
    const second = a.takeStructureUpdate()!;
    expect(() => new RecordCodec().applyStructureUpdate(second)).toThrow(/expected 0/);
  });
});
