/**
 * `OutputTag`: names a side output of an operator, e.g. the late records of a window
 * (`window(...).sideOutputLateData(tag)`), read back with `stream.getSideOutput(tag)`.
 * Tags are matched by `id`, so the same id in every thread names the same output.
 */

import { InvalidOptionError } from '../errors.js';
import { show } from './graph-builder.js';

export class OutputTag<T> {
  /** Phantom field: carries the element type (never set). */
  declare readonly __type?: T;
  constructor(readonly id: string) {
    if (typeof id !== 'string' || id.trim() === '') {
      throw new InvalidOptionError('OutputTag.id', `must be a non-empty string, got ${show(id)}`);
    }
  }
}
