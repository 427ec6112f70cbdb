/**
 * The log connectors in real jobs (dist/, worker threads) with injected failures, checked against
 * an oracle computed from the input:
 * (a) sources.log (bounded, 3 partitions, 30k records) -> keyed running sum -> sinks.collect;
 * (b) sources.sequence -> keyed running sum -> sinks.log, exactly-once and at-least-once;
 * (c) sources.log -> keyed running sum -> sinks.log, cancelled at parallelism 2 after checkpoints
 *     completed, then restored from the latest checkpoint at parallelism 3.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type JobOptions, openLog, startJob } from '../../dist/index.js';
import { expectExactRunningSums, expectedSums, fixture, type RunningSum } from './helpers.js';

const N = 30_000;
const KEYS = 10;
const PARTITIONS = 3;

type Sum = RunningSum;
const expectExact = (sums: readonly Sum[], n: number): void => expectExactRunningSums(sums, n, KEYS);

/** Everything in `topic`, all partitions. */
async function readTopic<T>(dir: string, topic: string): Promise<T[]> {
  const log = openLog(dir);
  try {
    const t = log.topic<T>(topic);
    const out: T[] = [];
    for (let p = 0; p < t.partitions; p++)
      out.push(...t.read(p, 0, Number.MAX_SAFE_INTEGER).map((r) => r.value));
    return out;
  } finally {
    await log.close();
  }
}

async function run(args: Record<string, string>, options: JobOptions) {
  const restoredFrom: (number | undefined)[] = [];
  const client = await startJob(fixture('log-pipelines.mjs'), {
    restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
    ...options,
    args: { n: String(N), keys: String(KEYS), ...args },
  });
  client.on('deployed', (e: { attempt: number; restoredFrom?: number }) => {
    if (e.attempt > 0) restoredFrom.push(e.restoredFrom);
  });
  const result = await client.done;
  return { result, restoredFrom };
}

describe('log connectors end to end', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** A log directory whose topic `in` holds {key, value} for value 0..N-1, round-robin over 3 partitions. */
  async function inputLog(): Promise<string> {
    const base = mkdtempSync(join(tmpdir(), 'weir-e2e-log-'));
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const dir = join(base, 'log');
    const log = openLog(dir);
    const topic = log.topic('in', { partitions: PARTITIONS });
    for (let from = 0; from < N; from += 5000) {
      topic.appendSync(Array.from({ length: 5000 }, (_, i) => ({ key: (from + i) % KEYS, value: from + i })));
    }
    expect([0, 1, 2].map((p) => topic.endOffset(p))).toEqual([N / 3, N / 3, N / 3]);
    await log.close();
    return dir;
  }

  for (const parallelism of [1, 2]) {
    it(`(a) sources.log -> running sum -> collect, p=${parallelism}, failure after a checkpoint: exact`, async () => {
      const dir = await inputLog();
      const { result, restoredFrom } = await run(
        { pipeline: 'log-to-collect', dir, topic: 'in', failure: 'throw' },
        { parallelism, checkpointing: { interval: 100, mode: 'exactly-once' } },
      );
      expect(result.restarts).toBe(1);
      // recovery used a completed checkpoint, not a fresh start
      expect(restoredFrom).toHaveLength(1);
      expect(typeof restoredFrom[0]).toBe('number');
      expectExact(result.sinks.sums as Sum[], N);
      const source = result.metrics.operators.find((o) => o.name === 'events');
      expect(source?.counters.recordsLostToRetention).toBe(0);
    });
  }

  it('(b) sequence -> running sum -> sinks.log, exactly-once with a failure: every record once', async () => {
    const dir = await inputLog();
    const { result, restoredFrom } = await run(
      { pipeline: 'sequence-to-log', dir, out: 'sums', failure: 'throw' },
      { parallelism: 2, checkpointing: { interval: 100, mode: 'exactly-once' } },
    );
    expect(result.restarts).toBe(1);
    expect(typeof restoredFrom[0]).toBe('number');
    expectExact(await readTopic<Sum>(dir, 'sums'), N);
  });

  it('(b) sequence -> running sum -> sinks.log, at-least-once with a failure: nothing missing', async () => {
    const dir = await inputLog();
    const { result } = await run(
      { pipeline: 'sequence-to-log', dir, out: 'sums', failure: 'throw' },
      { parallelism: 2, checkpointing: { interval: 100, mode: 'at-least-once' } },
    );
    expect(result.restarts).toBe(1);
    // At-least-once state may count replayed records twice (no alignment), so only presence is checked.
    const sums = await readTopic<Sum>(dir, 'sums');
    expect(sums.length).toBeGreaterThanOrEqual(N);
    const seen = new Set(sums.map((s) => `${s.key}/${s.count}`));
    for (const [key, e] of expectedSums(N, KEYS))
      for (let c = 1; c <= e.count; c++) expect(seen.has(`${key}/${c}`)).toBe(true);
  });

  it('(c) restored from the latest checkpoint at parallelism 3 after running at 2: every partition read once', async () => {
    const dir = await inputLog();
    const checkpoints = join(dir, '..', 'checkpoints');
    // the sources hold half-way until this file exists: the cancel lands mid-run
    const release = join(dir, '..', 'release');
    const args = {
      n: String(N),
      keys: String(KEYS),
      pipeline: 'log-to-log',
      dir,
      topic: 'in',
      out: 'sums',
      hold: release,
    };

    const first = await startJob(fixture('log-pipelines.mjs'), {
      parallelism: 2,
      args,
      checkpointing: { interval: 100, mode: 'exactly-once', dir: checkpoints },
    });
    // Cancelled at the first completed checkpoint after some output was committed (a commit
    // follows its checkpoint's completion, so on a loaded machine the first few may cover none).
    let cancelling = false;
    const cancelled = new Promise<void>((resolve, reject) => {
      first.on('checkpoint', () => {
        if (cancelling) return;
        readTopic<Sum>(dir, 'sums').then(
          (committed) => {
            if (committed.length === 0 || cancelling) return;
            cancelling = true;
            void first.cancel().then(resolve);
          },
          // The sink has not created its topic yet: nothing committed.
          (error: Error) => (/topic/i.test(error.message) ? undefined : reject(error)),
        );
      });
    });
    await cancelled;
    await expect(first.done).rejects.toThrow(/cancelled/);
    const partial = (await readTopic<Sum>(dir, 'sums')).length;
    // the first run stopped part-way: some output committed, not all
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(N);

    writeFileSync(release, '');
    const second = await startJob(fixture('log-pipelines.mjs'), {
      parallelism: 3,
      args,
      checkpointing: { interval: 100, mode: 'exactly-once', dir: checkpoints },
      restoreFrom: 'latest',
    });
    const result = await second.done;
    expect(result.restarts).toBe(0);
    // It resumed part-way (the 'restored' event fires before startJob returns, so it is not
    // observable here): its source emitted only what the restored positions left.
    const emitted = result.metrics.operators.find((o) => o.name === 'events')?.recordsOut ?? 0;
    expect(emitted).toBeGreaterThan(0);
    expect(emitted).toBeLessThan(N);
    expect(result.plan.vertices.every((v) => v.parallelism === 3)).toBe(true);
    expectExact(await readTopic<Sum>(dir, 'sums'), N);
  });
});
