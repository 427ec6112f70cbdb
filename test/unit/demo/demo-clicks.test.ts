import { describe, expect, it } from 'vitest';
import {
  CLICK_EPOCH_MS,
  CLICK_MAX_LATENESS_MS,
  clickAt,
  DEMO_PAGES,
  DEMO_WINDOW_MS,
  demoWindowStart,
  loggedClickAt,
} from '../../../src/demo/demo-clicks.js';
import { LogRecordCodec } from '../../../src/log/log-record-codec.js';

describe('clickAt', () => {
  it('is deterministic and keeps the sequence number', () => {
    for (const seq of [0, 1, 17, 99_999]) {
      expect(clickAt(seq, 1000)).toEqual(clickAt(seq, 1000));
      expect(clickAt(seq, 1000).seq).toBe(seq);
    }
  });

  it('draws users and pages from their ranges, skewed towards the first ones', () => {
    const pages = new Map<string, number>();
    const users = new Map<string, number>();
    const known = new Set(DEMO_PAGES);
    let outOfRange = 0;
    for (let seq = 0; seq < 50_000; seq++) {
      const c = clickAt(seq, 100);
      const u = Number(c.user.slice(1));
      if (!known.has(c.page) || !(Number.isInteger(u) && u >= 0 && u < 100)) outOfRange++;
      pages.set(c.page, (pages.get(c.page) ?? 0) + 1);
      users.set(c.user, (users.get(c.user) ?? 0) + 1);
    }
    expect(outOfRange).toBe(0);
    expect(pages.get('/')!).toBeGreaterThan(5 * (pages.get(DEMO_PAGES.at(-1)!) ?? 0));
    expect(users.get('u0')!).toBeGreaterThan(3 * (users.get('u99') ?? 0));
    expect(pages.size).toBeGreaterThan(DEMO_PAGES.length / 2);
  });

  it('event time advances with the sequence, at most CLICK_MAX_LATENESS_MS out of order', () => {
    let maxSeen = Number.NEGATIVE_INFINITY;
    let tooLate = 0;
    let maxLateness = 0;
    for (let seq = 0; seq < 200_000; seq += 7) {
      const { ts } = clickAt(seq, 10);
      if (ts < CLICK_EPOCH_MS - CLICK_MAX_LATENESS_MS || ts < maxSeen - CLICK_MAX_LATENESS_MS) tooLate++;
      maxLateness = Math.max(maxLateness, maxSeen - ts);
      maxSeen = Math.max(maxSeen, ts);
    }
    expect(tooLate).toBe(0);
    expect(maxLateness).toBeGreaterThan(CLICK_MAX_LATENESS_MS / 2); // really out of order
    expect(maxSeen).toBeGreaterThan(CLICK_EPOCH_MS + 7000); // and advancing
  });
});

describe('loggedClickAt', () => {
  it('is clickAt plus appendedAt, fields in the same order, encoded to the same log bytes', () => {
    const codec = new LogRecordCodec();
    const appendedAt = 1_767_225_600_123.456;
    for (const seq of [0, 1, 17, 99_999, 1_234_567]) {
      const spread = { ...clickAt(seq, 1000), appendedAt };
      const built = loggedClickAt(seq, 1000, appendedAt);
      expect(built).toEqual(spread);
      expect(Object.keys(built)).toEqual(Object.keys(spread));
      const [a, b] = codec.encodeAll('clicks', [built, spread]);
      expect(Buffer.compare(a, b), String(seq)).toBe(0);
    }
  });
});

describe('demoWindowStart', () => {
  it('is the start of the 1 s tumbling window holding ts', () => {
    for (const ts of [
      CLICK_EPOCH_MS,
      CLICK_EPOCH_MS + 999,
      CLICK_EPOCH_MS + 1000,
      CLICK_EPOCH_MS - 1,
      1234,
    ]) {
      const start = demoWindowStart(ts);
      expect(start % DEMO_WINDOW_MS, String(ts)).toBe(0);
      expect(ts - start, String(ts)).toBeGreaterThanOrEqual(0);
      expect(ts - start, String(ts)).toBeLessThan(DEMO_WINDOW_MS);
    }
  });
});
