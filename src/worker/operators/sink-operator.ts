/** Drives a {@link SinkWriter}: writes, two-phase commit at barriers, flush at end of input. */

import type { RuntimeContext } from '../../api/functions.js';
import type { SinkWriter } from '../../api/source.js';
import { NotifiedThrough } from '../sink/notified-through.js';
import {
  AbstractStreamOperator,
  type OperatorSnapshot,
  type Output,
  userCodeError,
} from './stream-operator.js';

const NO_OUTPUT: Output = {
  collect() {
    throw new Error('a sink has no output');
  },
};

export class SinkOperator extends AbstractStreamOperator {
  /** The writer commits in `notifyCheckpointComplete`: which checkpoints it committed. */
  readonly #committed = new NotifiedThrough();
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    readonly writer: SinkWriter<unknown>,
  ) {
    super(nodeId, name, uid, ctx, NO_OUTPUT);
  }
  processElement(value: unknown): void {
    this.recordsIn++;
    try {
      this.writer.write(value);
    } catch (e) {
      throw userCodeError(this.name, e);
    }
  }
  override finish(): void {
    this.writer.finish?.();
  }
  override snapshotState(checkpointId: number): OperatorSnapshot {
    return { operatorState: this.writer.preCommit?.(checkpointId) ?? [], keyedState: undefined };
  }
  override notifyCheckpointComplete(checkpointId: number): void {
    this.writer.notifyCheckpointComplete?.(checkpointId);
    this.#committed.notified(checkpointId);
  }
  /** See {@link StreamOperator.awaitCommitted}: the writer's notification for the id returned. */
  awaitCommitted(checkpointId: number): Promise<boolean> {
    return this.#committed.awaitCommitted(checkpointId);
  }
  override notifyCheckpointAborted(checkpointId: number): void {
    this.writer.notifyCheckpointAborted?.(checkpointId);
  }
  override close(): void {
    this.#committed.close();
    this.writer.close?.();
  }
}
