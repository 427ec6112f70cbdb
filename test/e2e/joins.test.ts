/**
 * Two-input event time end to end: an interval join, a window join and a keyed connect sharing
 * state and event-time timers, over two out-of-order streams; at parallelism 1 and 3, straight
 * through and with one failure after a completed checkpoint. Outputs must equal oracles
 * computed here in plain JS.
 */
import { describe, expect, it } from 'vitest';
import { startJob } from '../../dist/index.js';
// @ts-expect-error: a plain .mjs fixture shared with the job
import { event } from '../fixtures/jobs/event-time-events.mjs';
// @ts-expect-error: a plain .mjs fixture shared with the job
import { rightEvent } from '../fixtures/jobs/joins.mjs';
import { fixture } from './helpers.js';
import { restoredCheckpoints } from './restored-checkpoints.js';

/** Parallelism 1 and 3, with and without a failure, on the heap backend; the lmdb backend with a failure at both. */
const CASES: readonly (readonly [number, string, 'heap' | 'lmdb'])[] = [
  [1, 'none', 'heap'],
  [1, 'throw', 'heap'],
  [3, 'none', 'heap'],
  [3, 'throw', 'heap'],
  [1, 'throw', 'lmdb'],
  [3, 'throw', 'lmdb'],
];

interface Ev {
  key: number;
  ts: number;
  v: number;
}

const N = 2000;
const M = 1400;
const KEYS = 5;
const lefts: Ev[] = Array.from({ length: N }, (_, i) => event(i, KEYS));
const rights: Ev[] = Array.from({ length: M }, (_, j) => rightEvent(j, KEYS));

const pairs = (xs: { key: number; l: number; r: number }[]) => xs.map((x) => `${x.key}:${x.l}-${x.r}`).sort();

function intervalOracle() {
  const out: { key: number; l: number; r: number }[] = [];
  for (const l of lefts)
    for (const r of rights)
      if (l.key === r.key && r.ts >= l.ts - 20 && r.ts <= l.ts + 30) out.push({ key: l.key, l: l.v, r: r.v });
  return pairs(out);
}

function windowOracle() {
  const out: { key: number; l: number; r: number }[] = [];
  for (const l of lefts)
    for (const r of rights)
      if (l.key === r.key && Math.floor(l.ts / 100) === Math.floor(r.ts / 100))
        out.push({ key: l.key, l: l.v, r: r.v });
  return pairs(out);
}

function connectOracle() {
  const m = new Map<string, { key: number; bucket: number; l: number; r: number }>();
  const add = (e: Ev, side: 'l' | 'r') => {
    const bucket = Math.floor(e.ts / 200);
    const o = m.get(`${e.key}/${bucket}`) ?? { key: e.key, bucket, l: 0, r: 0 };
    o[side]++;
    m.set(`${e.key}/${bucket}`, o);
  };
  for (const e of lefts) add(e, 'l');
  for (const e of rights) add(e, 'r');
  return [...m.values()].map((o) => `${o.key}/${o.bucket}:${o.l},${o.r}`).sort();
}

describe('joins and keyed connect with timers', () => {
  const interval = intervalOracle();
  const window = windowOracle();
  const connect = connectOracle();
  it('the oracles are not trivial', () => {
    expect(interval.length).toBeGreaterThan(500);
    expect(window.length).toBeGreaterThan(500);
  });
  for (const [parallelism, failure, stateBackend] of CASES) {
    it(`p=${parallelism}, failure=${failure}, ${stateBackend}: interval join, window join and co-process timers are exact`, async () => {
      const client = await startJob(fixture('joins.mjs'), {
        parallelism,
        stateBackend,
        checkpointing: { interval: 100, mode: 'exactly-once' },
        restartStrategy: { type: 'fixed-delay', attempts: 2, delay: 0 },
        args: { n: String(N), m: String(M), keys: String(KEYS), failure, rate: '2000' },
      });
      const restoredFrom = restoredCheckpoints(client);
      const result = await client.done;
      expect(result.restarts).toBe(failure === 'none' ? 0 : 1);
      expect(restoredFrom.every((id) => typeof id === 'number')).toBe(true);
      const intervalOut = result.sinks.interval as { key: number; l: number; r: number; ts: number }[];
      expect(pairs(intervalOut)).toEqual(interval);
      // results carry the larger of the two timestamps
      for (const x of intervalOut) expect(x.ts).toBe(Math.max(lefts[x.l].ts, rights[x.r].ts));
      expect(pairs(result.sinks.window as never)).toEqual(window);
      const connectOut = result.sinks.connect as { key: number; bucket: number; l: number; r: number }[];
      expect(connectOut.map((o) => `${o.key}/${o.bucket}:${o.l},${o.r}`).sort()).toEqual(connect);
    });
  }
});
