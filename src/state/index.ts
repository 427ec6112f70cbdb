// Public pieces of the state module: re-exports only (key-groups and storage are exported by the lead).

export { crc32 } from './crc32.js';
export type { HeapKeyedStateBackendOptions, KeyedStateRestoreSummary } from './heap-keyed-state-backend.js';
export { HeapKeyedStateBackend } from './heap-keyed-state-backend.js';
export type {
  KeyedStateSnapshotMetadata,
  SerializedKeyedState,
  SnapshotMode,
} from './heap-keyed-state-snapshot.js';
export { HeapKeyedStateSnapshot } from './heap-keyed-state-snapshot.js';
export type { CopyOnWriteCounters } from './heap-state-core.js';
export { type ChainDecision, DEFAULT_FULL_EVERY, IncrementalChain } from './incremental-chain.js';
export type { ChunkKind, KeyGroupChunk } from './key-group-chunk.js';
export type { KeyedStateBackend, KeyedStateBackendSnapshot } from './keyed-state-backend.js';
export type { LmdbKeyedStateBackendOptions } from './lmdb-keyed-state-backend.js';
export { LmdbKeyedStateBackend } from './lmdb-keyed-state-backend.js';
export type { OperatorListState, OperatorStateSnapshot } from './operator-state.js';
export { OperatorStateBackend } from './operator-state.js';
export type { OperatorStateDistributionMode } from './redistribute-operator-state.js';
export { redistributeOperatorState } from './redistribute-operator-state.js';
export type { StateKind } from './state-entry.js';
