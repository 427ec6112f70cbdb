/**
 * The keyed state handles of one backend, by state name (`ctx.state` of keyed functions): asking
 * for a handle per record is one Map lookup, no allocation. Shared by the heap and lmdb backends,
 * which differ only in their {@link KeyedStateCore} (where entries live); the handles, and so the
 * per-type semantics, are the same.
 */

import type {
  AggregateFunction,
  AggregatingState,
  KeyedStateStore,
  ListState,
  MapState,
  ReduceFunction,
  ReducingState,
  StateOptions,
  ValueState,
} from '../../api/functions.js';
import { StateAccessError } from '../../errors.js';
import type { KeyedStateCore } from '../keyed-state-core.js';
import type { StateKind } from '../state-entry.js';
import type { StateTable } from '../state-table.js';
import { AggregatingStateHandle } from './aggregating-state-handle.js';
import { ListStateHandle } from './list-state-handle.js';
import { MapStateHandle } from './map-state-handle.js';
import {
  CheckedNumberReducingStateHandle,
  CheckedNumberValueStateHandle,
  hasNumberSlots,
  SlotReducingStateHandle,
  SlotValueStateHandle,
} from './number-state-handles.js';
import { ReducingStateHandle } from './reducing-state-handle.js';
import { ValueStateHandle } from './value-state-handle.js';

/** Every handle records its kind, so a cached handle can be checked against the kind asked for. */
interface AnyHandle {
  readonly kind: StateKind;
}

export class StateHandles implements KeyedStateStore {
  readonly #handles = new Map<string, AnyHandle>();
  /**
   * The handle the last lookup returned and its name: a function asking for the same state on
   * every record (`ctx.state.value('sum')`) skips the `Map` lookup — a name literal is one
   * interned string, so the check is a pointer comparison. Handles are never removed or
   * replaced, so a cached one stays right.
   */
  #lastName: string | undefined = undefined;
  #last: AnyHandle | undefined = undefined;

  /**
   * @param core where the handles read and write entries
   * @param table the table of a state name (created on first use; throws on a kind mismatch)
   * @param checkUsable called before a new handle is registered (e.g. throws once closed)
   */
  constructor(
    private readonly core: KeyedStateCore,
    private readonly table: (name: string, kind: StateKind) => StateTable,
    private readonly checkUsable: () => void = () => {},
  ) {}

  value<T>(name: string, options?: StateOptions): ValueState<T> {
    const h = this.#lookup(name);
    if (h !== undefined && h.kind === 'value') return h as ValueStateHandle<T>;
    const core = this.core;
    return this.#register(name, 'value', options, (t) => {
      if (options?.type !== 'number') return new ValueStateHandle<T>(core, t);
      const numbers = hasNumberSlots(core)
        ? new SlotValueStateHandle(core, t)
        : new CheckedNumberValueStateHandle(core, t);
      return numbers as unknown as ValueStateHandle<T>;
    });
  }

  list<T>(name: string, options?: StateOptions): ListState<T> {
    const h = this.#lookup(name);
    if (h !== undefined && h.kind === 'list') return h as ListStateHandle<T>;
    return this.#register(name, 'list', options, (t) => new ListStateHandle<T>(this.core, t));
  }

  map<K, V>(name: string, options?: StateOptions): MapState<K, V> {
    const h = this.#lookup(name);
    if (h !== undefined && h.kind === 'map') return h as unknown as MapStateHandle<K, V>;
    return this.#register(name, 'map', options, (t) => new MapStateHandle<K, V>(this.core, t));
  }

  /** The reduce function of the first call for `name` is the one used. */
  reducing<T>(name: string, reduceFn: ReduceFunction<T>, options?: StateOptions): ReducingState<T> {
    const h = this.#lookup(name);
    if (h !== undefined && h.kind === 'reducing') return h as ReducingStateHandle<T>;
    if (typeof reduceFn !== 'function')
      throw new TypeError(`reducing state '${name}' needs a reduce function`);
    const core = this.core;
    return this.#register(name, 'reducing', options, (t) => {
      if (options?.type !== 'number') return new ReducingStateHandle<T>(core, t, reduceFn);
      const fn = reduceFn as unknown as ReduceFunction<number>;
      const numbers = hasNumberSlots(core)
        ? new SlotReducingStateHandle(core, t, fn)
        : new CheckedNumberReducingStateHandle(core, t, fn);
      return numbers as unknown as ReducingStateHandle<T>;
    });
  }

  /** The aggregate function of the first call for `name` is the one used. */
  aggregating<IN, ACC, OUT>(
    name: string,
    aggregateFunction: AggregateFunction<IN, ACC, OUT>,
    options?: StateOptions,
  ): AggregatingState<IN, OUT> {
    const h = this.#lookup(name);
    if (h !== undefined && h.kind === 'aggregating')
      return h as unknown as AggregatingStateHandle<IN, ACC, OUT>;
    const f = aggregateFunction;
    if (
      typeof f?.createAccumulator !== 'function' ||
      typeof f.add !== 'function' ||
      typeof f.getResult !== 'function'
    ) {
      throw new TypeError(`aggregating state '${name}' needs { createAccumulator, add, getResult }`);
    }
    return this.#register(name, 'aggregating', options, (t) => new AggregatingStateHandle(this.core, t, f));
  }

  /** The handle registered under `name`, or undefined. Cost: one string comparison on a repeat. */
  #lookup(name: string): AnyHandle | undefined {
    if (name === this.#lastName) return this.#last;
    const h = this.#handles.get(name);
    if (h !== undefined) {
      this.#lastName = name;
      this.#last = h;
    }
    return h;
  }

  #register<H extends AnyHandle>(
    name: string,
    kind: StateKind,
    options: StateOptions | undefined,
    create: (table: StateTable) => H,
  ): H {
    this.checkUsable();
    if (typeof name !== 'string' || name.length === 0)
      throw new TypeError('state name must be a non-empty string');
    const existing = this.#handles.get(name);
    if (existing !== undefined) {
      throw new StateAccessError(
        `state '${name}' is ${existing.kind} state; it cannot also be used as ${kind} state`,
      );
    }
    const ttlMs = options?.ttlMs;
    if (ttlMs !== undefined && !(typeof ttlMs === 'number' && ttlMs > 0 && Number.isFinite(ttlMs))) {
      throw new RangeError(`ttlMs of state '${name}' must be a positive finite number, got ${ttlMs}`);
    }
    const type = options?.type;
    if (type !== undefined) {
      if (type !== 'number') {
        throw new RangeError(`type of state '${name}' must be 'number' or absent, got ${String(type)}`);
      }
      if (kind !== 'value' && kind !== 'reducing') {
        throw new RangeError(
          `state '${name}': { type: 'number' } is for value and reducing state, not ${kind} state`,
        );
      }
    }
    const table = this.table(name, kind);
    table.ttlMs = ttlMs;
    const h = create(table);
    this.#handles.set(name, h);
    return h;
  }
}
