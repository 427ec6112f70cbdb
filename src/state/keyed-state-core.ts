/**
 * What the state handles (`*-state-handle.ts`) need from a backend's core: find the current
 * key's entry, announce a change before making it (the touch rules of `heap-state-core.ts`), and
 * insert/remove entries. The heap core keeps entries in JS maps and uses touches for
 * copy-on-write; the lmdb core keeps a write-back cache over LMDB and uses touches to know what
 * to write back. The handles, and so the per-type semantics, are the same for both.
 */

import type { StateEntry } from './state-entry.js';
import type { StateTable } from './state-table.js';

export interface KeyedStateCore {
  /** The current key's unexpired entry in `table`, or undefined. */
  find(table: StateTable): StateEntry | undefined;
  /** Before user code may mutate `e.value` in place (or receives it). */
  touchForMutation(table: StateTable, e: StateEntry): void;
  /** Before `e.value` is replaced. */
  touchForOverwrite(table: StateTable, e: StateEntry): void;
  /** Expiry time of an entry written now. */
  expiresAt(table: StateTable): number;
  /** Creates the current key's entry (the caller checked that there is none). */
  insert(table: StateTable, value: unknown): StateEntry;
  /** Removes the current key's entry `e`. */
  remove(table: StateTable, e: StateEntry): void;
}
