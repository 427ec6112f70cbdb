/**
 * Wraps a {@link SourceReader} as the head operator of a source task, and drives the source's
 * dead-letter sink (if it names one) in the same task: the sink's writer is created with the
 * reader, pre-commits in the same synchronous snapshot step as the source's positions, and is
 * notified, finished and closed with the source. Its snapshot entries are stored among the
 * source's operator state, wrapped as {@link DeadLetterStateEntry}, and split off again on
 * restore: whichever subtask gets such an entry after redistribution commits it.
 */

import type { RuntimeContext } from '../../api/functions.js';
import type { PollResult, SinkContext, SinkWriter, Source, SourceReader } from '../../api/source.js';
import {
  type DeadLetter,
  type DeadLetterSourceContext,
  type DeadLetterStateEntry,
  deadLetterSinkOf,
  isDeadLetterStateEntry,
} from '../../connectors/dead-letter.js';
import {
  AbstractStreamOperator,
  type OperatorSnapshot,
  type Output,
  userCodeError,
} from './stream-operator.js';

export class SourceOperator extends AbstractStreamOperator {
  readonly reader: SourceReader<unknown>;
  /** The dead-letter sink's writer; null when the source has none. */
  readonly #deadLetters: SinkWriter<DeadLetter> | null;
  readonly #deadLetterName: string;

  /**
   * @param restoredState the operator's restored entries (source and dead-letter ones mixed),
   *   `undefined` on a fresh start
   * @param sinkContext builds the dead-letter sink's context from its share of restored entries
   */
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    source: Source<unknown>,
    restoredState: readonly unknown[] | undefined,
    sinkContext: (restoredState: readonly unknown[] | undefined) => SinkContext,
  ) {
    super(nodeId, name, uid, ctx, out);
    const own = restoredState?.filter((e) => !isDeadLetterStateEntry(e));
    const deadLetterState = restoredState
      ?.filter(isDeadLetterStateEntry)
      .map((e) => (e as DeadLetterStateEntry).deadLetterSinkState);
    const sink = deadLetterSinkOf(source);
    this.#deadLetterName = `${name} dead letters${sink ? ` (${sink.name})` : ''}`;
    if (!sink && deadLetterState && deadLetterState.length > 0) {
      // Pending dead letters of the restored checkpoint would be lost without their sink.
      throw new Error(
        `source ${name}: the restored checkpoint holds ${deadLetterState.length} dead-letter sink ` +
          'entries, but the source no longer names a deadLetter sink',
      );
    }
    let writer: SinkWriter<DeadLetter> | null = null;
    try {
      writer = sink
        ? sink.createWriter({ ...sinkContext(deadLetterState), operatorName: this.#deadLetterName })
        : null;
    } catch (e) {
      throw userCodeError(this.#deadLetterName, e);
    }
    this.#deadLetters = writer;
    const readerCtx: DeadLetterSourceContext = {
      ...ctx,
      restoredState: own,
      deadLetters: writer ? { collect: (d) => writer.write(d) } : undefined,
    };
    this.reader = source.createReader(readerCtx);
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
  /**
   * Positions and the dead-letter sink's pre-commit, taken in the same synchronous step in which
   * the task emits the barrier: the dead letters of the records before the barrier are sealed
   * with the positions after them.
   */
  override snapshotState(
    checkpointId: number,
  ): OperatorSnapshot & { readonly operatorState: readonly unknown[] } {
    const entries = [...this.reader.snapshotState(checkpointId)];
    if (this.#deadLetters) {
      let sealed: unknown[];
      try {
        sealed = this.#deadLetters.preCommit?.(checkpointId) ?? [];
      } catch (e) {
        throw userCodeError(this.#deadLetterName, e);
      }
      for (const s of sealed) entries.push({ deadLetterSinkState: s } satisfies DeadLetterStateEntry);
    }
    return { operatorState: entries, keyedState: undefined };
  }
  override finish(): void {
    this.#deadLetters?.finish?.();
  }
  override notifyCheckpointComplete(checkpointId: number): void {
    this.#deadLetters?.notifyCheckpointComplete?.(checkpointId);
  }
  override notifyCheckpointAborted(checkpointId: number): void {
    this.#deadLetters?.notifyCheckpointAborted?.(checkpointId);
  }
  override counters(): Readonly<Record<string, number>> | undefined {
    return this.reader.metrics?.();
  }
  override close(): void {
    try {
      this.reader.close?.();
    } finally {
      this.#deadLetters?.close?.();
    }
  }
}
