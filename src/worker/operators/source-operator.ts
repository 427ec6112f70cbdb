/**
 * Wraps a {@link SourceReader} as the head operator of a source task, and drives the source's
 * dead-letter sink (if it names one) in the same task: the sink's writer is created with the
 * reader, pre-commits in the same synchronous snapshot step as the source's positions, and is
 * notified, finished and closed with the source. Its snapshot entries are stored among the
 * source's operator state, wrapped as {@link DeadLetterStateEntry}, and split off again on
 * restore: whichever subtask gets such an entry after redistribution commits it.
 */

import { isCommittingSink } from '../../api/committing-sink.js';
import type { RuntimeContext } from '../../api/functions.js';
import type { Logger } from '../../api/logger.js';
import type {
  PollResult,
  Sink,
  SinkContext,
  SinkWriter,
  Source,
  SourceLag,
  SourceReader,
} from '../../api/source.js';
import {
  type DeadLetter,
  type DeadLetterSourceContext,
  type DeadLetterStateEntry,
  deadLetterSinkOf,
  isDeadLetterStateEntry,
} from '../../connectors/dead-letter.js';
import { CommittingSinkOperator } from '../sink/committing-sink-operator.js';
import { NotifiedThrough } from '../sink/notified-through.js';
import {
  AbstractStreamOperator,
  type OperatorSnapshot,
  type Output,
  userCodeError,
} from './stream-operator.js';

/** The dead-letter sink as the source operator drives it: a writer sink, or a committing one. */
interface DeadLetterDriver {
  write(d: DeadLetter): void;
  /** The sink's snapshot entries (a promise for a committing sink's asynchronous pre-commit). */
  snapshot(checkpointId: number): readonly unknown[] | Promise<readonly unknown[]>;
  complete(checkpointId: number): void;
  aborted(checkpointId: number): void;
  finish(): void;
  close(): void;
  /** As {@link StreamOperator.awaitCommitted}, for the dead-letter sink's commits. */
  awaitCommitted(checkpointId: number): Promise<boolean>;
  readonly committing: CommittingSinkOperator | null;
}

function legacyDriver(w: SinkWriter<DeadLetter>): DeadLetterDriver {
  const committed = new NotifiedThrough();
  return {
    write: (d) => w.write(d),
    snapshot: (id) => w.preCommit?.(id) ?? [],
    complete: (id) => {
      w.notifyCheckpointComplete?.(id);
      committed.notified(id);
    },
    aborted: (id) => w.notifyCheckpointAborted?.(id),
    finish: () => w.finish?.(),
    close: () => {
      committed.close();
      w.close?.();
    },
    awaitCommitted: (id) => committed.awaitCommitted(id),
    committing: null,
  };
}

function committingDriver(op: CommittingSinkOperator): DeadLetterDriver {
  return {
    write: (d) => op.processElement(d),
    snapshot: (id) => op.snapshotState(id).operatorState,
    complete: (id) => op.notifyCheckpointComplete(id),
    aborted: (id) => op.notifyCheckpointAborted(id),
    finish: () => op.finish(),
    close: () => op.close(),
    awaitCommitted: (id) => op.awaitCommitted(id),
    committing: op,
  };
}

export class SourceOperator extends AbstractStreamOperator {
  readonly reader: SourceReader<unknown>;
  /** The dead-letter sink; null when the source has none. */
  readonly #deadLetters: DeadLetterDriver | null;
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
    /** The job's logger, for the reader's context. */
    logger?: Logger,
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
    let driver: DeadLetterDriver | null = null;
    try {
      if (sink && isCommittingSink(sink)) {
        const sinkCtx = { ...sinkContext(deadLetterState), operatorName: this.#deadLetterName };
        driver = committingDriver(
          new CommittingSinkOperator(nodeId, this.#deadLetterName, uid, sinkCtx, sink, sinkCtx),
        );
      } else if (sink) {
        driver = legacyDriver(
          (sink as Sink<DeadLetter>).createWriter({
            ...sinkContext(deadLetterState),
            operatorName: this.#deadLetterName,
          }),
        );
      }
    } catch (e) {
      throw userCodeError(this.#deadLetterName, e);
    }
    this.#deadLetters = driver;
    const readerCtx: DeadLetterSourceContext = {
      ...ctx,
      restoredState: own,
      logger,
      deadLetters: driver ? { collect: (d) => driver.write(d) } : undefined,
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
  override snapshotState(checkpointId: number): OperatorSnapshot {
    const entries = [...this.reader.snapshotState(checkpointId)];
    if (!this.#deadLetters) return { operatorState: entries, keyedState: undefined };
    let sealed: readonly unknown[] | Promise<readonly unknown[]>;
    try {
      sealed = this.#deadLetters.snapshot(checkpointId);
    } catch (e) {
      throw userCodeError(this.#deadLetterName, e);
    }
    const withDeadLetters = (states: readonly unknown[]) => [
      ...entries,
      ...states.map((s) => ({ deadLetterSinkState: s }) satisfies DeadLetterStateEntry),
    ];
    return {
      operatorState: Array.isArray(sealed)
        ? withDeadLetters(sealed)
        : Promise.resolve(sealed).then(withDeadLetters),
      keyedState: undefined,
    };
  }
  /** A committing dead-letter sink's asynchronous failures fail this task. */
  bindAsyncFailure(fail: (error: unknown) => void): void {
    this.#deadLetters?.committing?.bindAsyncFailure(fail);
  }
  override open(): void {
    this.#deadLetters?.committing?.open();
  }
  settle(): Promise<void> {
    return this.#deadLetters?.committing?.settle() ?? Promise.resolve();
  }
  /** The dead-letter sink's commits (stop-with-savepoint); `true` without one. */
  awaitCommitted(checkpointId: number): Promise<boolean> {
    return this.#deadLetters?.awaitCommitted(checkpointId) ?? Promise.resolve(true);
  }
  override finish(): void {
    this.#deadLetters?.finish();
  }
  override notifyCheckpointComplete(checkpointId: number): void {
    this.#deadLetters?.complete(checkpointId);
  }
  override notifyCheckpointAborted(checkpointId: number): void {
    this.#deadLetters?.aborted(checkpointId);
  }
  override counters(): Readonly<Record<string, number>> | undefined {
    return this.reader.metrics?.();
  }
  sourceLag(): SourceLag | undefined {
    return this.reader.lag?.();
  }
  override close(): void {
    try {
      this.reader.close?.();
    } finally {
      this.#deadLetters?.close();
    }
  }
}
