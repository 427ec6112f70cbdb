/**
 * MapState handle (heap and lmdb backends alike). One key's map is one entry (a {@link MapStateValue}); the first access per
 * key and epoch that can mutate it or expose a mutable value copies the whole map while a
 * snapshot is live (O(map size)). `contains`, `isEmpty` and `keys` never copy; `get` copies only
 * when the value it returns is an object. A map that becomes empty is removed.
 */

import type { MapState } from '../../api/functions.js';
import { isMutable } from '../copy-value.js';
import { internalKeyOf } from '../internal-key.js';
import type { KeyedStateCore } from '../keyed-state-core.js';
import type { StateTable } from '../state-table.js';
import { MapStateValue } from './map-state-value.js';

export class MapStateHandle<K, V> implements MapState<K, V> {
  readonly kind = 'map' as const;
  readonly #core: KeyedStateCore;
  readonly #table: StateTable;

  constructor(core: KeyedStateCore, table: StateTable) {
    this.#core = core;
    this.#table = table;
  }

  get(key: K): V | undefined {
    const e = this.#core.find(this.#table);
    if (e === undefined) return undefined;
    const v = (e.value as MapStateValue).map.get(internalKeyOf(key));
    if (isMutable(v)) this.#core.touchForMutation(this.#table, e);
    return v as V | undefined;
  }

  put(key: K, value: V): void {
    const core = this.#core;
    const e = core.find(this.#table);
    if (e === undefined) {
      const m = new MapStateValue();
      m.put(key, value);
      core.insert(this.#table, m);
      return;
    }
    core.touchForMutation(this.#table, e);
    (e.value as MapStateValue).put(key, value);
    e.expiresAt = core.expiresAt(this.#table);
  }

  putAll(entries: Iterable<readonly [K, V]>): void {
    for (const [k, v] of entries) this.put(k, v);
  }

  remove(key: K): void {
    const core = this.#core;
    const e = core.find(this.#table);
    if (e === undefined) return;
    const m = e.value as MapStateValue;
    if (!m.map.has(internalKeyOf(key))) return;
    if (m.map.size === 1) {
      core.remove(this.#table, e);
      return;
    }
    core.touchForMutation(this.#table, e);
    m.remove(key);
  }

  contains(key: K): boolean {
    const e = this.#core.find(this.#table);
    return e !== undefined && (e.value as MapStateValue).map.has(internalKeyOf(key));
  }

  /** Resolved now (not when iteration starts): the current key may change before then. */
  entries(): IterableIterator<[K, V]> {
    const m = this.#touched();
    return m === undefined ? emptyIterator() : (mapEntries(m) as IterableIterator<[K, V]>);
  }

  keys(): IterableIterator<K> {
    const e = this.#core.find(this.#table);
    return e === undefined ? emptyIterator() : (mapKeys(e.value as MapStateValue) as IterableIterator<K>);
  }

  values(): IterableIterator<V> {
    const m = this.#touched();
    return m === undefined ? emptyIterator() : (m.map.values() as IterableIterator<V>);
  }

  isEmpty(): boolean {
    return this.#core.find(this.#table) === undefined;
  }

  clear(): void {
    const e = this.#core.find(this.#table);
    if (e !== undefined) this.#core.remove(this.#table, e);
  }

  /** The current key's map, touched for mutation. */
  #touched(): MapStateValue | undefined {
    const e = this.#core.find(this.#table);
    if (e === undefined) return undefined;
    this.#core.touchForMutation(this.#table, e);
    return e.value as MapStateValue;
  }
}

function* emptyIterator<T>(): IterableIterator<T> {}

function* mapEntries(m: MapStateValue): IterableIterator<[unknown, unknown]> {
  for (const [ik, v] of m.map) yield [m.userKey(ik), v];
}

function* mapKeys(m: MapStateValue): IterableIterator<unknown> {
  for (const ik of m.map.keys()) yield m.userKey(ik);
}
