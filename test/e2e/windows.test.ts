/**
 * Windows end to end over out-of-order input: tumbling (reduce), sliding (process), session
 * (aggregate with merge), processing-time tumbling, and allowed lateness with late data to a side output; at
 * parallelism 1 and 3, straight through and with one failure after a completed checkpoint. Each
 * output must equal an oracle computed here in plain JS.
 */
import { describe, expect, it } from 'vitest';
import { startJob } from '../../dist/index.js';
// @ts-expect-error: a plain .mjs fixture shared with the job
import { event } from '../fixtures/jobs/event-time-events.mjs';
// @ts-expect-error: a plain .mjs fixture shared with the job
import { lateEvent } from '../fixtures/jobs/windows-late.mjs';
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

const N = 3000;
const KEYS = 7;
const events: Ev[] = Array.from({ length: N }, (_, i) => event(i, KEYS));

const sortBy =
  <T>(...fields: (keyof T)[]) =>
  (xs: T[]) =>
    [...xs].sort((a, b) => {
      for (const f of fields) if (a[f] !== b[f]) return (a[f] as number) - (b[f] as number);
      return 0;
    });

function tumblingOracle() {
  const m = new Map<string, { key: number; w: number; v: number; n: number }>();
  for (const e of events) {
    const w = Math.floor(e.ts / 100) * 100;
    const o = m.get(`${e.key}/${w}`) ?? { key: e.key, w, v: 0, n: 0 };
    o.v += e.v;
    o.n++;
    m.set(`${e.key}/${w}`, o);
  }
  return sortBy<{ key: number; w: number }>('key', 'w')([...m.values()]);
}

function slidingOracle() {
  const m = new Map<string, { key: number; end: number; v: number; n: number }>();
  for (const e of events) {
    for (let start = Math.floor(e.ts / 100) * 100; start > e.ts - 300; start -= 100) {
      const o = m.get(`${e.key}/${start}`) ?? { key: e.key, end: start + 300, v: 0, n: 0 };
      o.v += e.v;
      o.n++;
      m.set(`${e.key}/${start}`, o);
    }
  }
  return sortBy<{ key: number; end: number }>('key', 'end')([...m.values()]);
}

function sessionOracle(gap: number) {
  const out: { key: number; start: number; end: number; v: number; n: number }[] = [];
  for (let k = 0; k < KEYS; k++) {
    const es = events.filter((e) => e.key === k).sort((a, b) => a.ts - b.ts);
    let cur: (typeof out)[number] | undefined;
    for (const e of es) {
      if (cur && e.ts <= cur.end) {
        cur.end = Math.max(cur.end, e.ts + gap);
        cur.v += e.v;
        cur.n++;
      } else {
        if (cur) out.push(cur);
        cur = { key: k, start: e.ts, end: e.ts + gap, v: e.v, n: 1 };
      }
    }
    if (cur) out.push(cur);
  }
  return sortBy<{ key: number; start: number }>('key', 'start')(out);
}

async function run(
  module: string,
  parallelism: number,
  failure: string,
  n: number,
  keys: number,
  stateBackend: 'heap' | 'lmdb',
) {
  const client = await startJob(fixture(module), {
    parallelism,
    stateBackend,
    checkpointing: { interval: 100, mode: 'exactly-once' },
    restartStrategy: { type: 'fixed-delay', attempts: 2, delay: 0 },
    args: { n: String(n), keys: String(keys), failure, rate: String(n) },
  });
  const restoredFrom = restoredCheckpoints(client);
  const result = await client.done;
  // recovery restored a completed checkpoint (window contents and timers came from it)
  expect(restoredFrom.every((id) => typeof id === 'number')).toBe(true);
  return result;
}

describe('event-time and processing-time windows', () => {
  const tumbling = tumblingOracle();
  const sliding = slidingOracle();
  const session = sessionOracle(60.5);
  for (const [parallelism, failure, stateBackend] of CASES) {
    it(`p=${parallelism}, failure=${failure}, ${stateBackend}: tumbling, sliding, session and processing-time results are exact`, async () => {
      const result = await run('windows-all.mjs', parallelism, failure, N, KEYS, stateBackend);
      expect(result.restarts).toBe(failure === 'none' ? 0 : 1);
      const t = (result.sinks.tumbling as (Ev & { n: number })[]).map((r) => ({
        key: r.key,
        w: Math.floor(r.ts / 100) * 100,
        v: r.v,
        n: r.n,
      }));
      expect(sortBy<{ key: number; w: number }>('key', 'w')(t)).toEqual(tumbling);
      expect(sortBy<{ key: number; end: number }>('key', 'end')(result.sinks.sliding as never)).toEqual(
        sliding,
      );
      expect(sortBy<{ key: number; start: number }>('key', 'start')(result.sinks.session as never)).toEqual(
        session,
      );
      // processing-time windows depend on the wall clock: per key the counts and sums are exact
      const perKey = new Map<number, { v: number; n: number }>();
      for (const r of result.sinks.processing as (Ev & { n: number })[]) {
        const o = perKey.get(r.key) ?? { v: 0, n: 0 };
        o.v += r.v;
        o.n += r.n;
        perKey.set(r.key, o);
      }
      for (let k = 0; k < KEYS; k++) {
        const es = events.filter((e) => e.key === k);
        expect(perKey.get(k)).toEqual({ v: es.reduce((s, e) => s + e.v, 0), n: es.length });
      }
    });
  }
});

const LATE_N = 3000;
const LATE_KEYS = 5;

/** Replays the job: a watermark after every record, windows of 100 ms, 150 ms allowed lateness. */
function lateOracle() {
  const L = 150;
  const firings: { key: number; start: number; v: number; n: number }[] = [];
  const late: Ev[] = [];
  const pending = new Map<string, { key: number; start: number; els: Ev[]; timer: boolean }>();
  let wm = -Infinity;
  let max = -Infinity;
  const fire = (w: { key: number; start: number; els: Ev[] }) =>
    firings.push({ key: w.key, start: w.start, v: w.els.reduce((s, e) => s + e.v, 0), n: w.els.length });
  const advance = (to: number) => {
    wm = to;
    for (const [id, w] of [...pending].sort((a, b) => a[1].start - b[1].start)) {
      if (w.timer && w.start + 99 <= wm) {
        w.timer = false;
        fire(w);
      }
      if (w.start + 99 + L <= wm) pending.delete(id);
    }
  };
  for (let i = 0; i < LATE_N; i++) {
    const e: Ev = lateEvent(i, LATE_KEYS);
    const start = Math.floor(e.ts / 100) * 100;
    if (start + 99 + L <= wm) {
      late.push(e);
    } else {
      const id = `${e.key}/${start}`;
      const w = pending.get(id) ?? { key: e.key, start, els: [], timer: false };
      pending.set(id, w);
      w.els.push(e);
      if (start + 99 <= wm) fire(w);
      else w.timer = true;
    }
    max = Math.max(max, e.ts);
    if (max - 61 > wm) advance(max - 61);
  }
  advance(Infinity);
  return {
    firings: sortBy<{ key: number; start: number; n: number }>('key', 'start', 'n')(firings),
    late: sortBy<Ev>('v')(late),
  };
}

describe('allowed lateness and late data', () => {
  const expected = lateOracle();
  it('the oracle has late firings and late records (the test can fail)', () => {
    const byWindow = new Map<string, number>();
    for (const f of expected.firings)
      byWindow.set(`${f.key}/${f.start}`, (byWindow.get(`${f.key}/${f.start}`) ?? 0) + 1);
    expect([...byWindow.values()].some((c) => c > 1)).toBe(true);
    expect(expected.late.length).toBeGreaterThan(10);
  });
  for (const [parallelism, failure, stateBackend] of CASES) {
    it(`p=${parallelism}, failure=${failure}, ${stateBackend}: firings (with late updates) and the side output are exact`, async () => {
      const result = await run('windows-late.mjs', parallelism, failure, LATE_N, LATE_KEYS, stateBackend);
      expect(result.restarts).toBe(failure === 'none' ? 0 : 1);
      expect(
        sortBy<{ key: number; start: number; n: number }>('key', 'start', 'n')(result.sinks.firings as never),
      ).toEqual(expected.firings);
      expect(sortBy<Ev>('v')(result.sinks.late as never)).toEqual(expected.late);
    });
  }
});
