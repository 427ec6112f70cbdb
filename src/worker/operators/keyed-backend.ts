/**
 * What keyed operators need from a keyed state backend. The heap and lmdb backends (src/state)
 * are adapted to this in `create-keyed-backend.ts`, so operators don't depend on a backend.
 */

import type { KeyedStateStore } from '../../api/functions.js';
import type { KeyedStateSnapshot } from './stream-operator.js';

export interface KeyedBackend {
  /**
   * Scopes every state handle to `key`; computes its key group once, unless `knownKeyGroup` (the
   * group the producer's hash partitioner computed for this record, ≥ 0) spares the hash.
   */
  setCurrentKey(key: unknown, knownKeyGroup?: number): void;
  readonly currentKey: unknown;
  /** Handles scoped to the current key. */
  readonly store: KeyedStateStore;
  /**
   * Every key that has an entry in state `stateName` (unexpired), in no particular order. Used by
   * operators that must rebuild an in-memory index from state on restore (timers, windows).
   * Callers must not change state while iterating.
   */
  keys(stateName: string): Iterable<unknown>;
  /** Synchronous part of a snapshot: O(1) or O(changed keys). */
  snapshot(checkpointId: number): KeyedStateSnapshot;
  notifyCheckpointComplete?(checkpointId: number): void;
  dispose(): void;
}
