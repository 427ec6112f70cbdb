/**
 * One stored keyed-state value: the state of one key in one named state.
 */

/** The kinds of keyed state; stored in snapshots so a restored table knows how to decode values. */
export type StateKind = 'value' | 'list' | 'map' | 'reducing' | 'aggregating';

export const STATE_KINDS: readonly StateKind[] = ['value', 'list', 'map', 'reducing', 'aggregating'];

export interface StateEntry {
  /** The user key (record key), kept for serialization; its internal key is the map key. */
  readonly key: unknown;
  /**
   * The value, in the kind's in-memory form (a `MapStateValue` for map state, an array for list
   * state, the user's value otherwise).
   */
  value: unknown;
  /**
   * The write epoch in which this entry was last touched (written, or exposed mutably to user
   * code). Invariant: the entry has not changed since the end of epoch `version`, except through
   * a touch in the current epoch, and a touch first preserves the old value for every live
   * snapshot whose version is >= `version`. See `heap-state-core.ts`.
   */
  version: number;
  /** Absolute expiry time on the backend's clock; `Infinity` when the state has no TTL. */
  expiresAt: number;
}
