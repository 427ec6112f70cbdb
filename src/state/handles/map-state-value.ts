/**
 * The in-memory form of one key's MapState: user map keys are stored under their internal key
 * (see `internal-key.ts`), so composite map keys compare by value.
 */

import { copyValue } from '../copy-value.js';
import { internalKeyOf, isEscapedKey } from '../internal-key.js';

export class MapStateValue {
  /** Internal map key → value. */
  readonly map: Map<unknown, unknown>;
  /**
   * Internal key → user key, only for keys whose internal key is not the key itself (strings
   * starting with U+0000 and composite keys). Invariant: its key set is the escaped subset of
   * `map`'s keys.
   */
  originals: Map<string, unknown> | undefined;

  constructor(map = new Map<unknown, unknown>(), originals?: Map<string, unknown>) {
    this.map = map;
    this.originals = originals;
  }

  put(key: unknown, value: unknown): void {
    const ik = internalKeyOf(key);
    this.map.set(ik, value);
    if (isEscapedKey(ik)) (this.originals ??= new Map()).set(ik, key);
  }

  /** Returns true when the key was present. */
  remove(key: unknown): boolean {
    const ik = internalKeyOf(key);
    if (!this.map.delete(ik)) return false;
    if (isEscapedKey(ik)) this.originals?.delete(ik);
    return true;
  }

  userKey(internalKey: unknown): unknown {
    return isEscapedKey(internalKey) ? this.originals?.get(internalKey) : internalKey;
  }

  /** Deep copy. Cost: O(entries + size of the values). */
  copy(): MapStateValue {
    const m = new Map<unknown, unknown>();
    for (const [k, v] of this.map) m.set(k, copyValue(v));
    return new MapStateValue(m, this.originals ? new Map(this.originals) : undefined);
  }

  /** Wire form: a flat `[key, value, key, value, ...]` array of user keys and values. */
  toWire(): unknown[] {
    const out: unknown[] = new Array(this.map.size * 2);
    let i = 0;
    for (const [k, v] of this.map) {
      out[i++] = this.userKey(k);
      out[i++] = v;
    }
    return out;
  }

  static fromWire(flat: readonly unknown[]): MapStateValue {
    const m = new MapStateValue();
    for (let i = 0; i + 1 < flat.length; i += 2) m.put(flat[i], flat[i + 1]);
    return m;
  }
}
