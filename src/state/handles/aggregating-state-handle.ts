/**
 * AggregatingState handle (heap and lmdb backends alike). Stores the accumulator. `add` and `get` are in-place touches
 * when the accumulator is an object (`add` may mutate it; `getResult` may return it).
 */

import type { AggregateFunction, AggregatingState } from '../../api/functions.js';
import { synchronousResult } from '../../worker/operators/synchronous-result.js';
import { isMutable } from '../copy-value.js';
import type { KeyedStateCore } from '../keyed-state-core.js';
import type { StateTable } from '../state-table.js';

export class AggregatingStateHandle<IN, ACC, OUT> implements AggregatingState<IN, OUT> {
  readonly kind = 'aggregating' as const;
  readonly #core: KeyedStateCore;
  readonly #table: StateTable;
  readonly #fn: AggregateFunction<IN, ACC, OUT>;

  constructor(core: KeyedStateCore, table: StateTable, fn: AggregateFunction<IN, ACC, OUT>) {
    this.#core = core;
    this.#table = table;
    this.#fn = fn;
  }

  add(value: IN): void {
    const core = this.#core;
    const e = core.find(this.#table);
    if (e === undefined) {
      const acc = this.#checked(this.#fn.createAccumulator(), 'createAccumulator');
      core.insert(this.#table, this.#checked(this.#fn.add(value, acc), 'add'));
      return;
    }
    if (isMutable(e.value)) core.touchForMutation(this.#table, e);
    else core.touchForOverwrite(this.#table, e);
    e.value = this.#checked(this.#fn.add(value, e.value as ACC), 'add');
    e.expiresAt = core.expiresAt(this.#table);
  }

  get(): OUT | undefined {
    const e = this.#core.find(this.#table);
    if (e === undefined) return undefined;
    if (isMutable(e.value)) this.#core.touchForMutation(this.#table, e);
    return this.#checked(this.#fn.getResult(e.value as ACC), 'getResult');
  }

  /** Rejects a promise returned by the aggregate function (the task names the operator). */
  #checked<R>(result: R, method: string): R {
    return synchronousResult(
      result,
      undefined,
      `aggregate function ${method} of aggregating state "${this.#table.name}"`,
    );
  }

  clear(): void {
    const e = this.#core.find(this.#table);
    if (e !== undefined) this.#core.remove(this.#table, e);
  }
}
