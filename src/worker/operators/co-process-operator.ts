/**
 * Two-input `connect(...).process({ processElement1, processElement2 })`. When both inputs are
 * keyed, the function runs with a keyed context and both sides share that key's state.
 */

import type { CoProcessFunction, KeySelector, OnTimerContext, RuntimeContext } from '../../api/functions.js';
import type { KeyedStateBackend } from '../../state/keyed-state-backend.js';
import { InternalTimerService, type TimeDomain } from '../timers/internal-timer-service.js';
import type { TaskTime } from '../timers/task-time.js';
import { keyedContext, onTimerContext, timerServiceView } from './keyed-operators.js';
import {
  AbstractStreamOperator,
  type OperatorSnapshot,
  type Output,
  userCodeError,
} from './stream-operator.js';
import { synchronousResult } from './synchronous-result.js';

/**
 * Keyed, both inputs share the key's state and timers (`ctx.timers`, fired into `fn.onTimer`);
 * event-time timers fire on the task's input watermark, the minimum over both inputs' channels.
 */
export class CoProcessOperator extends AbstractStreamOperator {
  readonly #fnCtx: RuntimeContext;
  readonly #timers: InternalTimerService | undefined;
  readonly #timerCtx: OnTimerContext | undefined;
  readonly #time: TaskTime;
  #domain: TimeDomain = 'event';
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    readonly fn: CoProcessFunction<unknown, unknown, unknown, RuntimeContext>,
    readonly keyed:
      | { backend: KeyedStateBackend; selectors: readonly [KeySelector<any, any>, KeySelector<any, any>] }
      | undefined,
    time: TaskTime,
  ) {
    super(nodeId, name, uid, ctx, out);
    this.#time = time;
    if (keyed) {
      this.#timers = new InternalTimerService(keyed.backend, time, (ts, domain) => this.#fire(ts, domain));
      const keyedCtx = keyedContext(ctx, keyed.backend, time, timerServiceView(this.#timers));
      this.#fnCtx = keyedCtx;
      this.#timerCtx = onTimerContext(keyedCtx, () => this.#domain);
    } else {
      this.#fnCtx = ctx;
    }
  }

  override processWatermark(timestamp: number): void {
    this.#timers?.advanceWatermark(timestamp);
    this.watermarkOutput.emitWatermark(timestamp);
  }

  override onProcessingTime(now: number): void {
    this.#timers?.onProcessingTime(now);
  }

  #fire(ts: number, domain: TimeDomain): void {
    this.#time.timestamp = domain === 'event' ? ts : undefined;
    this.#domain = domain;
    if (this.fn.onTimer === undefined) return;
    try {
      synchronousResult(
        this.fn.onTimer(ts, this.#timerCtx as never, this.out),
        this.name,
        'onTimer function',
      );
    } catch (e) {
      throw userCodeError(this.name, e);
    }
  }

  processElement(value: unknown, inputIndex: 0 | 1): void {
    this.recordsIn++;
    try {
      if (this.keyed) {
        const key = synchronousResult(this.keyed.selectors[inputIndex](value), this.name, 'key selector');
        this.keyed.backend.setCurrentKey(key);
      }
      if (inputIndex === 0) {
        synchronousResult(
          this.fn.processElement1(value, this.#fnCtx, this.out),
          this.name,
          'processElement1',
        );
      } else {
        synchronousResult(
          this.fn.processElement2(value, this.#fnCtx, this.out),
          this.name,
          'processElement2',
        );
      }
    } catch (e) {
      throw userCodeError(this.name, e);
    }
  }

  override snapshotState(checkpointId: number): OperatorSnapshot {
    return { operatorState: [], keyedState: this.keyed?.backend.snapshot(checkpointId) };
  }
  override notifyCheckpointComplete(checkpointId: number): void {
    this.keyed?.backend.notifyCheckpointComplete(checkpointId);
  }
}
