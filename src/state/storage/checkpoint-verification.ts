/** The result of checking one committed checkpoint against the bytes actually stored. */

import type { CheckpointMetadata } from './checkpoint-metadata.js';
import type { ChunkHandle } from './chunk-handle.js';

export type ChunkVerification =
  | { readonly state: 'ok'; readonly handle: ChunkHandle }
  | { readonly state: 'missing'; readonly handle: ChunkHandle }
  | { readonly state: 'corrupt'; readonly handle: ChunkHandle; readonly reason: string };

export type CheckpointVerification =
  /** Metadata decodes and every referenced chunk is present with its size and checksum. */
  | {
      readonly state: 'ok';
      readonly checkpointId: number;
      readonly metadata: CheckpointMetadata;
      readonly chunks: readonly ChunkVerification[];
    }
  /** Metadata decodes but at least one referenced chunk is missing or corrupt. */
  | {
      readonly state: 'damaged';
      readonly checkpointId: number;
      readonly metadata: CheckpointMetadata;
      readonly chunks: readonly ChunkVerification[];
    }
  /** No committed metadata under this id (never committed, or discarded). */
  | { readonly state: 'not-found'; readonly checkpointId: number }
  /** The metadata record itself fails its checksum or cannot be decoded. */
  | { readonly state: 'metadata-corrupt'; readonly checkpointId: number; readonly reason: string };

/** One line per problem, e.g. `chunk 000…7/ab12/3 (keyed/sum, 4096 B) of checkpoint 7: corrupt (checksum mismatch)`. */
export function describeProblems(verification: CheckpointVerification): string[] {
  switch (verification.state) {
    case 'ok':
      return [];
    case 'not-found':
      return [`checkpoint ${verification.checkpointId}: no committed metadata`];
    case 'metadata-corrupt':
      return [`checkpoint ${verification.checkpointId}: metadata corrupt (${verification.reason})`];
    case 'damaged':
      return verification.chunks
        .filter((chunk) => chunk.state !== 'ok')
        .map((chunk) => {
          const h = chunk.handle;
          const what = `chunk ${h.chunkId} (${h.name}, ${h.size} B, written by checkpoint ${h.checkpointId})`;
          return `checkpoint ${verification.checkpointId}: ${what} ${chunk.state === 'missing' ? 'missing' : `corrupt (${chunk.reason})`}`;
        });
    default: {
      const unreachable: never = verification;
      return unreachable;
    }
  }
}
