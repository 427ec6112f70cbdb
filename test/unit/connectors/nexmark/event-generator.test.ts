/**
 * The Nexmark generator: java.util.Random bit for bit, the 1/3/46 proportions, the id windows
 * (bids name recent auctions, auctions and bids recent people), event time from the event number,
 * out-of-order groups, and the source's splits (disjoint, complete, rewound exactly on restore,
 * also at another parallelism).
 */
import { describe, expect, it } from 'vitest';
import type { Collector } from '../../../../src/api/functions.js';
import type { SourceContext } from '../../../../src/api/source.js';
import {
  adjustedEventNumber,
  generatorConfig,
  JavaRandom,
  maxOutOfOrderness,
  type NexmarkEvent,
  nexmark,
  nexmarkEvent,
} from '../../../../src/connectors/nexmark/index.js';
import { InvalidOptionError } from '../../../../src/errors.js';

describe('JavaRandom', () => {
  it('matches java.util.Random: new Random(42).nextInt() and nextInt(bound)', () => {
    // Values printed by OpenJDK: new Random(42).nextInt() == -1170105035, then nextInt() == 234785527
    const r = new JavaRandom(42);
    expect(r.nextInt()).toBe(-1170105035);
    expect(r.nextInt()).toBe(234785527);
    // OpenJDK: new Random(0).nextInt(100) == 60
    expect(new JavaRandom(0).nextIntBounded(100)).toBe(60);
  });
  it('bounded draws stay in range', () => {
    const r = new JavaRandom(7);
    for (let i = 0; i < 10_000; i++) {
      const v = r.nextIntBounded(13);
      expect(v >= 0 && v < 13).toBe(true);
      const d = r.nextDouble();
      expect(d >= 0 && d < 1).toBe(true);
    }
  });
});

describe('nexmarkEvent', () => {
  const config = generatorConfig({ events: 50_000 });
  const events = Array.from({ length: config.events }, (_, n) => nexmarkEvent(config, n));

  it('is a pure function of the event number (and the seed)', () => {
    expect(nexmarkEvent(config, 1234)).toEqual(events[1234]);
    const seeded = generatorConfig({ events: 100, seed: 5 });
    expect(nexmarkEvent(seeded, 10)).not.toEqual(events[10]);
    expect(nexmarkEvent(seeded, 10)).toEqual(nexmarkEvent(seeded, 10));
  });

  it('has the proportions person 1 / auction 3 / bid 46 per 50', () => {
    const count = { person: 0, auction: 0, bid: 0 };
    for (const e of events) count[e.kind]++;
    expect(count).toEqual({ person: 1000, auction: 3000, bid: 46_000 });
  });

  it('numbers people and auctions consecutively from 1000 and keeps references recent', () => {
    const people = events.filter((e) => e.kind === 'person');
    const auctions = events.filter((e) => e.kind === 'auction');
    expect(people.map((p) => p.id)).toEqual(people.map((_, i) => 1000 + i));
    expect(auctions.map((a) => a.id)).toEqual(auctions.map((_, i) => 1000 + i));
    let lastAuction = 999;
    let lastPerson = 999;
    let hot = 0;
    for (const e of events) {
      if (e.kind === 'person') lastPerson = e.id;
      else if (e.kind === 'auction') {
        lastAuction = e.id;
        expect(e.seller).toBeLessThanOrEqual(lastPerson + 10);
        expect(e.seller).toBeGreaterThanOrEqual(Math.max(1000, lastPerson - 1000));
        expect(e.expires).toBeGreaterThan(e.dateTime);
        expect(e.reserve).toBeGreaterThanOrEqual(e.initialBid);
        expect(e.category >= 10 && e.category < 15).toBe(true);
      } else {
        expect(e.auction).toBeLessThanOrEqual(lastAuction + 10);
        expect(e.auction).toBeGreaterThanOrEqual(Math.max(1000, lastAuction - 100));
        expect(e.bidder).toBeLessThanOrEqual(lastPerson + 10);
        if (e.auction % 100 === 0) hot++;
      }
    }
    // half the bids go to the hot auction of the last batch of 100 (hotAuctionRatio 2)
    expect(hot / 46_000).toBeGreaterThan(0.45);
  });

  it('takes event time from the event number: 10 000 events per second of event time', () => {
    expect(events[0].dateTime).toBe(Date.UTC(2015, 6, 15));
    expect(events[10_000].dateTime - events[0].dateTime).toBe(1000);
    for (let i = 1; i < events.length; i++)
      expect(events[i].dateTime).toBeGreaterThanOrEqual(events[i - 1].dateTime);
  });

  it('permutes events within out-of-order groups, bounded by maxOutOfOrderness', () => {
    const ooo = generatorConfig({ events: 1000, outOfOrderGroupSize: 50 });
    const ids = Array.from({ length: 1000 }, (_, n) => adjustedEventNumber(ooo, n));
    expect(new Set(ids).size).toBe(1000);
    expect(ids).not.toEqual([...ids].sort((a, b) => a - b));
    let max = -Infinity;
    for (let n = 0; n < 1000; n++) {
      const t = nexmarkEvent(ooo, n).dateTime;
      expect(max - t).toBeLessThanOrEqual(maxOutOfOrderness(ooo));
      max = Math.max(max, t);
    }
  });

  it('rejects bad options with a typed error naming the option', () => {
    expect(() => generatorConfig({ events: -1 })).toThrow(InvalidOptionError);
    expect(() => generatorConfig({ events: 10, seed: 1.5 })).toThrow(/nexmark\.seed/);
    expect(() => generatorConfig({ events: 10, ratePerSec: 0 })).toThrow(/nexmark\.ratePerSec/);
  });
});

function ctx(subtaskIndex: number, parallelism: number, restoredState?: unknown[]): SourceContext {
  return { subtaskIndex, parallelism, attempt: 0, restoredState } as unknown as SourceContext;
}

function drain(reader: ReturnType<ReturnType<typeof nexmark>['createReader']>, max = 64): NexmarkEvent[] {
  const out: NexmarkEvent[] = [];
  const collector: Collector<NexmarkEvent> = { collect: (e) => out.push(e) } as Collector<NexmarkEvent>;
  while (reader.poll(collector, max).state !== 'end');
  return out;
}

describe('sources.nexmark splits and positions', () => {
  const config = generatorConfig({ events: 3000 });
  const all = Array.from({ length: 3000 }, (_, n) => nexmarkEvent(config, n));
  const key = (e: NexmarkEvent) => JSON.stringify(e);

  it('subtasks own disjoint event numbers that together are the whole stream', () => {
    const source = nexmark({ events: 3000 });
    const got = [0, 1, 2].flatMap((s) => drain(source.createReader(ctx(s, 3))));
    expect(got.map(key).sort()).toEqual(all.map(key).sort());
  });

  it('a restore rewinds exactly to the snapshot, also at another parallelism', () => {
    const source = nexmark({ events: 3000 });
    const readers = [0, 1, 2].map((s) => source.createReader(ctx(s, 3)));
    const before: NexmarkEvent[] = [];
    const collector = { collect: (e: NexmarkEvent) => before.push(e) } as Collector<NexmarkEvent>;
    for (const [i, r] of readers.entries()) r.poll(collector, 100 + i * 37);
    const state = readers.flatMap((r) => r.snapshotState(1));
    // records emitted after the snapshot are lost with the failed attempt
    readers[0].poll({ collect: () => {} } as unknown as Collector<NexmarkEvent>, 50);
    // p=3 → p=2: subtask 0 gets two splits, subtask 1 one
    const after = [
      ...drain(source.createReader(ctx(0, 2, [state[0], state[2]]))),
      ...drain(source.createReader(ctx(1, 2, [state[1]]))),
    ];
    expect([...before, ...after].map(key).sort()).toEqual(all.map(key).sort());
    // a subtask holding two splits emits them merged in event-time order
    const merged = drain(source.createReader(ctx(0, 2, [state[0], state[2]])));
    for (let i = 1; i < merged.length; i++)
      expect(merged[i].dateTime).toBeGreaterThanOrEqual(merged[i - 1].dateTime);
  });

  it('refuses a position from a stream of another size', () => {
    const state = nexmark({ events: 3000 }).createReader(ctx(0, 1)).snapshotState(1);
    expect(() => nexmark({ events: 10 }).createReader(ctx(0, 1, state))).toThrow(/nexmark\.events/);
  });
});
