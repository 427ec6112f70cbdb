/**
 * Operators on a keyed stream: `process` and `reduce`/`sum`. The key is re-extracted from each
 * record on the consumer side (as in Flink), which sets the backend's current key; state
 * handles then read and write that key's state.
 */

import type {
  KeyedContext,
  KeyedProcessFunction,
  KeySelector,
  ReduceFunction,
  RuntimeContext,
  ValueState,
} from '../../api/functions.js';
import type { KeyedBackend } from './keyed-backend.js';
import {
  AbstractStreamOperator,
  type OperatorSnapshot,
  type Output,
  userCodeError,
} from './stream-operator.js';

/** The `ctx` of keyed user functions: the runtime context plus the current key and its state. */
export function keyedContext(base: RuntimeContext, backend: KeyedBackend): KeyedContext {
  return {
    get subtaskIndex() {
      return base.subtaskIndex;
    },
    get parallelism() {
      return base.parallelism;
    },
    get attempt() {
      return base.attempt;
    },
    get operatorName() {
      return base.operatorName;
    },
    get key() {
      return backend.currentKey;
    },
    state: backend.store,
  };
}

abstract class AbstractKeyedOperator extends AbstractStreamOperator {
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    protected readonly backend: KeyedBackend,
  ) {
    super(nodeId, name, uid, ctx, out);
  }
  override snapshotState(checkpointId: number): OperatorSnapshot {
    return { operatorState: [], keyedState: this.backend.snapshot(checkpointId) };
  }
  override notifyCheckpointComplete(checkpointId: number): void {
    this.backend.notifyCheckpointComplete?.(checkpointId);
  }
  override close(): void {
    this.backend.dispose();
  }
  protected setKey(selector: KeySelector<unknown, unknown>, value: unknown): void {
    let key: unknown;
    try {
      key = selector(value);
    } catch (e) {
      throw userCodeError(this.name, e);
    }
    this.backend.setCurrentKey(key);
  }
}

export class KeyedProcessOperator extends AbstractKeyedOperator {
  readonly #keyedCtx: KeyedContext;
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    backend: KeyedBackend,
    readonly fn: KeyedProcessFunction<unknown, unknown, unknown>,
    readonly keySelector: KeySelector<unknown, unknown>,
  ) {
    super(nodeId, name, uid, ctx, out, backend);
    this.#keyedCtx = keyedContext(ctx, backend);
  }
  processElement(value: unknown): void {
    this.recordsIn++;
    this.setKey(this.keySelector, value);
    try {
      this.fn(value, this.#keyedCtx, this.out);
    } catch (e) {
      throw userCodeError(this.name, e);
    }
  }
}

/** Running reduce per key: emits the new accumulated value for every record. */
export class KeyedReduceOperator extends AbstractKeyedOperator {
  readonly #state: ValueState<unknown>;
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    backend: KeyedBackend,
    readonly fn: ReduceFunction<unknown>,
    readonly keySelector: KeySelector<unknown, unknown>,
  ) {
    super(nodeId, name, uid, ctx, out, backend);
    this.#state = backend.store.value('_reduce');
  }
  processElement(value: unknown): void {
    this.recordsIn++;
    this.setKey(this.keySelector, value);
    const acc = this.#state.value();
    let next: unknown;
    try {
      next = acc === undefined ? value : this.fn(acc, value);
    } catch (e) {
      throw userCodeError(this.name, e);
    }
    this.#state.update(next);
    this.out.collect(next);
  }
}
