/** Wraps a {@link SourceReader} as the head operator of a source task. */

import type { RuntimeContext } from '../../api/functions.js';
import type { PollResult, SourceReader } from '../../api/source.js';
import {
  AbstractStreamOperator,
  type OperatorSnapshot,
  type Output,
  userCodeError,
} from './stream-operator.js';

export class SourceOperator extends AbstractStreamOperator {
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    readonly reader: SourceReader<unknown>,
  ) {
    super(nodeId, name, uid, ctx, out);
  }
  processElement(): void {
    throw new Error(`source ${this.name} has no input`);
  }
  /** Emits up to `max` records through the chain. */
  poll(max: number): PollResult {
    try {
      return this.reader.poll(this.out, max);
    } catch (e) {
      throw userCodeError(this.name, e);
    }
  }
  /** Positions, taken in the same synchronous step in which the task emits the barrier. */
  override snapshotState(checkpointId: number): OperatorSnapshot {
    return { operatorState: this.reader.snapshotState(checkpointId), keyedState: undefined };
  }
  override counters(): Readonly<Record<string, number>> | undefined {
    return this.reader.metrics?.();
  }
  override close(): void {
    this.reader.close?.();
  }
}
