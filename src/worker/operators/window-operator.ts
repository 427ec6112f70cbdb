/**
 * The window operator (Flink's `WindowOperator` with the default event-time and processing-time
 * triggers): assigns each element of a key to its windows, keeps the windows' contents in keyed
 * state, and fires a window when its time (`end - 1`) is reached. Semantics are documented on
 * `WindowedStream` (src/api/windowed-stream.ts); this file is the mechanism.
 *
 * State (all keyed, in the operator's `KeyedStateBackend`, so snapshots, rescaling and restore need no
 * code here):
 * - {@link WINDOW_CONTENTS}: per key, a map `"start/end" -> { start, end, acc }`, where `acc` is
 *   the reduced value (`reduce`), the accumulator (`aggregate`), the elements (`process`), or
 *   `[lefts, rights]` (window join). The map's keys are the key's pending windows.
 * - Timers ({@link InternalTimerService}): per window one timer at `end - 1` (fire) and, with
 *   allowed lateness, one at `end - 1 + allowedLateness` (purge). A timer only names a time, so
 *   on a timer the operator visits the key's (few) pending windows and fires those ending there
 *   and purges those past their lateness.
 *
 * Session windows merge on insertion: the element's `[t, t + gap)` absorbs every pending window
 * it overlaps or touches; their contents are combined (`reduce`, `aggregate.merge`, list concat)
 * and their timers replaced by the merged window's.
 *
 * Costs: per element O(windows per element + pending windows of the key for sessions); per firing
 * O(pending windows of the key).
 */

import type { AggregateFunction, MapState, RuntimeContext } from '../../api/functions.js';
import type { WindowContext } from '../../api/windowed-stream.js';
import { type TimeWindow, windowCover, windowsIntersect } from '../../api/windows.js';
import type { OperatorSpec } from '../../graph/stream-graph.js';
import type { KeyedStateBackend } from '../../state/keyed-state-backend.js';
import { InternalTimerService, type TimeDomain } from '../timers/internal-timer-service.js';
import type { TaskTime } from '../timers/task-time.js';
import { AbstractKeyedOperator } from './keyed-operators.js';
import { type Output, userCodeError } from './stream-operator.js';
import { synchronousResult } from './synchronous-result.js';

export const WINDOW_CONTENTS = '_window-contents';

type WindowSpec = Extract<OperatorSpec, { kind: 'window' }>;

interface WindowEntry {
  readonly start: number;
  readonly end: number;
  acc: unknown;
}

const idOf = (w: TimeWindow): string => `${w.start}/${w.end}`;

export class WindowOperator extends AbstractKeyedOperator {
  readonly #spec: WindowSpec;
  readonly #time: TaskTime;
  readonly #lateOutput: Output | undefined;
  readonly #timers: InternalTimerService;
  readonly #contents: MapState<string, WindowEntry>;
  readonly #eventTime: boolean;
  readonly #windowCtx: WindowContext & { window: TimeWindow };
  #lateDropped = 0;
  #lateEmitted = 0;

  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    backend: KeyedStateBackend,
    spec: WindowSpec,
    time: TaskTime,
    lateOutput: Output | undefined,
  ) {
    super(nodeId, name, uid, ctx, out, backend);
    this.#spec = spec;
    this.#time = time;
    this.#lateOutput = lateOutput;
    this.#eventTime = spec.assigner.time === 'event';
    this.#contents = backend.store.map<string, WindowEntry>(WINDOW_CONTENTS);
    this.#timers = new InternalTimerService(backend, time, (ts, domain) => this.#onTimer(ts, domain));
    const timers = this.#timers;
    this.#windowCtx = {
      subtaskIndex: ctx.subtaskIndex,
      parallelism: ctx.parallelism,
      attempt: ctx.attempt,
      operatorName: ctx.operatorName,
      get key() {
        return backend.currentKey;
      },
      window: { start: 0, end: 0 },
      get currentWatermark() {
        return timers.currentWatermark;
      },
    };
  }

  processElement(value: unknown, inputIndex: 0 | 1): void {
    this.recordsIn++;
    let key: unknown;
    try {
      key = synchronousResult(this.#spec.keySelectors[inputIndex](value), this.name, 'key selector');
    } catch (e) {
      throw userCodeError(this.name, e);
    }
    this.backend.setCurrentKey(key);
    let ts: number;
    if (this.#eventTime) {
      const t = this.#time.timestamp;
      if (t === undefined) {
        throw userCodeError(
          this.name,
          new TypeError(
            'an event-time window got a record without a timestamp: call assignTimestampsAndWatermarks(...) ' +
              "upstream, or use processing time (windows.tumbling({ size, time: 'processing' }))",
          ),
        );
      }
      ts = t;
    } else {
      ts = this.#time.now();
    }
    const element = this.#spec.function.kind === 'join' ? { input: inputIndex, value } : value;
    const assigned = this.#spec.assigner.assignWindows(ts);
    let skipped = true;
    if (this.#spec.assigner.merging) {
      if (this.#addToSession(assigned[0], element)) skipped = false;
    } else {
      for (const w of assigned) {
        if (this.#isLate(w)) continue;
        skipped = false;
        const id = idOf(w);
        const entry = this.#contents.get(id);
        const acc = this.#add(entry === undefined ? this.#create() : entry.acc, element);
        this.#contents.put(id, { start: w.start, end: w.end, acc });
        this.#registerTimers(w);
        if (this.#eventTime && w.end - 1 <= this.#timers.currentWatermark) this.#fire(w, acc);
      }
    }
    if (skipped && this.#eventTime && ts + this.#spec.allowedLateness <= this.#timers.currentWatermark) {
      if (this.#lateOutput) {
        this.#lateEmitted++;
        this.#lateOutput.collect(value);
      } else {
        this.#lateDropped++;
      }
    }
  }

  override processWatermark(timestamp: number): void {
    this.#timers.advanceWatermark(timestamp);
    this.watermarkOutput.emitWatermark(timestamp);
  }

  override onProcessingTime(now: number): void {
    this.#timers.onProcessingTime(now);
  }

  /** End of a bounded input: pending processing-time windows fire (event-time ones fired at `Infinity`). */
  override finish(): void {
    if (this.#eventTime) return;
    const keys = [...this.backend.keys(WINDOW_CONTENTS)];
    for (const key of keys) {
      this.backend.setCurrentKey(key);
      const entries = [...this.#contents.values()].sort((a, b) => a.end - b.end);
      for (const e of entries) {
        this.#fire(e, e.acc);
        this.#purge(e);
      }
    }
  }

  override counters(): Readonly<Record<string, number>> | undefined {
    return { numLateRecordsDropped: this.#lateDropped, numLateRecordsSideOutput: this.#lateEmitted };
  }

  // ------------------------------------------------------------------ windows

  /** Merges `w` with the key's intersecting sessions and adds `element`. False when the result is late. */
  #addToSession(w: TimeWindow, element: unknown): boolean {
    let merged = w;
    const absorbed: WindowEntry[] = [];
    // Pending sessions of a key never intersect each other, so one pass finds all that `w` touches.
    for (const e of this.#contents.values()) {
      if (windowsIntersect(e, w)) {
        absorbed.push(e);
        merged = windowCover(merged, e);
      }
    }
    if (this.#isLate(merged)) return false;
    let acc: unknown;
    for (const e of absorbed) {
      acc = acc === undefined ? e.acc : this.#merge(acc, e.acc);
      if (e.start !== merged.start || e.end !== merged.end) {
        this.#contents.remove(idOf(e));
        this.#deleteTimers(e);
      }
    }
    acc = this.#add(acc === undefined ? this.#create() : acc, element);
    this.#contents.put(idOf(merged), { start: merged.start, end: merged.end, acc });
    this.#registerTimers(merged);
    if (this.#eventTime && merged.end - 1 <= this.#timers.currentWatermark) this.#fire(merged, acc);
    return true;
  }

  /** A window is late once the watermark passed its end plus the allowed lateness (event time only). */
  #isLate(w: TimeWindow): boolean {
    return this.#eventTime && w.end - 1 + this.#spec.allowedLateness <= this.#timers.currentWatermark;
  }

  /**
   * The fire timer only while the window's time is ahead of the watermark: a window already
   * behind it fires at once on every element instead (Flink's EventTimeTrigger), so registering
   * it would fire it a second time on the next watermark.
   */
  #registerTimers(w: TimeWindow): void {
    if (!this.#eventTime) {
      this.#timers.registerProcessingTime(w.end - 1);
      return;
    }
    if (w.end - 1 > this.#timers.currentWatermark) this.#timers.registerEventTime(w.end - 1);
    if (this.#spec.allowedLateness > 0)
      this.#timers.registerEventTime(w.end - 1 + this.#spec.allowedLateness);
  }

  #deleteTimers(w: TimeWindow): void {
    if (!this.#eventTime) {
      this.#timers.deleteProcessingTime(w.end - 1);
      return;
    }
    this.#timers.deleteEventTime(w.end - 1);
    if (this.#spec.allowedLateness > 0) this.#timers.deleteEventTime(w.end - 1 + this.#spec.allowedLateness);
  }

  #onTimer(ts: number, domain: TimeDomain): void {
    const lateness = domain === 'event' ? this.#spec.allowedLateness : 0;
    const entries = [...this.#contents.values()].sort((a, b) => a.end - b.end);
    for (const e of entries) {
      if (e.end - 1 === ts || (domain === 'processing' && e.end - 1 < ts)) this.#fire(e, e.acc);
      if (e.end - 1 + lateness <= ts) this.#purge(e);
    }
  }

  #purge(w: TimeWindow): void {
    this.#contents.remove(idOf(w));
  }

  // ------------------------------------------------------------------ window functions

  #create(): unknown {
    const f = this.#spec.function;
    switch (f.kind) {
      case 'reduce':
        return undefined;
      case 'aggregate':
        return this.#call('aggregate function createAccumulator', () =>
          (f.fn as AggregateFunction<unknown, unknown, unknown>).createAccumulator(),
        );
      case 'process':
        return [];
      case 'join':
        return [[], []];
    }
  }

  #add(acc: unknown, element: unknown): unknown {
    const f = this.#spec.function;
    switch (f.kind) {
      case 'reduce':
        return acc === undefined ? element : this.#call('window reduce function', () => f.fn(acc, element));
      case 'aggregate':
        return this.#call('aggregate function add', () => f.fn.add(element, acc));
      case 'process':
        (acc as unknown[]).push(element);
        return acc;
      case 'join': {
        const { input, value } = element as { input: 0 | 1; value: unknown };
        (acc as unknown[][])[input].push(value);
        return acc;
      }
    }
  }

  #merge(a: unknown, b: unknown): unknown {
    const f = this.#spec.function;
    switch (f.kind) {
      case 'reduce':
        return a === undefined
          ? b
          : b === undefined
            ? a
            : this.#call('window reduce function', () => f.fn(a, b));
      case 'aggregate':
        return this.#call('aggregate function merge', () => f.fn.merge!(a, b));
      case 'process':
        return [...(a as unknown[]), ...(b as unknown[])];
      case 'join': {
        const [al, ar] = a as unknown[][];
        const [bl, br] = b as unknown[][];
        return [
          [...al, ...bl],
          [...ar, ...br],
        ];
      }
    }
  }

  #fire(w: TimeWindow, acc: unknown): void {
    // Results carry the window's last millisecond as their timestamp (Flink's maxTimestamp).
    this.#time.timestamp = w.end - 1;
    const f = this.#spec.function;
    const out = this.out;
    switch (f.kind) {
      case 'reduce':
        out.collect(acc);
        return;
      case 'aggregate':
        out.collect(this.#call('aggregate function getResult', () => f.fn.getResult(acc)));
        return;
      case 'process':
        this.#windowCtx.window = { start: w.start, end: w.end };
        this.#call('window process function', () => f.fn(acc as unknown[], this.#windowCtx, out));
        return;
      case 'join': {
        const [lefts, rights] = acc as unknown[][];
        for (const l of lefts)
          for (const r of rights) out.collect(this.#call('window join function', () => f.fn(l, r)));
        return;
      }
    }
  }

  /** Calls a user function; `functionKind` names it if it fails or returns a promise. */
  #call<R>(functionKind: string, f: () => R): R {
    try {
      return synchronousResult(f(), this.name, functionKind);
    } catch (e) {
      throw userCodeError(this.name, e);
    }
  }
}
