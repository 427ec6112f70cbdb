/**
 * The operator contract inside a task. Operators of one chain call each other directly through
 * {@link Output}s; the last ones in a chain write to network outputs. All methods run on the
 * task thread; none may block.
 */

import type { RuntimeContext } from '../../api/functions.js';
import type { SourceLag } from '../../api/source.js';
import { AsyncUserFunctionError, KeyNotSerializableError } from '../../errors.js';
import type { KeyedStateSnapshot } from '../../state/keyed-state-backend.js';

export interface Output {
  collect(value: unknown): void;
}

/** Where an operator's watermarks go: its chained successors and its network edges (all channels). */
export interface WatermarkOutput {
  emitWatermark(timestamp: number): void;
}

/** The output of operators whose watermarks go nowhere (sinks, or before the chain wired them). */
export const NO_WATERMARK_OUTPUT: WatermarkOutput = { emitWatermark() {} };

/** Operator snapshot, synchronous part: small operator-state entries plus keyed state, if any. */
export interface OperatorSnapshot {
  /**
   * Operator (non-keyed) state entries: source positions, sink transactions. A promise when the
   * operator completes its part asynchronously (a committing sink's pre-commit): the task's async
   * part awaits it before it acknowledges, and a rejection declines the checkpoint.
   */
  readonly operatorState: readonly unknown[] | Promise<readonly unknown[]>;
  /**
   * Keyed-state snapshot to persist asynchronously (the backend's, as its strategy decided: full or
   * delta); `undefined` for operators without keyed state. An operator that wraps it must forward
   * `sharedChunks` and `persisted` too, or the backend never gets a confirmed base.
   */
  readonly keyedState: KeyedStateSnapshot | undefined;
}

export interface StreamOperator {
  readonly nodeId: number;
  readonly name: string;
  readonly uid: string;
  recordsIn: number;
  open(): void;
  /**
   * `keyGroup` (≥ 0, head operators of a keyed task only): the record's key group as the
   * producer's hash partitioner computed it, carried in the channel; −1 or absent when unknown.
   * Keyed operators may use it instead of hashing the key again; others ignore it.
   */
  processElement(value: unknown, inputIndex: 0 | 1, keyGroup?: number): void;
  /**
   * The operator's input watermark advanced to `timestamp` (already the minimum over its inputs;
   * strictly increasing). Fires what is due, then forwards a watermark downstream.
   */
  processWatermark(timestamp: number): void;
  /** Processing time reached a deadline the operator requested from the task's `TaskTime`. */
  onProcessingTime(now: number): void;
  /** Set by the chain before `open()`. */
  watermarkOutput: WatermarkOutput;
  /** All inputs ended: emit what is buffered (a sink flushes). */
  finish(): void;
  snapshotState(checkpointId: number): OperatorSnapshot;
  notifyCheckpointComplete(checkpointId: number): void;
  notifyCheckpointAborted(checkpointId: number): void;
  close(): void;
  /**
   * Settles once the asynchronous part of `close()` ended (a committing sink: its commit in
   * flight, then writer and committer teardown). The task awaits it before it reports its end,
   * so the next attempt's work never overlaps this one's. Absent: nothing asynchronous.
   */
  readonly whenClosed?: Promise<void>;
  /** Operator-specific counters reported with the task's metrics; undefined when none. */
  counters(): Readonly<Record<string, number>> | undefined;
  /** A source's lag behind the end of its input (`SourceReader.lag`); absent on other operators. */
  sourceLag?(): SourceLag | undefined;
  /**
   * Operators with asynchronous work off the task loop (committing sinks): the task binds, before
   * `open()`, the function that fails the task with an error raised outside any call from it.
   */
  bindAsyncFailure?(fail: (error: unknown) => void): void;
  /**
   * Resolves once the operator's asynchronous work that must finish before the task ends has
   * finished (a sink's last commits); rejects with the failure. Awaited after end of input (and
   * after the final checkpoint completed).
   */
  settle?(): Promise<void>;
  /**
   * Sinks: resolves `true` once nothing of checkpoints `<= checkpointId` is left to
   * commit (stop-with-savepoint waits for it before it cancels the task), `false` when the
   * operator failed or closed first (those committables are committed on restore).
   */
  awaitCommitted?(checkpointId: number): Promise<boolean>;
}

/** The base most operators extend: no state, no-op lifecycle. */
export abstract class AbstractStreamOperator implements StreamOperator {
  recordsIn = 0;
  watermarkOutput: WatermarkOutput = NO_WATERMARK_OUTPUT;
  constructor(
    readonly nodeId: number,
    readonly name: string,
    readonly uid: string,
    protected readonly ctx: RuntimeContext,
    protected readonly out: Output,
  ) {}
  open(): void {}
  abstract processElement(value: unknown, inputIndex: 0 | 1, keyGroup?: number): void;
  /** Stateless operators pass watermarks through unchanged. */
  processWatermark(timestamp: number): void {
    this.watermarkOutput.emitWatermark(timestamp);
  }
  onProcessingTime(_now: number): void {}
  finish(): void {}
  snapshotState(_checkpointId: number): OperatorSnapshot {
    return { operatorState: [], keyedState: undefined };
  }
  notifyCheckpointComplete(_checkpointId: number): void {}
  notifyCheckpointAborted(_checkpointId: number): void {}
  close(): void {}
  counters(): Readonly<Record<string, number>> | undefined {
    return undefined;
  }
}

/**
 * Thrown out of an operator when user code throws, naming the operator. Chained operators call
 * each other, so an error from a downstream operator passes through upstream ones unchanged.
 */
export class UserCodeError extends Error {
  constructor(
    readonly operator: string,
    readonly original: unknown,
  ) {
    super(original instanceof Error ? original.message : String(original), { cause: original });
    this.name = 'UserCodeError';
  }
}

/** Wraps `e` unless it already names an operator. */
export function userCodeError(operator: string, e: unknown): UserCodeError {
  if (e instanceof UserCodeError) return e;
  // A key error surfaces on the producing side (in the partitioner) but belongs to the keyed operator.
  if (e instanceof KeyNotSerializableError) return new UserCodeError(e.operator, e);
  // Likewise a key selector that returned a promise, caught by the producing side's partitioner.
  if (e instanceof AsyncUserFunctionError && e.operator !== undefined)
    return new UserCodeError(e.operator, e);
  return new UserCodeError(operator, e);
}
