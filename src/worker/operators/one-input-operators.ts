/**
 * The stateless one-input operators: map, filter, flatMap, process. One file because they are
 * four variations of one three-line idea. Every user call is guarded so that a failure names
 * the operator (try/catch costs nothing on V8's fast path).
 */

import type {
  FilterFunction,
  FlatMapFunction,
  MapFunction,
  ProcessFunction,
  RuntimeContext,
} from '../../api/functions.js';
import { AbstractStreamOperator, type Output, userCodeError } from './stream-operator.js';
import { synchronousResult } from './synchronous-result.js';

export class MapOperator extends AbstractStreamOperator {
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    readonly fn: MapFunction<unknown, unknown>,
  ) {
    super(nodeId, name, uid, ctx, out);
  }
  processElement(value: unknown): void {
    this.recordsIn++;
    let result: unknown;
    try {
      result = synchronousResult(this.fn(value, this.ctx), this.name, 'map function');
    } catch (e) {
      throw userCodeError(this.name, e);
    }
    this.out.collect(result);
  }
}

export class FilterOperator extends AbstractStreamOperator {
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    readonly fn: FilterFunction<unknown>,
  ) {
    super(nodeId, name, uid, ctx, out);
  }
  processElement(value: unknown): void {
    this.recordsIn++;
    let keep: unknown;
    try {
      keep = this.fn(value, this.ctx);
      // A boolean (the norm) cannot be a thenable: the check is only paid for other values.
      if (typeof keep !== 'boolean') synchronousResult(keep, this.name, 'filter function');
    } catch (e) {
      throw userCodeError(this.name, e);
    }
    if (keep) this.out.collect(value);
  }
}

/** flatMap and process share a shape: `(value, ctx, out) => void`. */
export class FlatMapOperator extends AbstractStreamOperator {
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    readonly fn: FlatMapFunction<unknown, unknown> | ProcessFunction<unknown, unknown>,
    /** Named in errors: `flatMap function` or `process function`. */
    readonly functionKind: string,
  ) {
    super(nodeId, name, uid, ctx, out);
  }
  processElement(value: unknown): void {
    this.recordsIn++;
    try {
      // Returns nothing; an async function returns a promise, which is what this catches.
      synchronousResult(this.fn(value, this.ctx, this.out), this.name, this.functionKind);
    } catch (e) {
      throw userCodeError(this.name, e);
    }
  }
}
