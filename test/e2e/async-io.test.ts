/**
 * mapAsync / flatMapAsync in real workers (test/fixtures/jobs/async-enrich.mjs): a seeded random
 * latency per record reorders completions. The output must be exact — every input's result once
 * — in input order per subtask when ordered, and stay exact under failure: a throw downstream of
 * the async operator and a worker `process.exit` inside the async function, at parallelism 1 and
 * 3, restored from checkpoints whose snapshots hold in-flight requests. Watermarks keep their
 * place (test/fixtures/jobs/async-event-time.mjs: an event-time window after the operator).
 */
import { describe, expect, it } from 'vitest';
import { JobFailedError, type JobOptions, runJob, startJob } from '../../dist/index.js';
import { fixture } from './helpers.js';

interface Result {
  readonly x: number;
  readonly y: number;
  readonly s: number;
  /** Requests in flight in the subtask when this one started. */
  readonly c: number;
  readonly part?: number;
}

const N = 3000;

async function run(args: Record<string, string>, options: JobOptions) {
  const restoredFrom: (number | undefined)[] = [];
  const client = await startJob(fixture('async-enrich.mjs'), {
    ...options,
    args: { n: String(N), ...args },
  });
  client.on('deployed', (e: { attempt: number; restoredFrom?: number }) => {
    if (e.attempt > 0) restoredFrom.push(e.restoredFrom);
  });
  const result = await client.done;
  return { result, restoredFrom, out: result.sinks.out as Result[] };
}

/** Every input 0..N-1 exactly once, with its result. */
function expectExact(out: readonly Result[]): void {
  expect(out).toHaveLength(N);
  const xs = new Set(out.map((r) => r.x));
  expect(xs.size).toBe(N);
  for (let x = 0; x < N; x++) expect(xs.has(x)).toBe(true);
  for (const r of out) expect(r.y).toBe(3 * r.x + 1);
}

/** Per async subtask, results in increasing input order (the sequence gives each subtask an increasing share). */
function expectOrderedPerSubtask(out: readonly Result[]): void {
  const last = new Map<number, number>();
  for (const r of out) {
    const prev = last.get(r.s) ?? -1;
    expect(r.x, `subtask ${r.s}: ${r.x} after ${prev}`).toBeGreaterThan(prev);
    last.set(r.s, r.x);
  }
}

describe('mapAsync: exact output', () => {
  for (const parallelism of [1, 3]) {
    it(`p=${parallelism}, ordered: every result once, in input order per subtask, at most capacity in flight`, async () => {
      const { out } = await run({ ordered: 'true', rate: '20000', capacity: '8' }, { parallelism });
      expectExact(out);
      expectOrderedPerSubtask(out);
      // the source outpaces the requests: the operator fills up to its capacity, never beyond
      expect(Math.max(...out.map((r) => r.c))).toBe(8);
    });

    it(`p=${parallelism}, unordered: every result once`, async () => {
      const { out } = await run({ ordered: 'false', rate: '20000' }, { parallelism });
      expectExact(out);
      if (parallelism === 1) {
        // the random latencies did reorder completions (what makes this test meaningful)
        expect(out.some((r, i) => i > 0 && r.x < out[i - 1].x)).toBe(true);
      }
    });
  }

  it('p=3, keyed (ctx.key checked in the function), ordered: every result once, in order per key', async () => {
    const { out } = await run({ keyed: 'true', ordered: 'true', rate: '20000' }, { parallelism: 3 });
    expectExact(out);
    const last = new Map<number, number>();
    for (const r of out) {
      expect(r.x).toBeGreaterThan(last.get(r.x % 7) ?? -1);
      last.set(r.x % 7, r.x);
    }
  });

  it('p=1, flatMapAsync, unordered: both parts of every result once', async () => {
    const { out } = await run({ flat: 'true', ordered: 'false', rate: '20000' }, { parallelism: 1 });
    expect(out).toHaveLength(2 * N);
    expect(new Set(out.map((r) => `${r.x}/${r.part}`)).size).toBe(2 * N);
  });
});

describe('mapAsync: exactly-once under failure', () => {
  for (const parallelism of [1, 3]) {
    for (const [failure, ordered] of [
      ['throw', 'true'],
      ['exit', 'false'],
    ] as const) {
      it(`p=${parallelism}, ${ordered === 'true' ? 'ordered' : 'unordered'}: a ${failure} failure restores in-flight requests and the output is exact`, async () => {
        const { result, restoredFrom, out } = await run(
          // 1.5 s of input: time for two source snapshots before the failure, even under load
          { failure, ordered, capacity: '16', rate: '2000', at: '0.3' },
          {
            parallelism,
            checkpointing: { interval: 100, mode: 'exactly-once' },
            restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
          },
        );
        expect(result.restarts).toBe(1);
        // recovery used a completed checkpoint, not a fresh start
        expect(restoredFrom.every((id) => typeof id === 'number')).toBe(true);
        expectExact(out);
      });
    }
  }
});

describe('mapAsync: a request that keeps failing', () => {
  it('fails the job after its retries with an AsyncRequestError naming operator, subtask, record and cause', async () => {
    const failed = await runJob(fixture('async-enrich.mjs'), {
      parallelism: 1,
      args: { n: '300', rate: '20000', failure: 'reject', attempts: '3' },
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(JobFailedError);
    const message = String((failed as Error).cause);
    expect(message).toMatch(/operator enrich/);
    expect(message).toMatch(
      /AsyncRequestError: enrich \(subtask 0\): the request for input record #100 failed on attempt 3 of 3: Error: lookup of 100 refused/,
    );
  });
});

describe('mapAsync: watermarks keep their position', () => {
  for (const ordered of ['true', 'false']) {
    it(`${ordered === 'true' ? 'ordered' : 'unordered'}, p=2: no record becomes late behind the async operator (window counts exact, none dropped)`, async () => {
      const n = 2000;
      const result = await runJob(fixture('async-event-time.mjs'), {
        parallelism: 2,
        args: { n: String(n), ordered },
      });
      const counts = result.sinks.out as { key: number; start: number; count: number }[];
      const want = new Map<string, number>();
      for (let x = 0; x < n; x++) {
        const k = `${x % 3}/${Math.floor(x / 100) * 100}`;
        want.set(k, (want.get(k) ?? 0) + 1);
      }
      expect(new Map(counts.map((c) => [`${c.key}/${c.start}`, c.count]))).toEqual(want);
      expect(counts).toHaveLength(want.size);
      const window = result.metrics.operators.find((o) => o.name === 'count');
      expect(window?.counters?.numLateRecordsDropped).toBe(0);
    });
  }
});
