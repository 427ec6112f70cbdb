/**
 * Interval join (Flink's `IntervalJoinOperator`), semantics on `src/api/interval-join.ts`.
 *
 * State (keyed, in the operator's `KeyedStateBackend`): {@link LEFT_BUFFER} and {@link RIGHT_BUFFER},
 * per key a map `timestamp -> elements`, plus cleanup timers in an {@link InternalTimerService}.
 * A left element at `t` can still meet right elements up to `t + upper`, a right element at `t`
 * left elements up to `t - lower`; once the watermark passes that time (no later partner can
 * arrive: elements behind the watermark are dropped) the element is removed.
 *
 * Costs: per element O(buffered timestamps of the key on the other side).
 */

import type { MapState, RuntimeContext } from '../../api/functions.js';
import type { ProcessJoinContext } from '../../api/interval-join.js';
import type { OperatorSpec } from '../../graph/stream-graph.js';
import type { KeyedStateBackend } from '../../state/keyed-state-backend.js';
import { InternalTimerService } from '../timers/internal-timer-service.js';
import type { TaskTime } from '../timers/task-time.js';
import { AbstractKeyedOperator } from './keyed-operators.js';
import { type Output, userCodeError } from './stream-operator.js';
import { synchronousResult } from './synchronous-result.js';

export const LEFT_BUFFER = '_join-left';
export const RIGHT_BUFFER = '_join-right';

type IntervalJoinSpec = Extract<OperatorSpec, { kind: 'interval-join' }>;

export class IntervalJoinOperator extends AbstractKeyedOperator {
  readonly #spec: IntervalJoinSpec;
  readonly #time: TaskTime;
  readonly #timers: InternalTimerService;
  readonly #buffers: readonly [MapState<number, unknown[]>, MapState<number, unknown[]>];
  readonly #ctx: { -readonly [P in keyof ProcessJoinContext]: ProcessJoinContext[P] };
  #lateDropped = 0;

  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    backend: KeyedStateBackend,
    spec: IntervalJoinSpec,
    time: TaskTime,
  ) {
    super(nodeId, name, uid, ctx, out, backend);
    this.#spec = spec;
    this.#time = time;
    this.#buffers = [
      backend.store.map<number, unknown[]>(LEFT_BUFFER),
      backend.store.map<number, unknown[]>(RIGHT_BUFFER),
    ];
    this.#timers = new InternalTimerService(backend, time, (ts) => this.#cleanup(ts));
    this.#ctx = {
      subtaskIndex: ctx.subtaskIndex,
      parallelism: ctx.parallelism,
      attempt: ctx.attempt,
      operatorName: ctx.operatorName,
      key: undefined,
      leftTimestamp: 0,
      rightTimestamp: 0,
      timestamp: 0,
    };
  }

  processElement(value: unknown, inputIndex: 0 | 1): void {
    this.recordsIn++;
    const ts = this.#time.timestamp;
    if (ts === undefined) {
      throw userCodeError(
        this.name,
        new TypeError(
          'an interval join got a record without a timestamp: call assignTimestampsAndWatermarks(...) upstream',
        ),
      );
    }
    let key: unknown;
    try {
      key = synchronousResult(this.#spec.keySelectors[inputIndex](value), this.name, 'key selector');
    } catch (e) {
      throw userCodeError(this.name, e);
    }
    this.backend.setCurrentKey(key);
    if (ts < this.#timers.currentWatermark) {
      this.#lateDropped++;
      return;
    }
    const { lower, upper } = this.#spec;
    const own = this.#buffers[inputIndex];
    const list = own.get(ts) ?? [];
    list.push(value);
    own.put(ts, list);
    // The other side's matching times: rights in [ts + lower, ts + upper], lefts in [ts - upper, ts - lower].
    const [from, to] = inputIndex === 0 ? [ts + lower, ts + upper] : [ts - upper, ts - lower];
    const other = this.#buffers[inputIndex === 0 ? 1 : 0];
    const times = [...other.keys()].filter((t) => t >= from && t <= to).sort((a, b) => a - b);
    for (const t of times) {
      for (const o of other.get(t)!) {
        if (inputIndex === 0) this.#emit(value, ts, o, t);
        else this.#emit(o, t, value, ts);
      }
    }
    this.#timers.registerEventTime(this.#cleanupTime(ts, inputIndex));
  }

  override processWatermark(timestamp: number): void {
    this.#timers.advanceWatermark(timestamp);
    this.watermarkOutput.emitWatermark(timestamp);
  }

  override counters(): Readonly<Record<string, number>> | undefined {
    return { numLateRecordsDropped: this.#lateDropped };
  }

  /** The last time a partner of an element at `ts` on `side` can arrive. */
  #cleanupTime(ts: number, side: 0 | 1): number {
    return side === 0 ? ts + Math.max(this.#spec.upper, 0) : ts - Math.min(this.#spec.lower, 0);
  }

  #cleanup(timerTs: number): void {
    for (const side of [0, 1] as const) {
      const buffer = this.#buffers[side];
      const expired = [...buffer.keys()].filter((t) => this.#cleanupTime(t, side) <= timerTs);
      for (const t of expired) buffer.remove(t);
    }
  }

  #emit(left: unknown, leftTs: number, right: unknown, rightTs: number): void {
    const ts = Math.max(leftTs, rightTs);
    const ctx = this.#ctx;
    ctx.key = this.backend.currentKey;
    ctx.leftTimestamp = leftTs;
    ctx.rightTimestamp = rightTs;
    ctx.timestamp = ts;
    this.#time.timestamp = ts;
    try {
      synchronousResult(this.#spec.fn(left, right, ctx, this.out), this.name, 'interval join function');
    } catch (e) {
      throw userCodeError(this.name, e);
    }
  }
}
