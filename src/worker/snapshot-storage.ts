/**
 * The task side of checkpoint storage: opens the job's checkpoint directory in this worker and
 * writes a snapshot's chunks. Operator state (positions, transactions) goes as one msgpack chunk
 * per operator, named {@link OPERATOR_STATE_CHUNK}; keyed state as the backend's per-key-group
 * chunks. `keyedHandles` are the handles of the keyed chunks alone, which an incremental backend
 * keeps as the chain its next delta builds on.
 */

import { operatorStatePackr, packOperatorState } from '../protocol/operator-state-codec.js';
import { OPERATOR_STATE_CHUNK } from '../protocol/snapshot-chunks.js';
import type { TaskDeployment } from '../protocol/task-deployment.js';
import { CheckpointStorage } from '../state/storage/checkpoint-storage.js';
import type { ChunkHandle } from '../state/storage/chunk-handle.js';

export interface KeyedChunk {
  readonly name: string;
  readonly keyGroup?: number;
  readonly bytes: Uint8Array;
}

export interface TaskSnapshotStorage {
  /**
   * Writes part of an operator's keyed chunks ahead of {@link writeOperatorChunks} (a snapshot
   * written as it is serialized); resolves with their handles, in input order, once durable.
   */
  writeKeyedChunks(
    checkpointId: number,
    operatorUid: string,
    keyedChunks: readonly KeyedChunk[],
  ): Promise<{ handles: ChunkHandle[]; bytes: number }>;
  writeOperatorChunks(
    checkpointId: number,
    operatorUid: string,
    operatorState: readonly unknown[],
    keyedChunks: readonly KeyedChunk[],
  ): Promise<{ handles: ChunkHandle[]; keyedHandles: ChunkHandle[]; bytes: number }>;
  readChunk(handle: ChunkHandle): Uint8Array;
  close(): Promise<void>;
}

export async function openSnapshotStorage(d: TaskDeployment): Promise<TaskSnapshotStorage> {
  // The job's coordinator validated data.mdb when it opened the directory, before any task ran;
  // checked again here it would race with other tasks' commits.
  const storage = CheckpointStorage.open(d.checkpointing!.dir, { validateDataFile: false });
  const packr = operatorStatePackr();
  /** Writes `chunks` (non-empty) in one transaction: their handles in input order, and their bytes. */
  const write = async (checkpointId: number, operatorUid: string, chunks: readonly KeyedChunk[]) => {
    const handles = await storage.writeChunks(
      checkpointId,
      { operatorUid, subtaskIndex: d.subtaskIndex },
      chunks,
    );
    let bytes = 0;
    for (const c of chunks) bytes += c.bytes.byteLength;
    return { handles, bytes };
  };
  return {
    async writeKeyedChunks(checkpointId, operatorUid, keyedChunks) {
      if (keyedChunks.length === 0) return { handles: [], bytes: 0 };
      return write(checkpointId, operatorUid, keyedChunks);
    },
    async writeOperatorChunks(checkpointId, operatorUid, operatorState, keyedChunks) {
      const chunks: KeyedChunk[] = [...keyedChunks];
      if (operatorState.length > 0)
        chunks.push({
          name: OPERATOR_STATE_CHUNK,
          bytes: packOperatorState(packr, operatorUid, operatorState),
        });
      if (chunks.length === 0) return { handles: [], keyedHandles: [], bytes: 0 };
      const { handles, bytes } = await write(checkpointId, operatorUid, chunks);
      // writeChunks keeps input order: the keyed chunks come first.
      return { handles, keyedHandles: handles.slice(0, keyedChunks.length), bytes };
    },
    readChunk: (handle) => storage.readChunk(handle),
    close: () => storage.close(),
  };
}

/**
 * Reads chunks from another checkpoint directory (a savepoint or another job's checkpoints that
 * this task restores from); the task's own checkpoints still go to its job's directory.
 */
export function openChunkReader(dir: string): Pick<TaskSnapshotStorage, 'readChunk' | 'close'> {
  const storage = CheckpointStorage.open(dir, { create: false, validateDataFile: false });
  return { readChunk: (handle) => storage.readChunk(handle), close: () => storage.close() };
}
