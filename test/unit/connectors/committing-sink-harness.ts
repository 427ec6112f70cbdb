/**
 * Drives a committing sink (`sinks.custom`, `sinks.log`, ...) through the real
 * `CommittingSinkOperator`, the way a task does, with awaitable steps: pre-commit (resolves to the
 * operator state the checkpoint stores), checkpoint completion (resolves once every commit it
 * made eligible succeeded), end of input, close.
 */
import type { CommittingSink } from '../../../src/api/committing-sink.js';
import type { CheckpointingMode, SinkContext } from '../../../src/api/source.js';
import type { CommittablesStateEntry } from '../../../src/worker/sink/committing-sink-operator.js';
import { CommittingSinkOperator } from '../../../src/worker/sink/committing-sink-operator.js';

export interface HarnessContext {
  readonly subtaskIndex?: number;
  readonly parallelism?: number;
  readonly attempt?: number;
  readonly mode?: CheckpointingMode;
  readonly operatorName?: string;
  /** Operator state of a checkpoint, as `preCommit` resolved it (possibly redistributed). */
  readonly restoredState?: readonly unknown[];
  readonly restoredCheckpointId?: number;
}

export class SinkHarness<T> {
  readonly op: CommittingSinkOperator;
  /** Asynchronous failures the operator reported (a task would fail with the first). */
  readonly failures: unknown[] = [];

  constructor(sink: CommittingSink<T, unknown>, c: HarnessContext = {}) {
    const ctx = {
      subtaskIndex: c.subtaskIndex ?? 0,
      parallelism: c.parallelism ?? 1,
      attempt: c.attempt ?? 0,
      operatorName: c.operatorName ?? 'out',
    };
    const sinkCtx: SinkContext = {
      ...ctx,
      checkpointingMode: c.mode ?? 'exactly-once',
      restoredState: c.restoredState,
      restoredCheckpointId:
        c.restoredCheckpointId ??
        (c.restoredState
          ? Math.max(0, ...committablesIn(c.restoredState).map((e) => e.checkpointId))
          : undefined),
      deliver: () => {
        throw new Error('not a collect sink');
      },
    };
    this.op = new CommittingSinkOperator(
      1,
      ctx.operatorName,
      'sink-uid',
      ctx,
      sink as CommittingSink<unknown, unknown>,
      sinkCtx,
    );
    this.op.bindAsyncFailure((e) => this.failures.push(e));
    this.op.open();
  }

  write(value: T): void {
    this.op.processElement(value);
  }

  /** The barrier of `checkpointId`; resolves to the operator state stored in that checkpoint. */
  async preCommit(checkpointId: number): Promise<unknown[]> {
    return [...(await this.op.snapshotState(checkpointId).operatorState)];
  }

  /** Checkpoint `checkpointId` completed; resolves once the commits it allows have succeeded. */
  async complete(checkpointId: number): Promise<void> {
    this.op.notifyCheckpointComplete(checkpointId);
    await this.op.settle();
  }

  finish(): void {
    this.op.finish();
  }

  /** Resolves once nothing committable is left (restored committables included). */
  drain(): Promise<void> {
    return this.op.settle();
  }

  async close(): Promise<void> {
    this.op.close();
    await this.op.whenClosed;
  }
}

/** Every committable an operator state holds, with its checkpoint and writer. */
export function committablesIn(
  state: readonly unknown[],
): { checkpointId: number; writerSubtask: number; committable: unknown }[] {
  return (state as CommittablesStateEntry[]).flatMap((e) =>
    e.committables.map((c) => ({
      checkpointId: c.checkpointId,
      writerSubtask: e.writerSubtask,
      committable: c.committable,
    })),
  );
}
