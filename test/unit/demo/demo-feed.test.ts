/** The click feed's append latency: one value per click, taken when its append resolved. */
import { describe, expect, it, vi } from 'vitest';
import { feedClicks } from '../../../src/demo/demo-feed.js';
import type { LoggedClick } from '../../../src/demo/demo-records.js';
import type { Topic } from '../../../src/log/topic.js';

/** A topic whose appends resolve only when the test says so. */
function heldTopic() {
  const pending: { records: LoggedClick[]; partition: number; resolve: () => void }[] = [];
  const topic = {
    append(records: LoggedClick[], o: { partition: number }) {
      return new Promise<void>((resolve) => pending.push({ records, partition: o.partition, resolve }));
    },
  } as unknown as Topic<LoggedClick>;
  return { topic, pending };
}

describe('feedClicks', () => {
  it('records each click once, when its append has resolved (not when it was called)', async () => {
    const { topic, pending } = heldTopic();
    // a rate high enough that every click is due at the first tick
    const feed = feedClicks(topic, { n: 30, users: 5, rate: 1e9, partitions: 3 });
    await new Promise((r) => setImmediate(r));
    expect(pending.map((p) => p.records.length)).toEqual([10, 10, 10]);
    expect(feed.appendLatency.count).toBe(0);
    pending[0].resolve();
    await new Promise((r) => setImmediate(r));
    expect(feed.appendLatency.count).toBe(10);
    pending[1].resolve();
    pending[2].resolve();
    expect(await feed.done).toBe(30);
    expect(feed.appendLatency.count).toBe(30);
    expect(feed.appendLatency.summary().p99).toBeGreaterThanOrEqual(0);
  });

  it("times each append from its own call, not from the tick's start: another partition's encoding is not in it", async () => {
    // A fake clock (the feed's start at 0, then 1 000 ms later every click is due): partition 0's
    // append call (its synchronous encoding) takes 30 ms, partition 1's 5 ms, and both resolve
    // once both calls returned.
    let clock = 1_000;
    const now = vi
      .spyOn(performance, 'now')
      .mockImplementation(() => clock)
      .mockImplementationOnce(() => 0);
    try {
      const costs = [30, 5];
      const topic = {
        append(_records: LoggedClick[], o: { partition: number }) {
          clock += costs[o.partition];
          return Promise.resolve();
        },
      } as unknown as Topic<LoggedClick>;
      const feed = feedClicks(topic, { n: 20, users: 5, rate: 1e9, partitions: 2 });
      expect(await feed.done).toBe(20);
      // partition 0: called at 1 000, resolved at 1 035: 35 ms for its 10 clicks; partition 1:
      // called at 1 030, resolved at 1 035: 5 ms (35 if timed from the tick's start)
      expect(feed.appendLatency.count).toBe(20);
      expect(feed.appendLatency.summary().max).toBeCloseTo(35, 0);
      expect(feed.appendLatency.at(50)).toBeCloseTo(5, 0);
    } finally {
      now.mockRestore();
    }
  });

  it("samples the main thread's event-loop delay while it appends, and stops when done", async () => {
    const topic = {
      append: () => Promise.resolve(),
    } as unknown as Topic<LoggedClick>;
    // 40 clicks at 1 000/s: at least four 10 ms ticks, so the 1 ms sampler fires meanwhile
    const feed = feedClicks(topic, { n: 40, users: 5, rate: 1000, partitions: 2 });
    expect(await feed.done).toBe(40);
    const delay = feed.eventLoopDelay();
    expect(delay).not.toBeNull();
    expect(delay?.count).toBeGreaterThan(0);
    expect(delay?.max).toBeGreaterThanOrEqual(delay?.p50 ?? Number.POSITIVE_INFINITY);
    // disabled once done: no more samples
    const count = delay?.count;
    await new Promise<void>((resolve) => setTimeout(resolve, 20));
    expect(feed.eventLoopDelay()?.count).toBe(count);
  });
});
