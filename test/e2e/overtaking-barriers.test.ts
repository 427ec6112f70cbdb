/**
 * Unaligned barriers that overtake full rings, end to end: a source at full speed feeds a slow
 * keyed task through one channel, so its ring is full whenever a barrier comes. Before barriers
 * could overtake, such a checkpoint had no channel state at all (one channel: nothing arrives
 * between the first barrier and the last); now its channel state is the ring the barrier passed.
 * A failure then restores it (in place, and in a second job from the checkpoint directory) and
 * the output is exactly the failure-free one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type JobOptions, startJob } from '../../dist/index.js';
import {
  channelStateByCheckpoint,
  expectExactRunningSums,
  expectRestoredRunningSums,
  fixture,
  type RunningSum,
  runSums,
} from './helpers.js';

const N = 30_000;
const KEYS = 10;

const run = (args: Record<string, string>, options: JobOptions) =>
  runSums('overtake-sum.mjs', N, KEYS, args, options);

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('unaligned barriers overtake full rings', () => {
  for (const [parallelism, failure] of [
    [1, 'exit'],
    [2, 'throw'],
  ] as const) {
    it(`p=${parallelism}: checkpoints record the overtaken ring; a ${failure} failure restores it exactly`, async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'weir-overtake-'));
      const { result, sums } = await run(
        { failure },
        {
          parallelism,
          checkpointing: { interval: 50, mode: 'exactly-once', unaligned: true, dir, retain: 100 },
          channels: { ringBytes: 16384 },
        },
      );
      expect(result.restarts).toBe(1);
      expectExactRunningSums(sums, N, KEYS);
      // Mid-run checkpoints took channel state: only an overtaking barrier can give it one here.
      const withState = (await channelStateByCheckpoint(dir)).filter(Boolean).length;
      expect(withState).toBeGreaterThan(0);
    }, 180_000);
  }

  it('a job restored from a checkpoint with overtaken channel state finishes exactly', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-overtake-'));
    // Run 1 fails for good once checkpoints were taken, leaving them in `dir`.
    const first = await run(
      { failure: 'throw', at: '0.7' },
      {
        parallelism: 1,
        checkpointing: { interval: 50, mode: 'exactly-once', unaligned: true, dir, retain: 100 },
        channels: { ringBytes: 16384 },
        restartStrategy: { type: 'none' },
      },
    ).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(Error);
    const states = await channelStateByCheckpoint(dir);
    expect(states.length).toBeGreaterThan(0);
    // The ring is full at every mid-run barrier: the latest checkpoint carries channel state.
    expect(states.at(-1)).toBe(true);
    const client = await startJob(fixture('overtake-sum.mjs'), {
      parallelism: 1,
      restoreFrom: 'latest',
      checkpointing: { interval: 100, mode: 'exactly-once', unaligned: true, dir },
      channels: { ringBytes: 16384 },
      args: { n: String(N), keys: String(KEYS) },
    });
    const restored: number[] = [];
    client.on('restored', (e: { checkpointId: number }) => restored.push(e.checkpointId));
    const result = await client.done;
    expect(restored).toHaveLength(1);
    // Run 2 emits the counts after the checkpoint, each once, up to the exact finals.
    expectRestoredRunningSums(result.sinks.sums as RunningSum[], N, KEYS);
  }, 180_000);
});
