/**
 * The reduce function behind `KeyedStream.sum(field?)`, with Flink's semantics: without a field
 * the records are numbers and the result is their running sum; with a field the result is the
 * first record of the key with `field` replaced by the running sum of that field over all records
 * of the key (the other fields stay those of the first record).
 *
 * The accumulator is never mutated (a new object per record): the keyed state backend may still
 * hold the previous value in a copy-on-write snapshot.
 */

import type { ReduceFunction } from './functions.js';
import { show } from './graph-builder.js';

/**
 * Builds the reducer. `operatorName` is read lazily, when a record is bad, so that a later
 * `.name(...)` shows up in the error. Non-number operands throw a `TypeError` (a task failure).
 */
export function sumReducer(
  field: string | number | undefined,
  operatorName: () => string,
): ReduceFunction<any> {
  if (field === undefined) {
    return (acc: unknown, value: unknown): number => {
      if (typeof acc !== 'number' || typeof value !== 'number') {
        throw new TypeError(
          `sum() of operator "${operatorName()}": records must be numbers without a field argument, ` +
            `got ${show(typeof acc !== 'number' ? acc : value)}`,
        );
      }
      return acc + value;
    };
  }
  return (acc: any, value: any): unknown => {
    const a = acc?.[field];
    const b = value?.[field];
    if (typeof a !== 'number' || typeof b !== 'number') {
      throw new TypeError(
        `sum(${JSON.stringify(field)}) of operator "${operatorName()}": field ${JSON.stringify(field)} ` +
          `must be a number, got ${show(typeof a !== 'number' ? a : b)}`,
      );
    }
    if (Array.isArray(acc)) {
      const out = acc.slice();
      out[field as number] = a + b;
      return out;
    }
    return { ...acc, [field]: a + b };
  };
}
