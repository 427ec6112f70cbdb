/**
 * Event time end to end: timestamps, watermarks and keyed timers (event and processing time)
 * over out-of-order input, at parallelism 1 and 3, straight through and with one failure after
 * a completed checkpoint. The output must equal an oracle computed here in plain JS.
 */
import { describe, expect, it } from 'vitest';
import { runJob, startJob } from '../../dist/index.js';
// @ts-expect-error: a plain .mjs fixture shared with the job
import { event } from '../fixtures/jobs/event-time-events.mjs';
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

const N = 6000;
const KEYS = 7;

interface Out {
  kind: 'event' | 'processing';
  key: number;
  bucket?: number;
  sum?: number;
  count?: number;
  ts?: number;
}

function oracle(): Out[] {
  const m = new Map<string, Out>();
  for (let i = 0; i < N; i++) {
    const e = event(i, KEYS) as { key: number; ts: number; v: number };
    const bucket = Math.floor(e.ts / 100);
    const id = `${e.key}/${bucket}`;
    const o = m.get(id) ?? {
      kind: 'event',
      key: e.key,
      bucket,
      sum: 0,
      count: 0,
      ts: (bucket + 1) * 100 - 1,
    };
    o.sum! += e.v;
    o.count! += 1;
    m.set(id, o);
  }
  const out: Out[] = [...m.values()];
  for (let k = 0; k < KEYS; k++) out.push({ kind: 'processing', key: k });
  return sortOut(out);
}

const sortOut = (xs: Out[]) =>
  [...xs].sort((a, b) => a.kind.localeCompare(b.kind) || a.key - b.key || (a.bucket ?? 0) - (b.bucket ?? 0));

async function run(parallelism: number, failure: string, stateBackend: 'heap' | 'lmdb') {
  const client = await startJob(fixture('event-time-timers.mjs'), {
    parallelism,
    stateBackend,
    checkpointing: { interval: 100, mode: 'exactly-once' },
    restartStrategy: { type: 'fixed-delay', attempts: 2, delay: 0 },
    args: { n: String(N), keys: String(KEYS), failure, rate: '4000' },
  });
  const restoredFrom = restoredCheckpoints(client);
  const result = await client.done;
  return { result, restoredFrom, out: result.sinks.out as Out[] };
}

describe('event-time timers', () => {
  const expected = oracle();
  for (const [parallelism, failure, stateBackend] of CASES) {
    it(`p=${parallelism}, failure=${failure}, ${stateBackend}: every timer fires exactly once, after its watermark`, async () => {
      const { result, restoredFrom, out } = await run(parallelism, failure, stateBackend);
      expect(result.restarts).toBe(failure === 'none' ? 0 : 1);
      // recovery restored a completed checkpoint (timers registered before it fire after it)
      expect(restoredFrom.every((id) => typeof id === 'number')).toBe(true);
      expect(sortOut(out)).toEqual(expected);
    });
  }
});

describe('idle inputs', () => {
  const seen = async (args: Record<string, string>) => {
    const result = await runJob(fixture('event-time-idle.mjs'), { parallelism: 1, args });
    const out = result.sinks.seen as { input: string; v: number; watermark: number }[];
    expect(out.filter((e) => e.input === 'a')).toHaveLength(2000);
    expect(out.filter((e) => e.input === 'b')).toHaveLength(10);
    return out;
  };

  it('a silent input holds the watermark back; with idleTimeout it stops doing so', async () => {
    // a runs for ~2 s, b is silent for 5 s: margins for slow thread start-up on a loaded machine
    const [held, idle] = await Promise.all([seen({ stall: '5000' }), seen({ stall: '5000', idle: '100' })]);
    // without idleness the stalled input keeps every watermark the fast input sees at -Infinity
    expect(held.filter((e) => e.input === 'a').every((e) => e.watermark === -Infinity)).toBe(true);
    // with it, the fast input's own watermark (its timestamp - 1) gets through while b is silent
    const a = idle.filter((e) => e.input === 'a');
    expect(a.some((e) => e.watermark > 0)).toBe(true);
    expect(a.every((e) => e.watermark < e.v * 10)).toBe(true);
  });
});
