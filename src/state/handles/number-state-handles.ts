/**
 * Handles of keyed state declared `{ type: 'number' }` (value and reducing state). The semantics
 * are those of the undeclared handles holding numbers, plus a check: writing anything but a
 * number throws {@link StateAccessError} naming the state, and changes nothing.
 *
 * - Heap backend: the values live in number slots (`heap/number-slots.ts`): no entry object per
 *   key, and a full snapshot is written from contiguous arrays.
 * - lmdb backend (no slot layout): the undeclared handles with the check.
 */

import type { ReduceFunction, ReducingState, ValueState } from '../../api/functions.js';
import { StateAccessError } from '../../errors.js';
import { synchronousResult } from '../../worker/operators/synchronous-result.js';
import type { NumberSlotTable } from '../heap/number-slots.js';
import type { KeyedStateCore } from '../keyed-state-core.js';
import type { StateTable } from '../state-table.js';
import { ReducingStateHandle } from './reducing-state-handle.js';
import { ValueStateHandle } from './value-state-handle.js';

/** What the slot handles need from the heap core (see `heap-state-core.ts`). */
export interface NumberSlotCore extends KeyedStateCore {
  readonly groupIndex: number;
  numberSlots(table: StateTable): NumberSlotTable;
  findSlot(table: StateTable, slots: NumberSlotTable): number;
  writeSlot(table: StateTable, slots: NumberSlotTable, s: number, value: number): void;
  insertSlot(table: StateTable, slots: NumberSlotTable, value: number): void;
  removeSlot(table: StateTable, slots: NumberSlotTable, g: number, s: number): void;
}

export function hasNumberSlots(core: KeyedStateCore): core is NumberSlotCore {
  return typeof (core as Partial<NumberSlotCore>).numberSlots === 'function';
}

/** The typed error for a non-number written to a number state. */
export function notANumber(table: StateTable, what: string, value: unknown): StateAccessError {
  return new StateAccessError(
    `${table.kind} state '${table.name}' is declared { type: 'number' }; ${what} got ${describe(value)}`,
  );
}

/**
 * The typed error for a stored non-number read through a number state's handle (lmdb: values
 * restored from a checkpoint written without the declaration are found when read; the heap
 * backend finds them all at the declaration, when it moves them into slots).
 */
export function storedNotANumber(table: StateTable, value: unknown): StateAccessError {
  return new StateAccessError(
    `${table.kind} state '${table.name}' is declared { type: 'number' } but holds ${describe(value)} for the current key (restored from a checkpoint written without the declaration?)`,
  );
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** ValueState of numbers in number slots (heap backend). */
export class SlotValueStateHandle implements ValueState<number> {
  readonly kind = 'value' as const;
  readonly #core: NumberSlotCore;
  readonly #table: StateTable;
  readonly #slots: NumberSlotTable;

  constructor(core: NumberSlotCore, table: StateTable) {
    this.#core = core;
    this.#table = table;
    this.#slots = core.numberSlots(table);
  }

  value(): number | undefined {
    const core = this.#core;
    const s = core.findSlot(this.#table, this.#slots);
    return s < 0 ? undefined : this.#slots.groups[core.groupIndex]!.values[s];
  }

  /** `update(undefined)` clears. */
  update(value: number): void {
    if (typeof value !== 'number') {
      if (value === undefined) {
        this.clear();
        return;
      }
      throw notANumber(this.#table, 'update', value);
    }
    const core = this.#core;
    const s = core.findSlot(this.#table, this.#slots);
    if (s < 0) core.insertSlot(this.#table, this.#slots, value);
    else core.writeSlot(this.#table, this.#slots, s, value);
  }

  clear(): void {
    const core = this.#core;
    const s = core.findSlot(this.#table, this.#slots);
    if (s >= 0) core.removeSlot(this.#table, this.#slots, core.groupIndex, s);
  }
}

/** ReducingState of numbers in number slots (heap backend). */
export class SlotReducingStateHandle implements ReducingState<number> {
  readonly kind = 'reducing' as const;
  readonly #core: NumberSlotCore;
  readonly #table: StateTable;
  readonly #slots: NumberSlotTable;
  readonly #reduce: ReduceFunction<number>;

  constructor(core: NumberSlotCore, table: StateTable, reduce: ReduceFunction<number>) {
    this.#core = core;
    this.#table = table;
    this.#slots = core.numberSlots(table);
    this.#reduce = reduce;
  }

  add(value: number): void {
    if (typeof value !== 'number') throw notANumber(this.#table, 'add', value);
    const core = this.#core;
    const slots = this.#slots;
    const s = core.findSlot(this.#table, slots);
    if (s < 0) {
      core.insertSlot(this.#table, slots, value);
      return;
    }
    const current = slots.groups[core.groupIndex]!.values[s];
    const next = synchronousResult(
      this.#reduce(current, value),
      undefined,
      `reduce function of reducing state "${this.#table.name}"`,
    );
    if (typeof next !== 'number') throw notANumber(this.#table, 'the reduce function', next);
    core.writeSlot(this.#table, slots, s, next);
  }

  get(): number | undefined {
    const core = this.#core;
    const s = core.findSlot(this.#table, this.#slots);
    return s < 0 ? undefined : this.#slots.groups[core.groupIndex]!.values[s];
  }

  clear(): void {
    const core = this.#core;
    const s = core.findSlot(this.#table, this.#slots);
    if (s >= 0) core.removeSlot(this.#table, this.#slots, core.groupIndex, s);
  }
}

/** ValueState of numbers on a backend without slots (lmdb): the value handle with the check. */
export class CheckedNumberValueStateHandle extends ValueStateHandle<number> {
  readonly #table: StateTable;

  constructor(core: KeyedStateCore, table: StateTable) {
    super(core, table);
    this.#table = table;
  }

  /** A stored non-number (restored from a checkpoint written without the declaration) is refused when read. */
  override value(): number | undefined {
    const v = super.value();
    if (v !== undefined && typeof v !== 'number') throw storedNotANumber(this.#table, v);
    return v;
  }

  override update(value: number): void {
    if (typeof value !== 'number' && value !== undefined) throw notANumber(this.#table, 'update', value);
    super.update(value);
  }
}

/** ReducingState of numbers on a backend without slots (lmdb): the reducing handle with the checks. */
export class CheckedNumberReducingStateHandle extends ReducingStateHandle<number> {
  readonly #table: StateTable;

  constructor(core: KeyedStateCore, table: StateTable, reduce: ReduceFunction<number>) {
    // The result is checked before the handle stores it (a thenable is left to the handle's own
    // check, which names an async reduce function).
    super(core, table, (a, b) => {
      if (typeof a !== 'number') throw storedNotANumber(table, a);
      const r = reduce(a, b);
      if (typeof r !== 'number' && typeof (r as { then?: unknown } | null)?.then !== 'function')
        throw notANumber(table, 'the reduce function', r);
      return r;
    });
    this.#table = table;
  }

  override add(value: number): void {
    if (typeof value !== 'number') throw notANumber(this.#table, 'add', value);
    super.add(value);
  }

  override get(): number | undefined {
    const v = super.get();
    if (v !== undefined && typeof v !== 'number') throw storedNotANumber(this.#table, v);
    return v;
  }
}
