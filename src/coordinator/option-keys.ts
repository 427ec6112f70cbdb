/**
 * Unknown-key checks for options objects: a misspelt key (`parallelizm: 2`) would otherwise be
 * ignored silently. Each options object has one key table, a `Record<keyof T, true>`, so adding
 * a field to the options type without adding it to its table is a compile error (and a merge
 * of two branches that each add a key touches two adjacent lines, not shared code).
 */

import { UnknownOptionError } from '../errors.js';
// The CLI's "did you mean" (one edit-distance function for flags, commands and options; it lives
// with the CLI, which had it first).
import { closestMatch } from '../util/did-you-mean.js';

/** The keys an options object may have, checked against its type at compile time. */
export type KeyTable<T> = { readonly [K in keyof Required<T>]: true };

/**
 * Throws {@link UnknownOptionError} for the first own key of `value` not in `table`, naming it
 * with its path (`checkpointing.intreval`) and the closest known key. Cost: O(keys × known ×
 * key length) on an error only; a valid object costs one lookup per key.
 */
export function checkKnownKeys<T>(value: object, path: string, table: KeyTable<T>): void {
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(table, key)) continue;
    const known = Object.keys(table);
    throw new UnknownOptionError(path === '' ? key : `${path}.${key}`, closestMatch(key, known), known);
  }
}
