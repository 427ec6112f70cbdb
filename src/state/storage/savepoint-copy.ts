/**
 * A savepoint's copy: a committed checkpoint written, metadata and every chunk it references
 * (shared ones included), into a new checkpoint directory of its own, so the copy restores
 * without the directory it came from (`restoreFrom: path`, `weir checkpoints path`). Used by a
 * job of one process (job-checkpointing.ts) and by a cluster job's coordinator
 * (cluster/cluster-savepoint.ts). Cost: every chunk read once and written once.
 */

import { existsSync, readdirSync } from 'node:fs';
import { CheckpointStorageError, InvalidOptionError } from '../../errors.js';
import type { CheckpointMetadata } from './checkpoint-metadata.js';
import { CheckpointStorage } from './checkpoint-storage.js';

/** @throws InvalidOptionError when `path` exists and is not empty: a savepoint never overwrites. */
export function checkSavepointDir(path: string): void {
  if (existsSync(path) && readdirSync(path).length > 0) {
    throw new InvalidOptionError('savepoint dir', `${path} is not empty; a savepoint never overwrites`);
  }
}

/**
 * Copies checkpoint `metadata` (committed in `source`) into a new directory `path` as a full,
 * self-contained checkpoint. Every chunk is read in one synchronous pass first, so a concurrent
 * discard in `source` (retention) cannot remove any of it in between.
 * @throws CheckpointStorageError when the copy cannot be committed.
 */
export async function copyCheckpoint(
  source: CheckpointStorage,
  metadata: CheckpointMetadata,
  path: string,
): Promise<void> {
  const id = metadata.checkpointId;
  const parts = metadata.subtasks.map((s) => ({
    entry: s,
    chunks: s.chunks.map((h) => ({
      name: h.name,
      bytes: source.readChunk(h),
      ...(h.keyGroup === undefined ? {} : { keyGroup: h.keyGroup }),
    })),
  }));
  const out = CheckpointStorage.open(path);
  try {
    const subtasks: CheckpointMetadata['subtasks'][number][] = [];
    for (const { entry, chunks } of parts) {
      const handles = await out.writeChunks(
        id,
        { operatorUid: entry.operatorUid, subtaskIndex: entry.subtaskIndex },
        chunks,
      );
      subtasks.push({ ...entry, chunks: handles });
    }
    const outcome = await out.commitCheckpoint({ ...metadata, incremental: false, subtasks });
    if (outcome.state !== 'committed') {
      throw new CheckpointStorageError(`writing savepoint ${id} to ${path} failed: ${outcome.state}`);
    }
  } finally {
    await out.close();
  }
}
