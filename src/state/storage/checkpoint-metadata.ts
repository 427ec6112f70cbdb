/**
 * Checkpoint metadata: what the coordinator commits once every task acknowledged. It is the
 * commit point of a checkpoint and the only index of its chunks, so it names every chunk the
 * checkpoint needs, including chunks shared from earlier checkpoints (incremental snapshots).
 *
 * Stored record: `[format u8 = 1][sha256 of payload, 32 bytes][msgpack payload]`.
 */

import { pack, unpack } from 'msgpackr';
import { CorruptStateError } from '../../errors.js';
import { digestOf, isChecksum } from './checksum.js';
import { type ChunkHandle, checkCheckpointId, checkOwner } from './chunk-handle.js';

/** Parallelism of one operator as it ran when the checkpoint was taken. */
export interface OperatorInfo {
  readonly operatorUid: string;
  readonly parallelism: number;
  /** The job vertex (chain) the operator ran in, if the runtime wants it recorded. */
  readonly vertexId?: number;
  readonly name?: string;
}

export interface JobInfo {
  readonly jobName?: string;
  readonly maxParallelism: number;
  /**
   * How operators without `.uid()` were named (`graph/operator-uid.ts`): 2 for
   * kind/name/ordinal uids; absent in checkpoints written before, which used `${kind}-${nodeId}`.
   */
  readonly defaultUidScheme?: number;
  readonly operators: readonly OperatorInfo[];
}

/** The chunks one operator subtask needs to restore (what its task acknowledged). */
export interface OperatorSubtaskState {
  readonly operatorUid: string;
  readonly subtaskIndex: number;
  readonly chunks: readonly ChunkHandle[];
}

export interface CheckpointMetadata {
  readonly checkpointId: number;
  /** Trigger time, ms since the epoch. */
  readonly timestamp: number;
  /** True when some state is expressed as deltas over chunks of earlier checkpoints. */
  readonly incremental: boolean;
  readonly job: JobInfo;
  readonly subtasks: readonly OperatorSubtaskState[];
  /**
   * True once every task confirmed, after the checkpoint completed, that its sinks committed
   * every transaction of checkpoints `<=` this one, and nothing completed after it (set by
   * stop-with-savepoint, `CheckpointStorage.markSinksCommitted`). A restore from it then commits
   * nothing again. Absent (every periodic checkpoint): the commits may not have happened, so a
   * restore commits the restored transactions again (commit-on-restore).
   */
  readonly sinksCommitted?: boolean;
}

const RECORD_FORMAT = 1;
const HEADER_BYTES = 1 + 32;

/** Every chunk the checkpoint references, deduplicated by chunk id, in first-seen order. */
export function referencedChunks(metadata: CheckpointMetadata): ChunkHandle[] {
  const seen = new Map<string, ChunkHandle>();
  for (const subtask of metadata.subtasks) {
    for (const handle of subtask.chunks) if (!seen.has(handle.chunkId)) seen.set(handle.chunkId, handle);
  }
  return [...seen.values()];
}

/** Throws TypeError/RangeError describing the first malformed field. */
export function checkMetadata(metadata: CheckpointMetadata): void {
  if (metadata === null || typeof metadata !== 'object') throw new TypeError('metadata must be an object');
  const id = checkCheckpointId(metadata.checkpointId, 'metadata.checkpointId');
  if (!Number.isFinite(metadata.timestamp)) throw new TypeError('metadata.timestamp must be a finite number');
  if (typeof metadata.incremental !== 'boolean')
    throw new TypeError('metadata.incremental must be a boolean');
  const job = metadata.job;
  if (job === null || typeof job !== 'object') throw new TypeError('metadata.job must be an object');
  if (!Number.isInteger(job.maxParallelism) || job.maxParallelism < 1) {
    throw new RangeError(
      `metadata.job.maxParallelism must be a positive integer, got ${String(job.maxParallelism)}`,
    );
  }
  if (!Array.isArray(job.operators)) throw new TypeError('metadata.job.operators must be an array');
  for (const op of job.operators) {
    if (typeof op?.operatorUid !== 'string')
      throw new TypeError('metadata.job.operators[].operatorUid must be a string');
    if (!Number.isInteger(op.parallelism) || op.parallelism < 1) {
      throw new RangeError(`parallelism of operator ${op.operatorUid} must be a positive integer`);
    }
  }
  if (!Array.isArray(metadata.subtasks)) throw new TypeError('metadata.subtasks must be an array');
  if (metadata.sinksCommitted !== undefined && typeof metadata.sinksCommitted !== 'boolean')
    throw new TypeError('metadata.sinksCommitted must be a boolean when present');
  for (const subtask of metadata.subtasks) {
    checkOwner(subtask);
    if (!Array.isArray(subtask.chunks)) throw new TypeError('metadata.subtasks[].chunks must be an array');
    for (const handle of subtask.chunks) checkHandle(handle, id);
  }
}

function checkHandle(handle: ChunkHandle, referencingCheckpointId: number): void {
  if (handle === null || typeof handle !== 'object') throw new TypeError('a chunk handle must be an object');
  if (typeof handle.chunkId !== 'string' || handle.chunkId.length === 0) {
    throw new TypeError('chunk handle chunkId must be a non-empty string');
  }
  checkCheckpointId(handle.checkpointId, `checkpointId of chunk ${handle.chunkId}`);
  if (handle.checkpointId > referencingCheckpointId) {
    throw new RangeError(
      `chunk ${handle.chunkId} was written by checkpoint ${handle.checkpointId}, ` +
        `after the referencing checkpoint ${referencingCheckpointId}`,
    );
  }
  if (!Number.isInteger(handle.size) || handle.size < 0)
    throw new RangeError(`bad size of chunk ${handle.chunkId}`);
  if (!isChecksum(handle.checksum)) throw new TypeError(`bad checksum of chunk ${handle.chunkId}`);
}

export function encodeMetadata(metadata: CheckpointMetadata): Buffer {
  const payload = pack(metadata);
  const record = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  record[0] = RECORD_FORMAT;
  digestOf(payload).copy(record, 1);
  payload.copy(record, HEADER_BYTES);
  return record;
}

/** Decodes and verifies a stored record; throws CorruptStateError naming the checkpoint. */
export function decodeMetadata(checkpointId: number, record: Uint8Array): CheckpointMetadata {
  const bytes = Buffer.from(record.buffer, record.byteOffset, record.byteLength);
  if (bytes.length < HEADER_BYTES || bytes[0] !== RECORD_FORMAT) {
    throw new CorruptStateError(`metadata of checkpoint ${checkpointId} has an unknown record format`);
  }
  const payload = bytes.subarray(HEADER_BYTES);
  if (!digestOf(payload).equals(bytes.subarray(1, HEADER_BYTES))) {
    throw new CorruptStateError(`metadata of checkpoint ${checkpointId} failed its checksum`);
  }
  let metadata: CheckpointMetadata;
  try {
    metadata = unpack(payload) as CheckpointMetadata;
    checkMetadata(metadata);
  } catch (cause) {
    throw new CorruptStateError(`metadata of checkpoint ${checkpointId} cannot be decoded`, { cause });
  }
  if (metadata.checkpointId !== checkpointId) {
    throw new CorruptStateError(
      `metadata stored under checkpoint ${checkpointId} names checkpoint ${metadata.checkpointId}`,
    );
  }
  return metadata;
}
