/**
 * ReducingState handle (heap and lmdb backends alike). `add` folds with the reduce function, which may mutate and return
 * its accumulator, so `add` is an in-place touch (a copy while a snapshot is live, once per key
 * and epoch, only when the value is an object).
 */

import type { ReduceFunction, ReducingState } from '../../api/functions.js';
import { synchronousResult } from '../../worker/operators/synchronous-result.js';
import { isMutable } from '../copy-value.js';
import type { KeyedStateCore } from '../keyed-state-core.js';
import type { StateTable } from '../state-table.js';

export class ReducingStateHandle<T> implements ReducingState<T> {
  readonly kind = 'reducing' as const;
  readonly #core: KeyedStateCore;
  readonly #table: StateTable;
  readonly #reduce: ReduceFunction<T>;

  constructor(core: KeyedStateCore, table: StateTable, reduce: ReduceFunction<T>) {
    this.#core = core;
    this.#table = table;
    this.#reduce = reduce;
  }

  add(value: T): void {
    const core = this.#core;
    const e = core.find(this.#table);
    if (e === undefined) {
      core.insert(this.#table, value);
      return;
    }
    if (isMutable(e.value)) core.touchForMutation(this.#table, e);
    else core.touchForOverwrite(this.#table, e);
    e.value = synchronousResult(
      this.#reduce(e.value as T, value),
      undefined,
      `reduce function of reducing state "${this.#table.name}"`,
    );
    e.expiresAt = core.expiresAt(this.#table);
  }

  get(): T | undefined {
    const e = this.#core.find(this.#table);
    if (e === undefined) return undefined;
    if (isMutable(e.value)) this.#core.touchForMutation(this.#table, e);
    return e.value as T;
  }

  clear(): void {
    const e = this.#core.find(this.#table);
    if (e !== undefined) this.#core.remove(this.#table, e);
  }
}
