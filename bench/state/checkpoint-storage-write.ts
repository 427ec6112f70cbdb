/**
 * Checkpoint storage write and verify throughput: 1000 chunks of 64 KiB (62.5 MiB) per round.
 *
 * Cases, interleaved per round so drift hits all alike:
 * - `writeChunks ×1`: one call with all 1000 chunks (one task snapshotting a large state).
 * - `writeChunks ×10 seq`: ten calls of 100 chunks, one after the other.
 * - `writeChunks ×4 conc`: four concurrent calls of 250 chunks on one handle (budget-bound).
 * - `verify`: `verifyCheckpoint` of the committed checkpoint (read + SHA-256 of every chunk).
 * - baseline `fs append+fsync`: the same bytes appended to one file, fsync every 4 MiB (the disk,
 *   with the same durability points as the storage's default 4 MiB transactions).
 *
 * Run: `npx tsx bench/state/checkpoint-storage-write.ts [--rounds N]`. Writes
 * `bench/results/checkpoint-storage-write.json`.
 */

import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStorage } from '../../src/state/storage/index.js';
import { formatMachineInfo, machineInfo, printTable, resultsPath, writeJson } from '../harness/index.js';

const CHUNKS = 1000;
const CHUNK_BYTES = 64 * 1024;
const TOTAL_MIB = (CHUNKS * CHUNK_BYTES) / (1024 * 1024);
const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 5;

const inputs = Array.from({ length: CHUNKS }, (_, i) => ({
  name: `kg-${i}`,
  bytes: randomBytes(CHUNK_BYTES),
}));
const owner = { operatorUid: 'bench', subtaskIndex: 0 };

async function timed(run: () => Promise<unknown> | unknown): Promise<number> {
  const start = performance.now();
  await run();
  return (performance.now() - start) / 1000;
}

const cases: Record<string, number[]> = {
  'writeChunks ×1': [],
  'writeChunks ×10 seq': [],
  'writeChunks ×4 conc': [],
  verify: [],
  'baseline fs append+fsync': [],
};

const base = mkdtempSync(join(tmpdir(), 'weir-bench-storage-'));
try {
  for (let round = 0; round < ROUNDS; round++) {
    const dir = join(base, `r${round}`);
    const storage = CheckpointStorage.open(dir);
    let id = 1;
    let handles = await storage.writeChunks(id++, owner, inputs.slice(0, 1)); // warm the environment
    cases['writeChunks ×1'].push(
      await timed(async () => {
        handles = await storage.writeChunks(id++, owner, inputs);
      }),
    );
    cases['writeChunks ×10 seq'].push(
      await timed(async () => {
        for (let i = 0; i < 10; i++)
          await storage.writeChunks(id++, owner, inputs.slice(i * 100, (i + 1) * 100));
      }),
    );
    cases['writeChunks ×4 conc'].push(
      await timed(() =>
        Promise.all(
          [0, 1, 2, 3].map((i) =>
            storage.writeChunks(
              id,
              { operatorUid: 'bench', subtaskIndex: i },
              inputs.slice(i * 250, (i + 1) * 250),
            ),
          ),
        ),
      ),
    );
    const checkpointId = handles[0].checkpointId;
    await storage.commitCheckpoint({
      checkpointId,
      timestamp: Date.now(),
      incremental: false,
      job: { maxParallelism: 128, operators: [{ operatorUid: 'bench', parallelism: 1 }] },
      subtasks: [{ ...owner, chunks: handles }],
    });
    cases.verify.push(
      await timed(() => {
        if (storage.verifyCheckpoint(checkpointId).state !== 'ok') throw new Error('verify failed');
      }),
    );
    await storage.close();

    const file = join(base, `baseline-${round}`);
    cases['baseline fs append+fsync'].push(
      await timed(() => {
        const fd = openSync(file, 'w');
        let sinceSync = 0;
        for (const { bytes } of inputs) {
          writeSync(fd, bytes);
          sinceSync += bytes.length;
          if (sinceSync >= 4 * 1024 * 1024) {
            fsyncSync(fd);
            sinceSync = 0;
          }
        }
        fsyncSync(fd);
        closeSync(fd);
      }),
    );
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = Object.entries(cases).map(([name, seconds]) => ({
  case: name,
  'MiB/s (median)': (TOTAL_MIB / median(seconds)).toFixed(0),
  'MiB/s (min)': (TOTAL_MIB / Math.max(...seconds)).toFixed(0),
  'MiB/s (max)': (TOTAL_MIB / Math.min(...seconds)).toFixed(0),
  'chunks/s': (CHUNKS / median(seconds)).toFixed(0),
}));
const machine = machineInfo();
process.stdout.write(
  `${formatMachineInfo(machine)}\n${CHUNKS} × ${CHUNK_BYTES / 1024} KiB per case, ${ROUNDS} rounds\n`,
);
printTable(rows);
writeJson(resultsPath('checkpoint-storage-write.json'), {
  machine,
  chunks: CHUNKS,
  chunkBytes: CHUNK_BYTES,
  rows,
});
