/** ValueState handle (heap and lmdb backends alike): one value per key. Stateless apart from its table; cached per name. */

import type { ValueState } from '../../api/functions.js';
import { isMutable } from '../copy-value.js';
import type { KeyedStateCore } from '../keyed-state-core.js';
import type { StateTable } from '../state-table.js';

export class ValueStateHandle<T> implements ValueState<T> {
  readonly kind = 'value' as const;
  readonly #core: KeyedStateCore;
  readonly #table: StateTable;

  constructor(core: KeyedStateCore, table: StateTable) {
    this.#core = core;
    this.#table = table;
  }

  /** Cost: one lookup; an object value is touched (copied for live snapshots once per key and epoch). */
  value(): T | undefined {
    const e = this.#core.find(this.#table);
    if (e === undefined) return undefined;
    if (isMutable(e.value)) this.#core.touchForMutation(this.#table, e);
    return e.value as T;
  }

  /** `update(undefined)` clears, like Flink's `update(null)`. */
  update(value: T): void {
    if (value === undefined) {
      this.clear();
      return;
    }
    const core = this.#core;
    const e = core.find(this.#table);
    if (e === undefined) {
      core.insert(this.#table, value);
      return;
    }
    core.touchForOverwrite(this.#table, e);
    e.value = value;
    e.expiresAt = core.expiresAt(this.#table);
  }

  clear(): void {
    const e = this.#core.find(this.#table);
    if (e !== undefined) this.#core.remove(this.#table, e);
  }
}
