/**
 * Record batches (`src/log/record-batch.ts`): seeded random batches, single-record appends that
 * group commit merges, transactions and retention, interleaved, read back by offset and by range;
 * and a directory written in the format-1 layout (one record per entry) read back and appended to.
 */

import { open } from 'lmdb';
import { Packr } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
import { LogStorageError } from '../../../src/errors.js';
import { openLog, type Topic } from '../../../src/log/index.js';
import {
  DB_INFO,
  DB_PARTITIONS,
  DB_RECORDS,
  DB_TOPICS,
  INFO_FORMAT,
  LOG_FORMAT_VERSION,
  logEnvironmentOptions,
  RECORD_HEADER_BYTES,
} from '../../../src/log/log-layout.js';
import { BATCH_TAG, encodeRecordBatch, StoredEntry } from '../../../src/log/record-batch.js';
import { MAX_BATCH_BYTES, MAX_BATCH_RECORDS } from '../../../src/log/topic.js';
import { prng } from '../../fixtures/channels/stress-sequence.js';
import { tempLogDir } from './helpers.js';

const packr = new Packr({ useRecords: false, moreTypes: true });
/** What retention's `maxBytes` counts for a record. */
const logicalBytes = (value: unknown): number => RECORD_HEADER_BYTES + packr.pack(value).length;

type Key = (string | number)[];

describe('record batch codec', () => {
  it('round-trips payloads, sizes and the append time; reads records in any order', () => {
    const values = ['a', { b: [1, 2] }, 'x'.repeat(300)].map((v) => {
      const payload = packr.pack(v);
      const stored = Buffer.alloc(RECORD_HEADER_BYTES + payload.length);
      stored.set(payload, RECORD_HEADER_BYTES);
      return stored;
    });
    const batch = encodeRecordBatch(values, [2, 0], 1234.5);
    expect(batch[0]).toBe(BATCH_TAG);
    const entry = new StoredEntry(7, batch, 'test');
    expect([entry.base, entry.count, entry.end, entry.appendedAt]).toEqual([7, 2, 9, 1234.5]);
    expect(packr.unpack(entry.payloadAt(1))).toBe('a');
    expect(packr.unpack(entry.payloadAt(0))).toBe('x'.repeat(300));
    expect(entry.storedBytes(0)).toBe(values[2].length);
    expect(entry.storedBytes(1)).toBe(values[0].length);
  });

  it('refuses a batch of an unknown layout version with a typed error', () => {
    const batch = encodeRecordBatch([Buffer.alloc(RECORD_HEADER_BYTES + 1)], null, 0);
    batch[1] = 9;
    expect(() => new StoredEntry(0, batch, 'test')).toThrow(LogStorageError);
    expect(() => new StoredEntry(0, batch, 'test')).toThrow(/layout version 9/);
  });
});

describe('record batches on a topic', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: random batches, single appends, transactions and retention read back as appended`, async () => {
      const random = prng(seed);
      const int = (n: number) => Math.floor(random() * n);
      const t = tempLogDir(`batches-${seed}`);
      cleanups.push(t.remove);
      let log = openLog(t.dir, { durability: 'os' });
      cleanups.push(() => log.close());
      const PARTITIONS = 3;
      const MAX_BYTES = 400;
      const names = ['plain', 'retained'];
      const open = (name: string) =>
        log.topic<unknown>(name, {
          partitions: PARTITIONS,
          ...(name === 'retained' ? { retention: { maxBytes: MAX_BYTES } } : {}),
        });
      let topics = names.map(open);
      /** Per topic and partition, every value ever appended, by offset. */
      const model = names.map(() => Array.from({ length: PARTITIONS }, () => [] as unknown[]));
      const record = (): unknown =>
        random() < 0.5 ? 'v'.repeat(int(40)) : { n: int(1000), s: 's'.repeat(int(20)), l: [int(9)] };
      const note = (
        ti: number,
        values: readonly unknown[],
        positions: readonly { partition: number; offset: number }[],
      ) => {
        positions.forEach((p, i) => {
          // Dense, in call order: each record lands at its partition's next offset.
          expect(p.offset).toBe(model[ti][p.partition].length);
          model[ti][p.partition].push(values[i]);
        });
      };
      const usedIds: { ti: number; id: string }[] = [];

      const check = (ti: number, topic: Topic<unknown>) => {
        for (let p = 0; p < PARTITIONS; p++) {
          const all = model[ti][p];
          const start = topic.startOffset(p);
          expect(topic.endOffset(p)).toBe(all.length);
          const kept = topic.read(p, 0, 100_000);
          expect(kept.map((r) => r.offset)).toEqual(
            Array.from({ length: all.length - start }, (_, i) => start + i),
          );
          expect(kept.map((r) => r.value)).toEqual(all.slice(start));
          for (let k = 0; k < 8; k++) {
            const from = int(all.length + 3);
            const max = 1 + int(30);
            const first = Math.max(from, start);
            const expected = all.slice(first, first + max).map((value, i) => ({ offset: first + i, value }));
            expect(topic.read(p, from, max)).toEqual(expected);
          }
          if (ti === 1) {
            // Retention by size: within the limit unless only the newest record is left, and
            // never more deleted than the limit asks (the record before `start` would not fit).
            const bytes = (from: number) => all.slice(from).reduce((s: number, v) => s + logicalBytes(v), 0);
            if (start < all.length - 1) expect(bytes(start)).toBeLessThanOrEqual(MAX_BYTES);
            if (start > 0) expect(bytes(start - 1)).toBeGreaterThan(MAX_BYTES);
          } else expect(start).toBe(0);
        }
      };

      for (let round = 0; round < 40; round++) {
        // One round's operations are issued together: group commit plans them in one view (an
        // append's retention reads batches appended earlier in the same group).
        const pending: Promise<void>[] = [];
        const ops = 1 + int(6);
        for (let o = 0; o < ops; o++) {
          const ti = int(2);
          const topic = topics[ti];
          const pick = random();
          const values = Array.from({ length: pick < 0.4 ? 1 : 1 + int(40) }, record);
          const routing =
            pick < 0.3 ? { partition: int(PARTITIONS) } : pick < 0.6 ? { key: `k${int(5)}` } : {};
          if (pick < 0.7) {
            pending.push(topic.append(values, routing).then((r) => note(ti, values, r.positions)));
          } else if (pick < 0.8) {
            note(ti, values, topic.appendSync(values, routing).positions);
          } else if (pick < 0.95) {
            // Sometimes an id used before (on its own topic): a repeated commit appends nothing.
            const repeat = usedIds.length > 0 && random() < 0.3 ? usedIds[int(usedIds.length)] : undefined;
            const tx = repeat ?? { ti, id: `tx-${round}-${o}` };
            if (repeat === undefined) usedIds.push(tx);
            pending.push(
              topics[tx.ti].appendTransaction(values, { transactionId: tx.id, writer: 'w' }).then((r) => {
                expect(r.state).toBe(repeat === undefined ? 'appended' : 'duplicate');
                if (r.state === 'appended') note(tx.ti, values, r.positions);
              }),
            );
          } else {
            pending.push(topic.enforceRetention().then(() => undefined));
          }
        }
        await Promise.all(pending);
        if (round % 10 === 9) for (const [ti, topic] of topics.entries()) check(ti, topic);
      }
      // Everything is in the directory: a new handle reads the same.
      await log.close();
      log = openLog(t.dir, { durability: 'os' });
      topics = names.map(open);
      await topics[1].enforceRetention();
      for (const [ti, topic] of topics.entries()) check(ti, topic);
      // The run is long enough for retention to delete records in every partition.
      for (let p = 0; p < PARTITIONS; p++) expect(topics[1].startOffset(p)).toBeGreaterThan(0);
    });
  }

  it('reads a format-1 directory (one record per entry), appends batches after it, and marks it format 2', async () => {
    const t = tempLogDir('format-1');
    cleanups.push(t.remove);
    // The topic's metadata is the same in both formats; its records are written as format 1 did.
    const setup = openLog(t.dir);
    setup.topic('events', { partitions: 2, retention: { maxBytes: 20 * logicalBytes('old-00') } });
    await setup.close();
    const old = Array.from({ length: 30 }, (_, i) => `old-${String(i).padStart(2, '0')}`);
    await writeFormat1(t.dir, 'events', 0, old.slice(0, 12), 1_000);
    await writeFormat1(t.dir, 'events', 1, old.slice(12), 2_000);

    const log = openLog(t.dir, { clock: () => 5_000 });
    cleanups.push(() => log.close());
    const topic = log.topic<string>('events');
    expect(topic.endOffset(0)).toBe(12);
    expect(topic.read(0, 0, 100).map((r) => r.value)).toEqual(old.slice(0, 12));
    expect(topic.read(1, 5, 3)).toEqual([
      { offset: 5, value: 'old-17' },
      { offset: 6, value: 'old-18' },
      { offset: 7, value: 'old-19' },
    ]);
    // New records continue the offsets in batches; reads cross the boundary of the formats.
    const fresh = Array.from({ length: 10 }, (_, i) => `new-${String(i).padStart(2, '0')}`);
    const appended = await topic.append(fresh, { partition: 0 });
    expect(appended.ranges).toEqual([{ partition: 0, firstOffset: 12, endOffset: 22 }]);
    expect(topic.read(0, 10, 4).map((r) => r.value)).toEqual(['old-10', 'old-11', 'new-00', 'new-01']);
    // Retention (20 records' worth) deletes the 2 oldest format-1 records, then inside a batch.
    expect(topic.startOffset(0)).toBe(2);
    await topic.append(fresh.slice(0, 5), { partition: 0 });
    expect(topic.startOffset(0)).toBe(7);
    await topic.append(fresh, { partition: 0 });
    expect(topic.startOffset(0)).toBe(17);
    expect(topic.read(0, 0, 3)).toEqual([
      { offset: 17, value: 'new-05' },
      { offset: 18, value: 'new-06' },
      { offset: 19, value: 'new-07' },
    ]);
    expect(topic.read(0, 0, 100)).toHaveLength(20);
    await log.close();
    expect(await rawFormat(t.dir)).toBe(LOG_FORMAT_VERSION);
  });

  it("splits an append larger than one entry's bound into several entries, read back across them", async () => {
    const t = tempLogDir('split');
    cleanups.push(t.remove);
    const log = openLog(t.dir, { durability: 'os' });
    const topic = log.topic<{ i: number; pad: string }>('big', { partitions: 2 });
    const random = prng(7);
    // 1 300 small records into partition 0 (3 entries by count), and records of 30–70 KB into
    // partition 1 (the byte bound: 2–4 per entry), in one append each; then both in one append.
    const small = Array.from({ length: 1300 }, (_, i) => ({ i, pad: 'x'.repeat(i % 17) }));
    const large = Array.from({ length: 9 }, (_, i) => ({
      i,
      pad: 'y'.repeat(30_000 + Math.floor(random() * 40_000)),
    }));
    await topic.append(small, { partition: 0 });
    await topic.append(large, { partition: 1 });
    // Both partitions in one append, routed by key.
    const both = [...small.slice(0, 600), ...large.slice(0, 3)];
    const mixed = await topic.append(both, { key: (v) => v.i });
    const expected: { i: number; pad: string }[][] = [[...small], [...large]];
    mixed.positions.forEach(({ partition, offset }, k) => {
      expect(offset).toBe(expected[partition].length);
      expected[partition].push(both[k]);
    });
    for (const p of [0, 1]) {
      expect(topic.read(p, 0, 10_000).map((r) => r.value)).toEqual(expected[p]);
      for (let k = 0; k < 40; k++) {
        const from = Math.floor(random() * expected[p].length);
        const max = 1 + Math.floor(random() * 700);
        const got = topic.read(p, from, max);
        expect(got.map((r) => r.offset)).toEqual(
          Array.from({ length: Math.min(max, expected[p].length - from) }, (_, j) => from + j),
        );
        expect(got.map((r) => r.value)).toEqual(expected[p].slice(from, from + max));
      }
    }
    await log.close();
    // Stored entries: none over the bounds.
    const env = open(logEnvironmentOptions(t.dir, 'fsync'));
    const records = env.openDB<Buffer, Key>({ name: DB_RECORDS, encoding: 'binary' });
    const counts = [0, 0];
    for (const { key, value } of records.getRange({})) {
      const entry = new StoredEntry(key[2] as number, value, 'test');
      expect(entry.count).toBeLessThanOrEqual(MAX_BATCH_RECORDS);
      if (entry.count > 1) expect(value.length).toBeLessThanOrEqual(MAX_BATCH_BYTES + 4096);
      counts[key[1] as number]++;
    }
    await env.close();
    // 1 300 = 512 + 512 + 276, then at least one entry per partition for the routed append
    expect(counts[0]).toBeGreaterThanOrEqual(4);
    expect(counts[1]).toBeGreaterThanOrEqual(4);
  });

  it('refuses a directory of an unknown format with a typed error naming both', async () => {
    const t = tempLogDir('format-9');
    cleanups.push(t.remove);
    await openLog(t.dir).close();
    const env = open(logEnvironmentOptions(t.dir, 'fsync'));
    env.openDB<number, string>({ name: DB_INFO }).putSync(INFO_FORMAT, 9);
    await env.close();
    expect(() => openLog(t.dir)).toThrow(LogStorageError);
    expect(() => openLog(t.dir)).toThrow(/format 9; this weir reads formats 1, 2/);
  });
});

/** The format marker as stored. */
async function rawFormat(dir: string): Promise<number | undefined> {
  const env = open(logEnvironmentOptions(dir, 'fsync'));
  const format = env.openDB<number, string>({ name: DB_INFO }).get(INFO_FORMAT);
  await env.close();
  return format;
}

/**
 * Writes `values` into an empty partition as the format-1 code did: one `records` entry per
 * offset holding the 8-byte big-endian append time and the msgpack payload, the partition's
 * `{ start, end, bytes }`, and the format marker 1.
 */
async function writeFormat1(
  dir: string,
  topicName: string,
  partition: number,
  values: string[],
  appendedAt: number,
): Promise<void> {
  const env = open(logEnvironmentOptions(dir, 'fsync'));
  try {
    const topics = env.openDB<{ id: number }, string>({ name: DB_TOPICS, useVersions: true });
    const partitions = env.openDB<unknown, Key>({ name: DB_PARTITIONS, useVersions: true });
    const records = env.openDB<Buffer, Key>({ name: DB_RECORDS, encoding: 'binary' });
    const id = (topics.get(topicName) as { id: number }).id;
    let bytes = 0;
    env.transactionSync(() => {
      values.forEach((v, offset) => {
        const payload = packr.pack(v);
        const stored = Buffer.alloc(RECORD_HEADER_BYTES + payload.length);
        stored.writeDoubleBE(appendedAt, 0);
        stored.set(payload, RECORD_HEADER_BYTES);
        records.put([id, partition, offset], stored);
        bytes += stored.length;
      });
      partitions.put([id, partition], { start: 0, end: values.length, bytes }, 1);
      env.openDB<number, string>({ name: DB_INFO }).put(INFO_FORMAT, 1);
    });
  } finally {
    await env.close();
  }
}
