/** Shared test helpers: temp directories, deterministic chunk bytes, metadata builders. */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import type {
  CheckpointMetadata,
  ChunkHandle,
  OperatorSubtaskState,
} from '../../../../src/state/storage/index.js';
import { DB_CHUNKS, environmentOptions } from '../../../../src/state/storage/storage-layout.js';

export function tempDir(label: string): { dir: string; remove: () => void } {
  const base = mkdtempSync(join(tmpdir(), `weir-${label}-`));
  return { dir: join(base, 'checkpoints'), remove: () => rmSync(base, { recursive: true, force: true }) };
}

/** Deterministic pseudo-random bytes (xorshift32) so a reader can recompute what a writer wrote. */
export function seededBytes(seed: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed | 0 || 0x9e3779b9;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

export function metadataFor(
  checkpointId: number,
  subtasks: OperatorSubtaskState[],
  options: { incremental?: boolean } = {},
): CheckpointMetadata {
  const parallelism = new Map<string, number>();
  for (const s of subtasks)
    parallelism.set(s.operatorUid, Math.max(parallelism.get(s.operatorUid) ?? 0, s.subtaskIndex + 1));
  return {
    checkpointId,
    timestamp: 1_700_000_000_000 + checkpointId,
    incremental: options.incremental ?? false,
    job: {
      jobName: 'test-job',
      maxParallelism: 128,
      operators: [...parallelism].map(([operatorUid, p]) => ({ operatorUid, parallelism: p })),
    },
    subtasks,
  };
}

export function subtask(
  operatorUid: string,
  subtaskIndex: number,
  chunks: ChunkHandle[],
): OperatorSubtaskState {
  return { operatorUid, subtaskIndex, chunks };
}

/** Overwrites a stored chunk's bytes directly in LMDB, bypassing CheckpointStorage. */
export async function overwriteChunkInLmdb(
  dir: string,
  chunkId: string,
  mutate: (bytes: Buffer) => Buffer | undefined,
): Promise<void> {
  const root = open(environmentOptions(dir));
  try {
    const chunks = root.openDB<Buffer, string>({ name: DB_CHUNKS, encoding: 'binary' });
    const bytes = chunks.getBinary(chunkId);
    if (bytes === undefined) throw new Error(`test setup: chunk ${chunkId} not in LMDB`);
    const replacement = mutate(Buffer.from(bytes));
    if (replacement === undefined) chunks.removeSync(chunkId);
    else chunks.putSync(chunkId, replacement);
  } finally {
    await root.close();
  }
}

export function flipByte(at: number): (bytes: Buffer) => Buffer {
  return (bytes) => {
    bytes[at % bytes.length] ^= 0x5a;
    return bytes;
  };
}
