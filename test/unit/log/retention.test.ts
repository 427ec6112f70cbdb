/** Retention by size and by age: whole records from the start of each partition, never more than the limits ask. */
import { afterEach, describe, expect, it } from 'vitest';
import { openLog } from '../../../src/log/index.js';
import { RECORD_HEADER_BYTES } from '../../../src/log/log-layout.js';
import { retentionDeletesHead } from '../../../src/log/retention.js';
import { tempLogDir } from './helpers.js';

/** A 20-character string encodes to 21 bytes of msgpack: 29 stored bytes with the header. */
const RECORD = 'x'.repeat(20);
const STORED = RECORD_HEADER_BYTES + 21;

describe('retention rule (pure)', () => {
  const head = (partitionBytes: number, isNewest: boolean, headAppendedAt: number) => ({
    partitionBytes,
    isNewest,
    headAppendedAt,
  });
  it('size deletes the head while over the limit, but never the newest record', () => {
    expect(retentionDeletesHead({ maxBytes: 100 }, head(101, false, 0), 0)).toBe(true);
    expect(retentionDeletesHead({ maxBytes: 100 }, head(100, false, 0), 0)).toBe(false);
    expect(retentionDeletesHead({ maxBytes: 100 }, head(500, true, 0), 0)).toBe(false);
  });
  it('age deletes a head older than maxAgeMs, even the newest record', () => {
    expect(retentionDeletesHead({ maxAgeMs: 10 }, head(1, true, 89), 100)).toBe(true);
    expect(retentionDeletesHead({ maxAgeMs: 10 }, head(1, true, 90), 100)).toBe(false);
  });
  it('no policy deletes nothing', () => {
    expect(retentionDeletesHead({}, head(1e9, false, 0), 1e12)).toBe(false);
  });
});

describe('retention on a topic', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('by size: keeps the newest records within maxBytes per partition, offsets unchanged', () => {
    const t = tempLogDir('size');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    const topic = log.topic<string>('events', { partitions: 2, retention: { maxBytes: 3 * STORED } });
    topic.appendSync([RECORD, RECORD], { partition: 0 });
    expect(topic.startOffset(0)).toBe(0);
    topic.appendSync([RECORD, RECORD, RECORD], { partition: 0 });
    // 5 records, room for 3: offsets 0 and 1 go, exactly
    expect(topic.startOffset(0)).toBe(2);
    expect(topic.endOffset(0)).toBe(5);
    expect(topic.read(0, 0, 10).map((r) => r.offset)).toEqual([2, 3, 4]);
    // the other partition is untouched
    topic.appendSync([RECORD], { partition: 1 });
    expect(topic.read(1, 0, 10).map((r) => r.offset)).toEqual([0]);
    // one append larger than the limit keeps only its newest records that fit
    topic.appendSync(
      Array.from({ length: 10 }, () => RECORD),
      { partition: 0 },
    );
    expect(topic.read(0, 0, 100).map((r) => r.offset)).toEqual([12, 13, 14]);
  });

  it('by size: a record larger than maxBytes stays until the next append to its partition', () => {
    const t = tempLogDir('size-big');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    const topic = log.topic<string>('events', { partitions: 1, retention: { maxBytes: 10 } });
    topic.appendSync(['y'.repeat(100)]);
    expect(topic.read(0, 0, 10).map((r) => r.offset)).toEqual([0]);
    topic.appendSync(['small']);
    expect(topic.read(0, 0, 10).map((r) => r.offset)).toEqual([1]);
  });

  it('by age: deletes records appended more than maxAgeMs ago, on append and on enforceRetention', async () => {
    const t = tempLogDir('age');
    cleanups.push(t.remove);
    let now = 1_000_000;
    const log = openLog(t.dir, { clock: () => now });
    cleanups.push(() => log.close());
    const topic = log.topic<number>('events', { partitions: 2, retention: { maxAgeMs: 1000 } });
    topic.appendSync([1, 2], { partition: 0 });
    now += 600;
    topic.appendSync([3], { partition: 0 });
    topic.appendSync([10], { partition: 1 });
    now += 500; // records 1 and 2 are 1100 ms old, 3 and 10 are 500 ms old
    topic.appendSync([4], { partition: 0 });
    expect(topic.read(0, 0, 10).map((r) => r.value)).toEqual([3, 4]);
    expect(topic.startOffset(0)).toBe(2);
    // partition 1 received no append: only enforceRetention ages it out
    now += 600; // 10 and 3 are 1100 ms old, 4 is 600 ms old
    expect(topic.read(1, 0, 10).map((r) => r.value)).toEqual([10]);
    expect(await topic.enforceRetention()).toBe(2);
    expect(topic.read(0, 0, 10).map((r) => r.value)).toEqual([4]);
    expect(topic.read(1, 0, 10)).toEqual([]);
    // an emptied partition keeps its end offset: offsets are never reused
    expect(topic.startOffset(1)).toBe(1);
    expect(topic.endOffset(1)).toBe(1);
    expect(topic.appendSync([11], { partition: 1 }).positions).toEqual([{ partition: 1, offset: 1 }]);
  });

  it('a reader behind retention sees the gap in the offsets', () => {
    const t = tempLogDir('gap');
    cleanups.push(t.remove);
    const log = openLog(t.dir);
    cleanups.push(() => log.close());
    const topic = log.topic<string>('events', { partitions: 1, retention: { maxBytes: 2 * STORED } });
    topic.appendSync([RECORD, RECORD, RECORD, RECORD]);
    expect(topic.read(0, 0, 10).map((r) => r.offset)).toEqual([2, 3]);
  });

  it('without a policy nothing is ever deleted', async () => {
    const t = tempLogDir('none');
    cleanups.push(t.remove);
    let now = 0;
    const log = openLog(t.dir, { clock: () => now });
    cleanups.push(() => log.close());
    const topic = log.topic<string>('events', { partitions: 1 });
    topic.appendSync(Array.from({ length: 100 }, () => RECORD));
    now += 1e12;
    expect(await topic.enforceRetention()).toBe(0);
    expect(topic.startOffset(0)).toBe(0);
    expect(topic.read(0, 0, 1000)).toHaveLength(100);
  });
});
