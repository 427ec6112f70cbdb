/**
 * ListState handle (heap and lmdb backends alike). The stored form is a JS array. Any access that exposes or appends to the
 * array touches the key: while a snapshot is live, the first such access per key and epoch copies
 * the whole list (O(list length)), as Flink's heap backend does.
 */

import type { ListState } from '../../api/functions.js';
import type { KeyedStateCore } from '../keyed-state-core.js';
import type { StateTable } from '../state-table.js';

export class ListStateHandle<T> implements ListState<T> {
  readonly kind = 'list' as const;
  readonly #core: KeyedStateCore;
  readonly #table: StateTable;

  constructor(core: KeyedStateCore, table: StateTable) {
    this.#core = core;
    this.#table = table;
  }

  /** The stored array (mutations are state changes), or a new empty array when there is none. */
  get(): T[] {
    const e = this.#core.find(this.#table);
    if (e === undefined) return [];
    this.#core.touchForMutation(this.#table, e);
    return e.value as T[];
  }

  [Symbol.iterator](): Iterator<T> {
    return this.get()[Symbol.iterator]();
  }

  add(value: T): void {
    const core = this.#core;
    const e = core.find(this.#table);
    if (e === undefined) {
      core.insert(this.#table, [value]);
      return;
    }
    core.touchForMutation(this.#table, e);
    (e.value as T[]).push(value);
    e.expiresAt = core.expiresAt(this.#table);
  }

  addAll(values: Iterable<T>): void {
    const items = Array.from(values);
    if (items.length === 0) return;
    const core = this.#core;
    const e = core.find(this.#table);
    if (e === undefined) {
      core.insert(this.#table, items);
      return;
    }
    core.touchForMutation(this.#table, e);
    const list = e.value as T[];
    for (const v of items) list.push(v);
    e.expiresAt = core.expiresAt(this.#table);
  }

  /** Replaces the list with a copy of `values`' items; an empty iterable clears. */
  update(values: Iterable<T>): void {
    const items = Array.from(values);
    if (items.length === 0) {
      this.clear();
      return;
    }
    const core = this.#core;
    const e = core.find(this.#table);
    if (e === undefined) {
      core.insert(this.#table, items);
      return;
    }
    core.touchForOverwrite(this.#table, e);
    e.value = items;
    e.expiresAt = core.expiresAt(this.#table);
  }

  clear(): void {
    const e = this.#core.find(this.#table);
    if (e !== undefined) this.#core.remove(this.#table, e);
  }
}
