/**
 * The `ctx` an async function (`mapAsync`) gets: one small object per record, because the request
 * outlives the record (the task goes on with others). The runtime fields are read through the
 * operator's shared context, so creating one costs two or three field stores (a per-record
 * `{ ...ctx }` spread with `Object.freeze` used to cost more than the rest of the operator).
 */

import type { AsyncContext, AsyncKeyedContext, RuntimeContext } from '../../api/functions.js';
import { StateAccessError } from '../../errors.js';

/** `ctx` of an async function: the runtime context and the record's timestamp. */
export class RecordAsyncContext implements AsyncContext {
  constructor(
    protected readonly base: RuntimeContext,
    readonly timestamp: number | undefined,
  ) {}
  get subtaskIndex(): number {
    return this.base.subtaskIndex;
  }
  get parallelism(): number {
    return this.base.parallelism;
  }
  get attempt(): number {
    return this.base.attempt;
  }
  get operatorName(): string {
    return this.base.operatorName;
  }
}

/**
 * `ctx` of a keyed async function: also the record's key, fixed for the request's lifetime.
 * Keyed state and timers are refused (see `AsyncKeyedContext` in api/functions.ts).
 */
export class KeyedAsyncContext extends RecordAsyncContext implements AsyncKeyedContext {
  constructor(
    base: RuntimeContext,
    readonly operator: string,
    readonly key: unknown,
    timestamp: number | undefined,
  ) {
    super(base, timestamp);
  }
  get state(): never {
    throw noStateInAsync(this.operator, 'keyed state (ctx.state)');
  }
  get timers(): never {
    throw noStateInAsync(this.operator, 'timers (ctx.timers)');
  }
}

function noStateInAsync(operator: string, what: string): StateAccessError {
  return new StateAccessError(
    `${operator}: ${what} cannot be used in an async function: while a request is in flight the task ` +
      'processes other records and keys, so state would belong to the wrong key. Read state in a keyed ' +
      'process() before mapAsync and pass it in the record; update state in a keyed process() after it',
  );
}
