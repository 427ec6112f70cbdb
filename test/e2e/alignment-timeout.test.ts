/**
 * `checkpointing.alignmentTimeout` end to end, with an input stalled in an order that aligned
 * checkpoints cannot resolve (fixture alignment-timeout.mjs, synchronised through files, not
 * time): the union's task takes the checkpoint unaligned once its alignment timed out, the
 * checkpoint completes flagged as switched, and a failure right after it restores that
 * checkpoint — its channel state replayed — and the output is exactly the failure-free one.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CompletedCheckpointStats, startJob } from '../../dist/index.js';
import { CheckpointStorage } from '../../dist/state/storage/checkpoint-storage.js';
import { expectExactRunningSums, fixture, type RunningSum } from './helpers.js';

const N = 4000;
const KEYS = 10;
/**
 * Long enough that an alignment that is merely slow under load (load 20 on 2 cores) does not
 * switch: only the stalled input's checkpoint does (30 ms switched an ordinary one now and then).
 */
const ALIGNMENT_TIMEOUT_MS = 500;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Names of the chunks checkpoint `id` in `cpDir` holds, over all subtasks. */
async function chunkNames(cpDir: string, id: number): Promise<string[]> {
  const storage = CheckpointStorage.open(cpDir, { create: false });
  try {
    return storage.loadMetadata(id)?.subtasks.flatMap((s) => s.chunks.map((c) => c.name)) ?? [];
  } finally {
    await storage.close();
  }
}

describe('alignment timeout', () => {
  it('a stalled input: the checkpoint switches to unaligned and completes; a failure after it replays its channel state, exact output', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-alignment-timeout-'));
    const signals = path.join(dir, 'signals');
    const cpDir = path.join(dir, 'checkpoints');
    await import('node:fs').then((fs) => fs.mkdirSync(signals));
    const client = await startJob(fixture('alignment-timeout.mjs'), {
      parallelism: 1,
      // minPause: no checkpoint is triggered between the switched one and the failure that
      // follows it (10 s: ample under heavy load), so the restart restores the switched checkpoint.
      checkpointing: {
        interval: 50,
        minPause: 10_000,
        alignmentTimeout: ALIGNMENT_TIMEOUT_MS,
        dir: cpDir,
        retain: 20,
      },
      restartStrategy: { type: 'fixed-delay', attempts: 1, delay: 0 },
      // The right source blocks its thread on purpose (a stalled input), longer than the default.
      stuckTaskTimeout: 0,
      args: { n: String(N), keys: String(KEYS), dir: signals, stallAt: '200' },
    });
    const completed: CompletedCheckpointStats[] = [];
    let switched: CompletedCheckpointStats | undefined;
    client.on('checkpoint', (stats: CompletedCheckpointStats) => {
      completed.push(stats);
      // The right source stalls only once its last snapshot completed (see the fixture).
      writeFileSync(path.join(signals, 'completed'), String(stats.checkpointId));
      if (!switched && stats.switchedToUnaligned) {
        switched = stats;
        writeFileSync(path.join(signals, 'fail'), ''); // the map fails on the next right record
      }
    });
    const deployed: { attempt: number; restoredFrom: number | undefined }[] = [];
    client.on('deployed', (e: { attempt: number; restoredFrom: number | undefined }) => deployed.push(e));
    const result = await client.done;

    expect(switched).toBeDefined();
    const id = switched!.checkpointId;
    // The union's task switched (its alignment timed out) and said so; its alignment lasted at
    // least the timeout.
    const union = switched!.subtasks.filter((t) => t.switchedToUnaligned);
    expect(union.length).toBeGreaterThan(0);
    expect(switched!.maxAlignmentDurationMs).toBeGreaterThanOrEqual(ALIGNMENT_TIMEOUT_MS);
    // Checkpoints before it aligned normally.
    expect(completed.filter((c) => c.checkpointId < id).every((c) => !c.switchedToUnaligned)).toBe(true);
    expect(await chunkNames(cpDir, id)).toContain('channel-state');
    expect(result.restarts).toBe(1);
    expect(deployed.map((d) => d.restoredFrom)).toEqual([undefined, id]);
    expectExactRunningSums(result.sinks.sums as RunningSum[], N, KEYS);
  }, 180_000);
});
