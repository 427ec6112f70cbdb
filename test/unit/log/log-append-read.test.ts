/** Appends and reads: dense offsets per partition, routing (partition, key, key function, round-robin), read ranges, bad input. */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionError, LogRecordEncodingError } from '../../../src/errors.js';
import { openLog } from '../../../src/log/index.js';
import { partitionForKey } from '../../../src/log/partition-routing.js';
import { tempLogDir } from './helpers.js';

describe('append and read', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const fresh = (label: string, partitions = 3) => {
    const t = tempLogDir(label);
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    return { log, dir: t.dir, topic: log.topic<unknown>('events', { partitions }) };
  };

  it('assigns dense offsets from 0 per partition and returns them per record and per partition', async () => {
    const { topic } = fresh('offsets');
    const first = topic.appendSync(['a', 'b'], { partition: 1 });
    expect(first.positions).toEqual([
      { partition: 1, offset: 0 },
      { partition: 1, offset: 1 },
    ]);
    expect(first.ranges).toEqual([{ partition: 1, firstOffset: 0, endOffset: 2 }]);
    const second = await topic.append(['c'], { partition: 1 });
    expect(second.positions).toEqual([{ partition: 1, offset: 2 }]);
    const other = topic.appendSync([{ x: 1 }], { partition: 2 });
    expect(other.positions).toEqual([{ partition: 2, offset: 0 }]);
    expect([0, 1, 2].map((p) => topic.endOffset(p))).toEqual([0, 3, 1]);
    expect([0, 1, 2].map((p) => topic.startOffset(p))).toEqual([0, 0, 0]);
    expect(topic.read(1, 0, 10)).toEqual([
      { offset: 0, value: 'a' },
      { offset: 1, value: 'b' },
      { offset: 2, value: 'c' },
    ]);
    expect(topic.read(2, 0, 10)).toEqual([{ offset: 0, value: { x: 1 } }]);
    expect(topic.read(0, 0, 10)).toEqual([]);
  });

  it('reads ranges: from an offset, at most max, nothing past the end', () => {
    const { topic } = fresh('ranges', 1);
    topic.appendSync(Array.from({ length: 50 }, (_, i) => i));
    expect(topic.read(0, 10, 5).map((r) => [r.offset, r.value])).toEqual([
      [10, 10],
      [11, 11],
      [12, 12],
      [13, 13],
      [14, 14],
    ]);
    expect(topic.read(0, 48, 100).map((r) => r.offset)).toEqual([48, 49]);
    expect(topic.read(0, 50, 100)).toEqual([]);
    expect(topic.read(0, 1000, 1)).toEqual([]);
  });

  it('round-robins across partitions, continuing across appends and handles', async () => {
    const { topic, dir } = fresh('round-robin', 3);
    const a = topic.appendSync([0, 1, 2, 3]);
    expect(a.positions.map((p) => p.partition)).toEqual([0, 1, 2, 0]);
    expect(a.ranges).toEqual([
      { partition: 0, firstOffset: 0, endOffset: 2 },
      { partition: 1, firstOffset: 0, endOffset: 1 },
      { partition: 2, firstOffset: 0, endOffset: 1 },
    ]);
    const other = openLog(dir);
    const b = other.topic('events').appendSync([4, 5]);
    expect(b.positions).toEqual([
      { partition: 1, offset: 1 },
      { partition: 2, offset: 1 },
    ]);
    await other.close();
  });

  it('routes by a key value or a key function to the stable hash of the key', () => {
    const { topic } = fresh('keys', 5);
    const byValue = topic.appendSync(['x', 'y'], { key: 'user-42' });
    const expected = partitionForKey('user-42', 5);
    expect(byValue.positions.map((p) => p.partition)).toEqual([expected, expected]);
    const records = Array.from({ length: 40 }, (_, i) => ({ user: `u${i % 9}`, i }));
    const byFn = topic.appendSync(records, { key: (r) => (r as { user: string }).user });
    byFn.positions.forEach((pos, i) => {
      expect(pos.partition).toBe(partitionForKey(records[i].user, 5));
    });
    // per partition, the records of one append keep their input order
    for (let p = 0; p < 5; p++) {
      const values = topic.read(p, 0, 100).map((r) => r.value as { i?: number });
      const is = values.filter((v) => typeof v === 'object').map((v) => v.i!);
      expect(is).toEqual([...is].sort((x, y) => x - y));
    }
  });

  it('key routing is stable: pinned partitions, object key order, 1 and 1.0 agree', () => {
    // Pinned: a change of the hash would move existing keys to other partitions.
    expect(
      [0, 1, 2, 'a', 'user-1', 'user-2', true, 12345678901234n].map((k) => partitionForKey(k, 7)),
    ).toEqual(PINNED);
    expect(partitionForKey({ a: 1, b: [2, 'x'] }, 16)).toBe(partitionForKey({ b: [2, 'x'], a: 1 }, 16));
    expect(partitionForKey(1, 16)).toBe(partitionForKey(1.0, 16));
    expect(partitionForKey(-0, 16)).toBe(partitionForKey(0, 16));
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 64 }), (key, n) => {
        const p = partitionForKey(key, n);
        expect(p).toBeGreaterThanOrEqual(0);
        expect(p).toBeLessThan(n);
        expect(partitionForKey(structuredClone(key), n)).toBe(p);
      }),
      { seed: 11, numRuns: 200 },
    );
  });

  it('round-trips msgpack values', () => {
    const { topic } = fresh('values', 1);
    const values = [
      null,
      0,
      -1.5,
      'ü',
      [1, [2]],
      { a: { b: null } },
      new Date(5),
      new Uint8Array([1, 2]),
      10n,
      2n ** 70n,
    ];
    topic.appendSync(values);
    expect(topic.read(0, 0, 100).map((r) => r.value)).toEqual(values);
  });

  it('rejects a record msgpack cannot encode with a typed error, writing nothing of the batch', async () => {
    const { topic } = fresh('bad-records', 2);
    topic.appendSync(['kept'], { partition: 0 });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const bad of [Symbol('s'), () => 1, { nested: { f: () => 1 } }, cyclic]) {
      const error = (() => {
        try {
          topic.appendSync(['ok', 'ok', bad], { partition: 0 });
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(LogRecordEncodingError);
      expect((error as LogRecordEncodingError).recordIndex).toBe(2);
      await expect(topic.append(['ok', bad], { partition: 0 })).rejects.toBeInstanceOf(
        LogRecordEncodingError,
      );
    }
    // a key that cannot be hashed rejects the batch too
    expect(() => topic.appendSync([1, 2], { key: (r) => (r === 2 ? Symbol('k') : 'fine') })).toThrow(
      LogRecordEncodingError,
    );
    expect(() => topic.appendSync([1, 2], { key: Number.NaN })).toThrow(LogRecordEncodingError);
    expect(topic.endOffset(0)).toBe(1);
    expect(topic.endOffset(1)).toBe(0);
    expect(topic.read(0, 0, 10).map((r) => r.value)).toEqual(['kept']);
  });

  it('rejects bad arguments with InvalidOptionError', () => {
    const { topic } = fresh('bad-args', 3);
    expect(() => topic.appendSync('x' as never)).toThrow(InvalidOptionError);
    expect(() => topic.appendSync([1], { partition: 3 })).toThrow(/\[0, 3\)/);
    expect(() => topic.appendSync([1], { partition: -1 })).toThrow(InvalidOptionError);
    expect(() => topic.appendSync([1], { partition: 0, key: 'k' })).toThrow(/either key or partition/);
    expect(() => topic.read(3, 0, 1)).toThrow(/read\(partition\)/);
    expect(() => topic.read(0, -1, 1)).toThrow(/read\(fromOffset\)/);
    expect(() => topic.read(0, 0, 0)).toThrow(/read\(max\)/);
    expect(() => topic.endOffset(1.5)).toThrow(InvalidOptionError);
    expect(() => topic.appendTransactionSync([1], { transactionId: '' })).toThrow(/transactionId/);
    expect(topic.endOffset(0) + topic.endOffset(1) + topic.endOffset(2)).toBe(0);
  });

  it('an empty append writes nothing and returns no positions', async () => {
    const { topic } = fresh('empty', 2);
    expect(topic.appendSync([])).toEqual({ state: 'appended', positions: [], ranges: [] });
    expect(await topic.append([])).toEqual({ state: 'appended', positions: [], ranges: [] });
    expect(topic.endOffset(0)).toBe(0);
  });
});

const PINNED = [2, 4, 1, 5, 1, 0, 1, 2];
