export { ByteBudget } from './byte-budget.js';
export type {
  CheckpointMetadata,
  JobInfo,
  OperatorInfo,
  OperatorSubtaskState,
} from './checkpoint-metadata.js';
export { referencedChunks } from './checkpoint-metadata.js';
export {
  type CheckpointListing,
  CheckpointStorage,
  type CheckpointStorageOptions,
  type CleanupResult,
  type CommitOutcome,
  type DiscardOutcome,
} from './checkpoint-storage.js';
export type { CheckpointVerification, ChunkVerification } from './checkpoint-verification.js';
export { describeProblems } from './checkpoint-verification.js';
export type { ChunkHandle, ChunkInput, ChunkOwner } from './chunk-handle.js';
export { type CheckpointDescription, describeCheckpoint } from './describe-checkpoint.js';
export { type RestoreSelection, type SkippedCheckpoint, selectRestorable } from './select-restorable.js';
export { STORAGE_FORMAT_VERSION } from './storage-layout.js';
