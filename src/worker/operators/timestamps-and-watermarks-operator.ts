/**
 * `assignTimestampsAndWatermarks`: stamps every record with its event timestamp and generates
 * bounded out-of-orderness watermarks (`max timestamp seen - maxOutOfOrderness - 1`).
 *
 * Emission: periodically every `interval` ms of processing time (a `TaskTime` deadline, so the
 * task loop wakes for it even when no record arrives), and, with `everyRecords`, after every
 * that many records; in both cases only when the watermark advanced. Watermarks from upstream
 * are replaced by the generated ones, except `Infinity` (end of input), which is forwarded.
 *
 * State: the highest timestamp seen is operator state (one entry per subtask). On restore a
 * subtask resumes from the smallest restored entry (none: `-Infinity`) and emits that watermark
 * first, so records after the checkpoint are late exactly when they were late in the run that
 * failed (same parallelism); after rescaling it restarts conservatively (fewer late records).
 */

import type { RuntimeContext } from '../../api/functions.js';
import { boundedWatermark, type ResolvedWatermarkStrategy } from '../../api/watermarks.js';
import type { TaskTime } from '../timers/task-time.js';
import {
  AbstractStreamOperator,
  type OperatorSnapshot,
  type Output,
  userCodeError,
} from './stream-operator.js';
import { synchronousResult } from './synchronous-result.js';

export class TimestampsAndWatermarksOperator extends AbstractStreamOperator {
  readonly #strategy: ResolvedWatermarkStrategy;
  readonly #time: TaskTime;
  #maxTimestamp = -Infinity;
  /** Last watermark emitted; only increases. */
  #emitted = -Infinity;
  #sinceEmit = 0;
  #nextPeriodic = Infinity;

  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    strategy: ResolvedWatermarkStrategy,
    time: TaskTime,
    restoredState: readonly unknown[] | undefined,
  ) {
    super(nodeId, name, uid, ctx, out);
    this.#strategy = strategy;
    this.#time = time;
    if (restoredState !== undefined && restoredState.length > 0) {
      let min = Infinity;
      for (const e of restoredState) {
        const m = (e as { maxTimestamp?: unknown }).maxTimestamp;
        min = Math.min(min, typeof m === 'number' ? m : -Infinity);
      }
      this.#maxTimestamp = min;
    }
  }

  override open(): void {
    // A restored subtask first re-establishes the watermark it had reached.
    this.#emitIfAdvanced();
    this.#schedule(this.#time.now());
  }

  processElement(value: unknown): void {
    this.recordsIn++;
    let ts: number;
    try {
      ts = synchronousResult(this.#strategy.timestamp(value), this.name, 'timestamp function');
    } catch (e) {
      throw userCodeError(this.name, e);
    }
    if (typeof ts !== 'number' || !Number.isFinite(ts)) {
      throw userCodeError(
        this.name,
        new TypeError(
          `the timestamp function returned ${String(ts)}; event timestamps must be finite numbers (ms)`,
        ),
      );
    }
    if (ts > this.#maxTimestamp) this.#maxTimestamp = ts;
    this.#time.timestamp = ts;
    this.out.collect(value);
    const every = this.#strategy.everyRecords;
    if (every !== undefined && ++this.#sinceEmit >= every) this.#emitIfAdvanced();
  }

  /** Upstream watermarks are replaced by generated ones; only the final one passes. */
  override processWatermark(timestamp: number): void {
    if (timestamp === Infinity) this.#emit(Infinity);
  }

  override onProcessingTime(now: number): void {
    if (now >= this.#nextPeriodic) this.#emitIfAdvanced();
    this.#schedule(now);
  }

  override finish(): void {
    this.#emit(Infinity);
  }

  override snapshotState(_checkpointId: number): OperatorSnapshot {
    return { operatorState: [{ maxTimestamp: this.#maxTimestamp }], keyedState: undefined };
  }

  #schedule(now: number): void {
    if (this.#emitted === Infinity) return;
    if (now >= this.#nextPeriodic || this.#nextPeriodic === Infinity) {
      this.#nextPeriodic = now + this.#strategy.interval;
    }
    this.#time.requestAt(this.#nextPeriodic);
  }

  #emitIfAdvanced(): void {
    this.#sinceEmit = 0;
    const wm = boundedWatermark(this.#maxTimestamp, this.#strategy.maxOutOfOrderness);
    if (wm > this.#emitted) this.#emit(wm);
  }

  #emit(wm: number): void {
    if (wm <= this.#emitted) return;
    this.#emitted = wm;
    this.watermarkOutput.emitWatermark(wm);
  }
}
