/**
 * Two-input `connect(...).process({ processElement1, processElement2 })`. When both inputs are
 * keyed, the function runs with a keyed context and both sides share that key's state.
 */

import type { CoProcessFunction, KeySelector, RuntimeContext } from '../../api/functions.js';
import type { KeyedBackend } from './keyed-backend.js';
import { keyedContext } from './keyed-operators.js';
import {
  AbstractStreamOperator,
  type OperatorSnapshot,
  type Output,
  userCodeError,
} from './stream-operator.js';

export class CoProcessOperator extends AbstractStreamOperator {
  readonly #fnCtx: RuntimeContext;
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    readonly fn: CoProcessFunction<unknown, unknown, unknown, RuntimeContext>,
    readonly keyed:
      | { backend: KeyedBackend; selectors: readonly [KeySelector<any, any>, KeySelector<any, any>] }
      | undefined,
  ) {
    super(nodeId, name, uid, ctx, out);
    this.#fnCtx = keyed ? keyedContext(ctx, keyed.backend) : ctx;
  }

  processElement(value: unknown, inputIndex: 0 | 1): void {
    this.recordsIn++;
    try {
      if (this.keyed) this.keyed.backend.setCurrentKey(this.keyed.selectors[inputIndex](value));
      if (inputIndex === 0) this.fn.processElement1(value, this.#fnCtx, this.out);
      else this.fn.processElement2(value, this.#fnCtx, this.out);
    } catch (e) {
      throw userCodeError(this.name, e);
    }
  }

  override snapshotState(checkpointId: number): OperatorSnapshot {
    return { operatorState: [], keyedState: this.keyed?.backend.snapshot(checkpointId) };
  }
  override notifyCheckpointComplete(checkpointId: number): void {
    this.keyed?.backend.notifyCheckpointComplete?.(checkpointId);
  }
  override close(): void {
    this.keyed?.backend.dispose();
  }
}
