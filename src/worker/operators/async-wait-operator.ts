/**
 * `mapAsync` / `flatMapAsync`: Flink's `AsyncWaitOperator`. Every record starts a request (the
 * user function's promise) at once; results leave through a {@link StreamElementQueue} in input
 * order or as completed, watermarks keeping their place.
 *
 * Threading contract: everything runs on the task thread, and user code and emission run only
 * inside calls made by the task loop (`processElement`, `processWatermark`, `drain`, `open`).
 * Promise callbacks and timers only record what happened (a result, a failure, a retry due) and
 * call the task's wake-up; the loop then calls {@link AsyncWaitOperator.drain}, which emits. So a
 * result never reaches the chain in the middle of another record, of a snapshot, or while the
 * loop is suspended elsewhere (Flink puts completions into the mailbox for the same reason).
 *
 * Backpressure: the task feeds no input while `acceptsInput` is false (the queue holds
 * `capacity` records) and parks until the wake-up. A frame can carry more records than fit; the
 * surplus waits in the queue unissued, so at most `capacity` requests are ever in flight.
 *
 * Checkpoints (exactly-once for the results): `snapshotState` stores every record of the queue
 * whose result is not emitted yet — in flight, waiting, or complete but held back by order —
 * and a restore issues their requests again before any new input. See `#queue` for the
 * invariant that makes this exact without delaying the barrier.
 */

import type { ResolvedAsyncOptions } from '../../api/async-options.js';
import type { AsyncContext, KeySelector, ListState, RuntimeContext } from '../../api/functions.js';
import { AsyncRequestError, AsyncTimeoutError, StateAccessError } from '../../errors.js';
import type { KeyedStateBackend } from '../../state/keyed-state-backend.js';
import { KeyedAsyncContext, RecordAsyncContext } from '../async-io/async-context.js';
import { type QueueRecord, StreamElementQueue } from '../async-io/stream-element-queue.js';
import type { TaskTime } from '../timers/task-time.js';
import {
  AbstractStreamOperator,
  type OperatorSnapshot,
  type Output,
  userCodeError,
} from './stream-operator.js';

/** Keyed state (per key) holding a keyed async operator's unemitted records at a checkpoint. */
export const ASYNC_IN_FLIGHT_STATE = '_async-in-flight';

/** One unemitted record as stored in a checkpoint: queue position, input, event timestamp. */
interface StoredRecord {
  readonly s: number;
  readonly v: unknown;
  readonly t: number | null;
}

/** One record's request across its attempts. */
interface Request {
  readonly record: QueueRecord;
  readonly ctx: AsyncContext;
  /** Attempts issued so far; callbacks of older attempts are stale and ignored. */
  attempt: number;
  /** True while the current attempt may still settle (issued, not yet settled, failed or timed out). */
  open: boolean;
  /** The attempt's timeout, or the backoff before the next attempt. */
  timer: NodeJS.Timeout | undefined;
}

export class AsyncWaitOperator extends AbstractStreamOperator {
  /**
   * Records whose results are not emitted yet, and the watermarks between them.
   *
   * Invariant (exactly-once for results): for every checkpoint N, the inputs this operator
   * received before barrier N are exactly (a) those whose results it emitted before barrier N
   * left the task and (b) `#queue.pending()` at N's snapshot. Both hold because the snapshot
   * and the barrier's forwarding are one synchronous step of the task loop, with no emission
   * between them (emission happens only in loop calls). Hence a result emitted after barrier N
   * comes either from an input after barrier N or from a record in snapshot N; a restore from N
   * issues exactly the records of (b) again, and downstream state restored from N holds
   * exactly the results of (a). The barrier never waits for a request.
   */
  readonly #queue: StreamElementQueue;
  readonly #options: ResolvedAsyncOptions;
  /** Requests issued and not yet successful (including those waiting out a retry backoff). At most `capacity`. */
  #inFlight = 0;
  /** Queued records not issued yet (the overshoot of a frame), in input order. */
  readonly #waiting: Request[] = [];
  /** Retries whose backoff elapsed, issued by the next `drain`. */
  readonly #retriesDue: Request[] = [];
  /** Every request not yet successful, so `close` can clear their timers. */
  readonly #open = new Set<Request>();
  /** The failure to throw from the next loop call; set by a callback, never cleared. */
  #failure: Error | undefined;
  #wake: () => void = () => {};
  #closed = false;
  /** Keyed: the keys whose in-flight state the last snapshot wrote (cleared by the next one). */
  #snapshotKeys: unknown[] = [];
  readonly #inFlightState: ListState<StoredRecord> | undefined;
  #retries = 0;
  #timeouts = 0;

  constructor(
    nodeId: number,
    name: string,
    uid: string,
    ctx: RuntimeContext,
    out: Output,
    readonly fn: (value: unknown, ctx: AsyncContext) => unknown,
    readonly flat: boolean,
    options: ResolvedAsyncOptions,
    readonly time: TaskTime,
    /** Keyed operators only, with `keySelector`: holds the unemitted records at checkpoints. */
    readonly backend: KeyedStateBackend | undefined,
    readonly keySelector: KeySelector<unknown, unknown> | undefined,
    /** Non-keyed operators: the restored operator-state entries, `undefined` on a fresh start. */
    readonly restored: readonly unknown[] | undefined,
  ) {
    super(nodeId, name, uid, ctx, out);
    this.#options = options;
    this.#queue = new StreamElementQueue(options.capacity, options.ordered);
    this.#inFlightState = backend?.store.list<StoredRecord>(ASYNC_IN_FLIGHT_STATE);
  }

  /** Set by the task: wakes its loop so that it calls {@link drain}. */
  setWakeup(wake: () => void): void {
    this.#wake = wake;
  }

  /** False while the queue is full: the task must not feed input until a wake-up. */
  get acceptsInput(): boolean {
    return this.#queue.hasCapacity;
  }

  /** Nothing left to emit (every request settled and emitted, every watermark forwarded). */
  get idle(): boolean {
    return this.#queue.isEmpty;
  }

  /** Records of the current attempt not emitted yet. */
  get queued(): number {
    return this.#queue.size;
  }

  override open(): void {
    // Restored unemitted records come first: they preceded everything the inputs will deliver.
    const stored: { key: unknown; r: StoredRecord }[] = [];
    if (this.backend) {
      const state = this.#inFlightState!;
      const keys = [...this.backend.keys(ASYNC_IN_FLIGHT_STATE)];
      for (const key of keys) {
        this.backend.setCurrentKey(key);
        for (const r of state.get()) stored.push({ key, r });
        state.clear();
      }
      // Per key, every record comes from one old subtask, whose positions are in input order.
      stored.sort((a, b) => a.r.s - b.r.s);
    } else {
      for (const r of (this.restored ?? []) as StoredRecord[]) stored.push({ key: undefined, r });
    }
    for (const { key, r } of stored) this.#add(r.v, r.t ?? undefined, key);
    this.#issueWaiting();
    this.#throwIfFailed();
  }

  processElement(value: unknown): void {
    this.recordsIn++;
    let key: unknown;
    if (this.keySelector) {
      try {
        key = this.keySelector(value);
      } catch (e) {
        throw userCodeError(this.name, e);
      }
    }
    this.#add(value, this.time.timestamp, key);
    this.#issueWaiting();
    this.#throwIfFailed();
  }

  override processWatermark(timestamp: number): void {
    this.#queue.addWatermark(timestamp);
    this.#emitReady();
  }

  /**
   * Called by the task loop after a wake-up (and at every turn): fails the task if a request
   * failed for good, issues due retries and waiting records, emits what the queue allows.
   */
  drain(): void {
    this.#throwIfFailed();
    while (this.#retriesDue.length > 0) this.#issue(this.#retriesDue.shift()!);
    this.#emitReady();
    this.#issueWaiting();
    this.#throwIfFailed();
  }

  override snapshotState(
    checkpointId: number,
  ): OperatorSnapshot & { readonly operatorState: readonly unknown[] } {
    const pending = this.#queue.pending();
    if (!this.backend) {
      const entries: StoredRecord[] = pending.map((r) => ({ s: r.seq, v: r.input, t: r.timestamp ?? null }));
      return { operatorState: entries, keyedState: undefined };
    }
    // O(records in the queue + those of the last snapshot): bounded by about twice the capacity.
    const state = this.#inFlightState!;
    for (const key of this.#snapshotKeys) {
      this.backend.setCurrentKey(key);
      state.clear();
    }
    this.#snapshotKeys = [];
    for (const r of pending) {
      this.backend.setCurrentKey(r.key);
      state.add({ s: r.seq, v: r.input, t: r.timestamp ?? null });
      this.#snapshotKeys.push(r.key);
    }
    return { operatorState: [], keyedState: this.backend.snapshot(checkpointId) };
  }

  override notifyCheckpointComplete(checkpointId: number): void {
    this.backend?.notifyCheckpointComplete(checkpointId);
  }

  override close(): void {
    this.#closed = true;
    for (const req of this.#open) if (req.timer) clearTimeout(req.timer);
    this.#open.clear();
  }

  override counters(): Readonly<Record<string, number>> {
    return { asyncRetries: this.#retries, asyncTimeouts: this.#timeouts };
  }

  // ---------------------------------------------------------------- requests

  #add(input: unknown, timestamp: number | undefined, key: unknown): void {
    const record = this.#queue.addRecord(input, timestamp, key);
    // One small object per record (the request may outlive the next record); the runtime fields
    // are read through the shared base, so creating it costs two or three field stores.
    const ctx =
      this.keySelector !== undefined
        ? new KeyedAsyncContext(this.ctx, this.name, key, timestamp)
        : new RecordAsyncContext(this.ctx, timestamp);
    this.#waiting.push({ record, ctx, attempt: 0, open: false, timer: undefined });
  }

  #issueWaiting(): void {
    while (this.#waiting.length > 0 && this.#inFlight < this.#options.capacity) {
      const req = this.#waiting.shift()!;
      this.#inFlight++;
      this.#open.add(req);
      this.#issue(req);
    }
  }

  /** Starts the next attempt of `req`. Only called from loop calls (user code runs here). */
  #issue(req: Request): void {
    const attempt = ++req.attempt;
    req.open = true;
    let result: unknown;
    try {
      result = this.fn(req.record.input, req.ctx);
    } catch (e) {
      this.#attemptFailed(req, attempt, e, false);
      return;
    }
    const { timeoutMs } = this.#options;
    if (timeoutMs !== Infinity) {
      req.timer = setTimeout(() => this.#attemptFailed(req, attempt, undefined, true), timeoutMs);
    }
    // Promise.resolve adopts any thenable (and a plain value), and turns a throwing `then` into
    // a rejection.
    Promise.resolve(result).then(
      (value) => this.#succeeded(req, attempt, value),
      (e: unknown) => this.#attemptFailed(req, attempt, e, false),
    );
  }

  #stale(req: Request, attempt: number): boolean {
    return this.#closed || !req.open || req.attempt !== attempt;
  }

  #succeeded(req: Request, attempt: number, value: unknown): void {
    if (this.#stale(req, attempt)) return;
    let results: readonly unknown[];
    if (this.flat) {
      if (
        value === null ||
        typeof value !== 'object' ||
        typeof (value as Iterable<unknown>)[Symbol.iterator] !== 'function'
      ) {
        this.#fail(
          new AsyncRequestError(
            this.name,
            this.ctx.subtaskIndex,
            req.record.seq,
            attempt,
            `flatMapAsync must resolve to an iterable object (an array, a Set, a generator), got ${describe(value)}`,
          ),
        );
        return;
      }
      try {
        results = [...(value as Iterable<unknown>)];
      } catch (e) {
        this.#attemptFailed(req, attempt, e, false);
        return;
      }
    } else {
      results = [value];
    }
    req.open = false;
    if (req.timer) clearTimeout(req.timer);
    req.timer = undefined;
    this.#open.delete(req);
    this.#inFlight--;
    this.#queue.complete(req.record, results);
    this.#wake();
  }

  #attemptFailed(req: Request, attempt: number, error: unknown, timedOut: boolean): void {
    if (this.#stale(req, attempt)) return;
    req.open = false;
    if (req.timer) clearTimeout(req.timer);
    req.timer = undefined;
    if (timedOut) this.#timeouts++;
    const { attempts, backoffMs, timeoutMs } = this.#options;
    // Using state in an async function is a programming error: retrying cannot help.
    if (attempt < attempts && !(error instanceof StateAccessError)) {
      this.#retries++;
      // The slot stays taken during the backoff; the retry is issued by the loop (drain).
      req.timer = setTimeout(() => {
        req.timer = undefined;
        if (this.#closed || req.attempt !== attempt) return;
        this.#retriesDue.push(req);
        this.#wake();
      }, backoffMs);
      return;
    }
    const subtask = this.ctx.subtaskIndex;
    this.#fail(
      timedOut
        ? new AsyncTimeoutError(this.name, subtask, req.record.seq, timeoutMs, attempts)
        : new AsyncRequestError(this.name, subtask, req.record.seq, attempts, describeError(error), {
            cause: error,
          }),
    );
  }

  #fail(e: Error): void {
    this.#failure ??= e;
    this.#wake();
  }

  #throwIfFailed(): void {
    if (this.#failure !== undefined) throw userCodeError(this.name, this.#failure);
  }

  /** Emits what the queue allows; results carry their input's timestamp. */
  #emitReady(): void {
    const emissions = this.#queue.poll();
    if (emissions.length === 0) return;
    const time = this.time;
    const saved = time.timestamp;
    for (const e of emissions) {
      if (e.kind === 'watermark') {
        this.watermarkOutput.emitWatermark(e.timestamp);
        continue;
      }
      time.timestamp = e.record.timestamp;
      for (const r of e.record.results!) this.out.collect(r);
    }
    time.timestamp = saved;
  }
}

function describeError(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return 'a string';
  return typeof value;
}
