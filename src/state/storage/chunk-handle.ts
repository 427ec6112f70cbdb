/**
 * Chunks: the opaque byte strings that state backends hand to storage, and the handles that
 * name them in checkpoint metadata. Storage never looks inside a chunk.
 */

import { CHECKPOINT_ID_DIGITS, MAX_CHECKPOINT_ID } from './storage-layout.js';

/** Which operator subtask wrote (or, in metadata, restores) a set of chunks. */
export interface ChunkOwner {
  readonly operatorUid: string;
  readonly subtaskIndex: number;
}

/** A chunk as handed over by a state backend. */
export interface ChunkInput {
  /** The backend's own name for the chunk (e.g. `keyed/sum/kg-17`); need not be unique. */
  readonly name: string;
  /** Must not be mutated until the `writeChunks` promise settles (lmdb-js writes it off-thread). */
  readonly bytes: Uint8Array;
  /** The key group whose state this chunk holds, if it holds one key group's state. */
  readonly keyGroup?: number;
}

/**
 * A durable chunk. Plain data (structured-clone and msgpack safe): tasks send handles to the
 * coordinator, which stores them in checkpoint metadata; incremental checkpoints copy the
 * handles of chunks they share from earlier checkpoints.
 */
export interface ChunkHandle {
  /** Unique in the directory; starts with the zero-padded id of the checkpoint that wrote it. */
  readonly chunkId: string;
  /** The checkpoint that wrote the chunk (earlier than the referencing one when shared). */
  readonly checkpointId: number;
  readonly name: string;
  /** Length in bytes. */
  readonly size: number;
  /** See `checksum.ts`. */
  readonly checksum: string;
  readonly keyGroup?: number;
}

/** Positive safe integer below 10^16, or a RangeError naming `what`. */
export function checkCheckpointId(checkpointId: unknown, what = 'checkpointId'): number {
  if (
    typeof checkpointId !== 'number' ||
    !Number.isInteger(checkpointId) ||
    checkpointId < 1 ||
    checkpointId > MAX_CHECKPOINT_ID
  ) {
    throw new RangeError(
      `${what} must be an integer in [1, ${MAX_CHECKPOINT_ID}], got ${String(checkpointId)}`,
    );
  }
  return checkpointId;
}

/** The key prefix shared by every chunk written for `checkpointId`; prefixes sort like the ids. */
export function chunkIdPrefix(checkpointId: number): string {
  return String(checkpointId).padStart(CHECKPOINT_ID_DIGITS, '0');
}

/**
 * `<16-digit checkpoint id>/<writer nonce>/<sequence>`. The nonce (random per `writeChunks`
 * call) keeps ids unique when a checkpoint id is reused: a process that died before committing
 * checkpoint N leaves chunks of N behind, and its successor may trigger N again.
 */
export function chunkIdFor(checkpointId: number, nonce: string, sequence: number): string {
  return `${chunkIdPrefix(checkpointId)}/${nonce}/${sequence}`;
}

/** The checkpoint id encoded in a chunk id, or `undefined` when it is not one of ours. */
export function checkpointIdOfChunk(chunkId: string): number | undefined {
  const digits = chunkId.slice(0, CHECKPOINT_ID_DIGITS);
  if (chunkId.charAt(CHECKPOINT_ID_DIGITS) !== '/' || !/^\d+$/.test(digits)) return undefined;
  return Number(digits);
}

export function checkOwner(owner: ChunkOwner): void {
  if (owner === null || typeof owner !== 'object')
    throw new TypeError('owner must be { operatorUid, subtaskIndex }');
  if (typeof owner.operatorUid !== 'string' || owner.operatorUid.length === 0) {
    throw new TypeError('owner.operatorUid must be a non-empty string');
  }
  if (!Number.isInteger(owner.subtaskIndex) || owner.subtaskIndex < 0) {
    throw new RangeError(
      `owner.subtaskIndex must be a non-negative integer, got ${String(owner.subtaskIndex)}`,
    );
  }
}

export function checkChunkInput(chunk: ChunkInput, index: number): void {
  if (chunk === null || typeof chunk !== 'object') throw new TypeError(`chunks[${index}] must be an object`);
  if (typeof chunk.name !== 'string') throw new TypeError(`chunks[${index}].name must be a string`);
  if (!(chunk.bytes instanceof Uint8Array))
    throw new TypeError(`chunks[${index}].bytes must be a Uint8Array`);
  if (chunk.keyGroup !== undefined && (!Number.isInteger(chunk.keyGroup) || chunk.keyGroup < 0)) {
    throw new RangeError(
      `chunks[${index}].keyGroup must be a non-negative integer, got ${String(chunk.keyGroup)}`,
    );
  }
}
