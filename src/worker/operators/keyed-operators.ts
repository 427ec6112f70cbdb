/**
 * Operators on a keyed stream: `process` and `reduce`/`sum`. The key is re-extracted from each
 * record on the consumer side (as in Flink), which sets the backend's current key; state
 * handles then read and write that key's state.
 */

import type {
  KeyedContext,
  KeyedProcessFunction,
  KeySelector,
  OnTimerContext,
  OnTimerFunction,
  ReduceFunction,
  RuntimeContext,
  TimerService,
  ValueState,
} from '../../api/functions.js';
import type { KeyedStateBackend } from '../../state/keyed-state-backend.js';
import { InternalTimerService, type TimeDomain } from '../timers/internal-timer-service.js';
import type { TaskTime } from '../timers/task-time.js';
import {
  AbstractStreamOperator,
  type OperatorSnapshot,
  type Output,
  userCodeError,
} from './stream-operator.js';
import { synchronousResult } from './synchronous-result.js';

/** `ctx.timers` of operators without timers: every call names what to use instead. */
const NO_TIMERS: TimerService = {
  registerEventTime: noTimers,
  registerProcessingTime: noTimers,
  deleteEventTime: noTimers,
  deleteProcessingTime: noTimers,
  get currentWatermark(): number {
    return noTimers();
  },
  get currentProcessingTime(): number {
    return noTimers();
  },
};

function noTimers(): never {
  throw new TypeError('timers are only available in keyed process functions (keyBy(...).process)');
}

/** The user-facing view of an {@link InternalTimerService}. */
export function timerServiceView(timers: InternalTimerService): TimerService {
  return {
    registerEventTime: (ts) => timers.registerEventTime(ts),
    registerProcessingTime: (ts) => timers.registerProcessingTime(ts),
    deleteEventTime: (ts) => timers.deleteEventTime(ts),
    deleteProcessingTime: (ts) => timers.deleteProcessingTime(ts),
    get currentWatermark() {
      return timers.currentWatermark;
    },
    get currentProcessingTime() {
      return timers.currentProcessingTime();
    },
  };
}

/**
 * The `ctx` of keyed user functions: the runtime context plus the current key, its state, its
 * timers (when the operator has them) and the current element's timestamp.
 */
export function keyedContext(
  base: RuntimeContext,
  backend: KeyedStateBackend,
  time?: TaskTime,
  timers: TimerService = NO_TIMERS,
): KeyedContext {
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
    timers,
    get timestamp() {
      return time?.timestamp;
    },
  };
}

/** `ctx` of `onTimer`: the keyed context plus the firing timer's domain. */
export function onTimerContext(keyed: KeyedContext, domain: () => TimeDomain): OnTimerContext {
  return Object.create(keyed, {
    timeDomain: { get: domain, enumerable: true },
  }) as OnTimerContext;
}

/**
 * An operator with keyed state: its snapshot is the backend's, checkpoint completion and close
 * go to the backend.
 */
export abstract class AbstractKeyedOperator extends AbstractStreamOperator {
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    protected readonly backend: KeyedStateBackend,
  ) {
    super(nodeId, name, uid, ctx, out);
  }
  override snapshotState(checkpointId: number): OperatorSnapshot {
    return { operatorState: [], keyedState: this.backend.snapshot(checkpointId) };
  }
  override notifyCheckpointComplete(checkpointId: number): void {
    this.backend.notifyCheckpointComplete(checkpointId);
  }
  /** `keyGroup` (≥ 0): the record's key group from its frame, spares the hash (KeyedStateBackend). */
  protected setKey(selector: KeySelector<unknown, unknown>, value: unknown, keyGroup = -1): void {
    let key: unknown;
    try {
      key = synchronousResult(selector(value), this.name, 'key selector');
    } catch (e) {
      throw userCodeError(this.name, e);
    }
    this.backend.setCurrentKey(key, keyGroup);
  }
}

/**
 * `keyBy(k).process(fn | { processElement, onTimer })`: the user function with keyed state and
 * timers. Timers live in an {@link InternalTimerService} (keyed state); event-time timers fire
 * on `processWatermark` before the watermark is forwarded, so everything a timer emits precedes
 * the watermark downstream.
 */
export class KeyedProcessOperator extends AbstractKeyedOperator {
  readonly #keyedCtx: KeyedContext;
  readonly #timerCtx: OnTimerContext;
  readonly #timers: InternalTimerService;
  readonly #time: TaskTime;
  #domain: TimeDomain = 'event';
  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    backend: KeyedStateBackend,
    readonly fn: KeyedProcessFunction<unknown, unknown, unknown>,
    readonly onTimer: OnTimerFunction<unknown, unknown> | undefined,
    readonly keySelector: KeySelector<unknown, unknown>,
    time: TaskTime,
  ) {
    super(nodeId, name, uid, ctx, out, backend);
    this.#time = time;
    this.#timers = new InternalTimerService(backend, time, (ts, domain) => this.#fire(ts, domain));
    this.#keyedCtx = keyedContext(ctx, backend, time, timerServiceView(this.#timers));
    this.#timerCtx = onTimerContext(this.#keyedCtx, () => this.#domain);
  }
  processElement(value: unknown, _inputIndex: 0 | 1 = 0, keyGroup = -1): void {
    this.recordsIn++;
    this.setKey(this.keySelector, value, keyGroup);
    try {
      synchronousResult(this.fn(value, this.#keyedCtx, this.out), this.name, 'keyed process function');
    } catch (e) {
      throw userCodeError(this.name, e);
    }
  }
  override processWatermark(timestamp: number): void {
    this.#timers.advanceWatermark(timestamp);
    this.watermarkOutput.emitWatermark(timestamp);
  }
  override onProcessingTime(now: number): void {
    this.#timers.onProcessingTime(now);
  }
  #fire(ts: number, domain: TimeDomain): void {
    // What a timer emits carries the timer's time (event time) or no timestamp (processing).
    this.#time.timestamp = domain === 'event' ? ts : undefined;
    this.#domain = domain;
    if (this.onTimer === undefined) return;
    try {
      synchronousResult(this.onTimer(ts, this.#timerCtx, this.out), this.name, 'onTimer function');
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
    backend: KeyedStateBackend,
    readonly fn: ReduceFunction<unknown>,
    readonly keySelector: KeySelector<unknown, unknown>,
  ) {
    super(nodeId, name, uid, ctx, out, backend);
    this.#state = backend.store.value('_reduce');
  }
  processElement(value: unknown, _inputIndex: 0 | 1 = 0, keyGroup = -1): void {
    this.recordsIn++;
    this.setKey(this.keySelector, value, keyGroup);
    const acc = this.#state.value();
    let next: unknown;
    try {
      next = acc === undefined ? value : synchronousResult(this.fn(acc, value), this.name, 'reduce function');
    } catch (e) {
      throw userCodeError(this.name, e);
    }
    this.#state.update(next);
    this.out.collect(next);
  }
}
