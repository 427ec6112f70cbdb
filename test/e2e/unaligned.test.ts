/**
 * Unaligned exactly-once checkpoints end to end: two-input tasks never block on alignment; the
 * in-flight records at the cut are stored as channel state and replayed on restore, so a failure
 * still yields exactly the failure-free output — also when the restore changes parallelism.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionError, type JobOptions, startJob } from '../../dist/index.js';
import {
  channelStateByCheckpoint,
  expectExactRunningSums,
  expectRestoredRunningSums,
  fixture,
  type RunningSum,
  runSums,
} from './helpers.js';

const N = 8000;
const KEYS = 10;

const run = (args: Record<string, string>, options: JobOptions) =>
  runSums('two-input-sum.mjs', N, KEYS, args, options);

const expectExact = (sums: readonly RunningSum[]): void => expectExactRunningSums(sums, N, KEYS);

/** Checkpoints in `dir` whose metadata references channel state. */
const checkpointsWithChannelState = async (dir: string): Promise<number> =>
  (await channelStateByCheckpoint(dir)).filter(Boolean).length;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('unaligned checkpoints', () => {
  it('are rejected with at-least-once', async () => {
    await expect(
      startJob(fixture('two-input-sum.mjs'), {
        checkpointing: { interval: 100, mode: 'at-least-once', unaligned: true },
      }),
    ).rejects.toThrow(InvalidOptionError);
  });

  for (const parallelism of [1, 2]) {
    for (const failure of ['throw', 'exit']) {
      it(`p=${parallelism}: a ${failure} failure restores channel state and the output is exact`, async () => {
        const { result, sums } = await run(
          { failure, slowEvery: '3' },
          { parallelism, checkpointing: { interval: 50, mode: 'exactly-once', unaligned: true } },
        );
        expect(result.restarts).toBe(1);
        expect(result.checkpoints.length).toBeGreaterThan(0);
        expect(result.checkpoints.every((c) => c.maxAlignmentDurationMs === 0)).toBe(true);
        expectExact(sums);
      });
    }
  }

  it('with debloated rings behind a slow consumer: exact output after a failure', async () => {
    const { result, sums } = await run(
      { failure: 'exit', slowEvery: '3' },
      {
        parallelism: 2,
        checkpointing: { interval: 50, mode: 'exactly-once', unaligned: true },
        channels: { ringBytes: 8192, debloat: { targetMs: 2, periodMs: 10, minBytes: 1024 } },
      },
    );
    expect(result.restarts).toBe(1);
    expect(result.checkpoints.length).toBeGreaterThan(0);
    expectExact(sums);
    const published = result.metrics.operators.map((o) => o.counters?.debloatLimitsPublished ?? 0);
    expect(published.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  }, 180_000);

  it('with the lmdb backend and incremental checkpoints: exact output after a failure', async () => {
    const { result, sums } = await run(
      { failure: 'throw', slowEvery: '3' },
      {
        parallelism: 2,
        stateBackend: 'lmdb',
        checkpointing: { interval: 50, mode: 'exactly-once', unaligned: true, incremental: true },
      },
    );
    expect(result.restarts).toBe(1);
    expectExact(sums);
  });

  it('records in-flight data as channel state, and a restore at another parallelism (2 -> 3) replays it to the right owners', async () => {
    // Run 1: fails for good after some checkpoints (no restarts), leaving them in `dir`. Whether a
    // barrier finds records in flight depends on scheduling (a loaded machine can drain every ring
    // before each barrier), so a run 1 that left no checkpoint with channel state is repeated in a
    // fresh directory, at most 5 times: the precondition of what this test checks, not its result.
    let withChannelState = 0;
    for (let attempt = 0; attempt < 5 && withChannelState === 0; attempt++) {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = mkdtempSync(path.join(tmpdir(), 'weir-unaligned-'));
      const first = await run(
        { failure: 'throw', at: '0.7', slowEvery: '2', rate: '6000' },
        {
          parallelism: 2,
          checkpointing: { interval: 30, mode: 'exactly-once', unaligned: true, dir, retain: 50 },
          restartStrategy: { type: 'none' },
        },
      ).catch((e: unknown) => e);
      expect(first).toBeInstanceOf(Error);
      withChannelState = await checkpointsWithChannelState(dir);
    }
    expect(withChannelState).toBeGreaterThan(0);
    // Run 2: restores the latest checkpoint at parallelism 3 and finishes (no failure this time).
    const client = await startJob(fixture('two-input-sum.mjs'), {
      parallelism: 3,
      restoreFrom: 'latest',
      checkpointing: { interval: 100, mode: 'exactly-once', unaligned: true, dir },
      args: { n: String(N), keys: String(KEYS), rate: '6000' },
    });
    const restored: number[] = [];
    client.on('restored', (e: { checkpointId: number }) => restored.push(e.checkpointId));
    const result = await client.done;
    expect(restored).toHaveLength(1);
    // The collect sink of run 2 holds what run 2 committed: every key's final sum and count are
    // exact, and the counts run 2 emitted continue exactly where the checkpoint left them.
    expectRestoredRunningSums(result.sinks.sums as RunningSum[], N, KEYS);
    // Two rate-limited runs (52 s alone at load ~70): 60 s was too little under load.
  }, 180_000);
});
