/**
 * `checkpointing.alignmentTimeout` out of band (issue 14; fixture alignment-timeout-pull.mjs,
 * synchronised through files): a two-input task whose right ring holds thousands of slow records
 * ahead of its barrier switches to unaligned when its alignment times out, and then pulls that
 * barrier out of the ring instead of working through the records before it. The checkpoint
 * completes while most of them are still unprocessed (they are its channel state), and the
 * output is exact.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CompletedCheckpointStats, startJob } from '../../dist/index.js';
import { expectExactRunningSums, fixture, type RunningSum } from './helpers.js';

const N = 20_000;
const KEYS = 10;
const ALIGNMENT_TIMEOUT_MS = 200;
/** Right records ahead of its barrier that make a checkpoint the one to judge (of N − 256). */
const AHEAD = 2000;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('alignment timeout, out of band', () => {
  it('a switched checkpoint pulls its barrier out of a backpressured ring: it completes before the records ahead of it are processed', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'weir-alignment-pull-'));
    const signals = path.join(dir, 'signals');
    mkdirSync(signals);
    const client = await startJob(fixture('alignment-timeout-pull.mjs'), {
      parallelism: 1,
      // A checkpoint that waits for the right ring to drain (in band: ~20 k records at ≥ 1 ms)
      // fails the test either way: it expires, or it completes after the records ahead of it.
      checkpointing: {
        interval: 50,
        timeout: 20_000,
        alignmentTimeout: ALIGNMENT_TIMEOUT_MS,
        dir: path.join(dir, 'cp'),
      },
      args: { n: String(N), keys: String(KEYS), dir: signals },
    });
    const done = path.join(signals, 'done');
    // The first checkpoint whose right barrier had AHEAD records ahead of it decides (one taken
    // while right was still emitting its first batches has a few); `done` lets the sources end
    // and the map speed up.
    let first: CompletedCheckpointStats | undefined;
    let expired = false;
    client.on('checkpoint', (stats: CompletedCheckpointStats) => {
      const ahead = path.join(signals, `right-${stats.checkpointId}`);
      if (first || !existsSync(ahead) || Number(readFileSync(ahead, 'utf8')) < AHEAD) return;
      first = stats;
      writeFileSync(done, String(stats.checkpointId));
    });
    client.on('checkpoint-failed', () => {
      if (first) return; // later ones (the job ending) do not matter
      expired = true;
      writeFileSync(done, 'failed');
    });
    const result = await client.done;

    expect(expired).toBe(false);
    const what = first && {
      id: first.checkpointId,
      ahead: readFileSync(path.join(signals, `right-${first.checkpointId}`), 'utf8'),
      maxAlignmentDurationMs: first.maxAlignmentDurationMs,
      durationMs: first.durationMs,
    };
    expect(first?.switchedToUnaligned, JSON.stringify(what)).toBe(true);
    const id = first!.checkpointId;
    // Right records ahead of right's barrier of the switched checkpoint, and those the slow map
    // had processed when that checkpoint had completed (all of them if it never saw `done`
    // before the last one). In band, the barrier would have come only after all of them.
    const ahead = Number(readFileSync(path.join(signals, `right-${id}`), 'utf8'));
    const seenFile = path.join(signals, 'seen');
    const seen = existsSync(seenFile) ? Number(readFileSync(seenFile, 'utf8')) : N;
    expect(ahead).toBeGreaterThan(0);
    expect(seen).toBeLessThan(ahead);
    expectExactRunningSums(result.sinks.sums as RunningSum[], N, KEYS);
  }, 180_000);
});
