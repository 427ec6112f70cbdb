/** One row of `weir checkpoints DIR`: what a committed checkpoint holds, from its metadata alone. */

import { type CheckpointMetadata, referencedChunks } from './checkpoint-metadata.js';

export interface CheckpointDescription {
  readonly checkpointId: number;
  readonly timestamp: number;
  readonly kind: 'full' | 'incremental';
  /** Bytes needed to restore (every referenced chunk, shared ones included). */
  readonly totalBytes: number;
  /** Bytes written by this checkpoint itself (the rest is shared with earlier checkpoints). */
  readonly ownBytes: number;
  readonly chunkCount: number;
  /** `uid ×parallelism`, in metadata order. */
  readonly operators: readonly string[];
}

export function describeCheckpoint(metadata: CheckpointMetadata): CheckpointDescription {
  let totalBytes = 0;
  let ownBytes = 0;
  const chunks = referencedChunks(metadata);
  for (const handle of chunks) {
    totalBytes += handle.size;
    if (handle.checkpointId === metadata.checkpointId) ownBytes += handle.size;
  }
  return {
    checkpointId: metadata.checkpointId,
    timestamp: metadata.timestamp,
    kind: metadata.incremental ? 'incremental' : 'full',
    totalBytes,
    ownBytes,
    chunkCount: chunks.length,
    operators: metadata.job.operators.map((op) => `${op.operatorUid} ×${op.parallelism}`),
  };
}
