// The async operator alone, driven as the task loop drives it (processElement, drain), with
// promises the test settles by hand: capacity, order, timeouts and retries with their typed
// errors, the keyed state refusal, and snapshot → restore of unemitted records. Timeouts run on
// vitest's fake timers, so nothing waits on the wall clock.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveAsyncOptions } from '../../../../src/api/async-options.js';
import type { AsyncOptions } from '../../../../src/api/functions.js';
import { AsyncRequestError, AsyncTimeoutError, StateAccessError } from '../../../../src/errors.js';
import { AsyncWaitOperator } from '../../../../src/worker/operators/async-wait-operator.js';
import { UserCodeError } from '../../../../src/worker/operators/stream-operator.js';
import { TaskTime } from '../../../../src/worker/timers/task-time.js';

interface Deferred {
  readonly input: unknown;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

function harness(options: AsyncOptions, opts: { restored?: unknown[]; flat?: boolean } = {}) {
  const calls: Deferred[] = [];
  const out: unknown[] = [];
  const watermarks: number[] = [];
  let wakes = 0;
  const fn = (input: unknown) =>
    new Promise((resolve, reject) => {
      calls.push({ input, resolve, reject });
    });
  const op = new AsyncWaitOperator(
    0,
    'enrich',
    'async-0',
    { subtaskIndex: 2, parallelism: 3, attempt: 0, operatorName: 'enrich' },
    { collect: (v) => out.push(v) },
    fn,
    opts.flat ?? false,
    resolveAsyncOptions(options, 'mapAsync()'),
    new TaskTime(),
    undefined,
    undefined,
    opts.restored,
  );
  op.watermarkOutput = { emitWatermark: (ts) => watermarks.push(ts) };
  op.setWakeup(() => wakes++);
  op.open();
  return { op, calls, out, watermarks, wakes: () => wakes };
}

/** Lets promise callbacks run (they only record and wake). */
const settle = () => new Promise((r) => setImmediate(r));

afterEach(() => {
  vi.useRealTimers();
});

describe('AsyncWaitOperator', () => {
  it('keeps at most capacity requests in flight; the surplus of a frame waits unissued', async () => {
    const h = harness({ capacity: 2, timeoutMs: Infinity });
    for (const x of [1, 2, 3]) h.op.processElement(x);
    expect(h.calls.map((c) => c.input)).toEqual([1, 2]);
    expect(h.op.acceptsInput).toBe(false);
    h.calls[1].resolve('b');
    await settle();
    expect(h.wakes()).toBe(1);
    h.op.drain(); // ordered: 'b' waits for 1, but its slot is free: 3 is issued
    expect(h.out).toEqual([]);
    expect(h.calls.map((c) => c.input)).toEqual([1, 2, 3]);
    h.calls[0].resolve('a');
    h.calls[2].resolve('c');
    await settle();
    h.op.drain();
    expect(h.out).toEqual(['a', 'b', 'c']);
    expect(h.op.idle).toBe(true);
    expect(h.op.acceptsInput).toBe(true);
  });

  it('unordered: results as completed, a watermark only after every record before it', async () => {
    const h = harness({ capacity: 10, timeoutMs: Infinity, ordered: false });
    h.op.processElement(1);
    h.op.processWatermark(100);
    h.op.processElement(2);
    h.calls[1].resolve('two');
    await settle();
    h.op.drain();
    expect(h.out).toEqual([]); // 2 is after the watermark, which waits for 1
    expect(h.watermarks).toEqual([]);
    h.calls[0].resolve('one');
    await settle();
    h.op.drain();
    expect(h.out).toEqual(['one', 'two']);
    expect(h.watermarks).toEqual([100]);
  });

  it('a timed-out attempt is retried; the last timeout fails with AsyncTimeoutError naming operator and position', async () => {
    vi.useFakeTimers();
    const h = harness({ capacity: 4, timeoutMs: 50, retry: { attempts: 2, backoffMs: 10 } });
    h.op.processElement('a');
    h.op.processElement('b');
    h.calls[0].resolve('A');
    await vi.advanceTimersByTimeAsync(50); // 'b' times out: retried after the backoff
    await vi.advanceTimersByTimeAsync(10);
    h.op.drain();
    expect(h.calls.map((c) => c.input)).toEqual(['a', 'b', 'b']);
    expect(h.out).toEqual(['A']);
    expect(h.op.counters()).toEqual({ asyncRetries: 1, asyncTimeouts: 1 });
    await vi.advanceTimersByTimeAsync(50); // second attempt times out too: no attempt left
    h.calls[1].resolve('late'); // a late answer of the first attempt is ignored
    let thrown: unknown;
    try {
      h.op.drain();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(UserCodeError);
    const err = (thrown as UserCodeError).original;
    expect(err).toBeInstanceOf(AsyncTimeoutError);
    expect((err as AsyncTimeoutError).message).toMatch(
      /enrich \(subtask 2\): the request for input record #1 timed out after 50 ms on attempt 2 of 2/,
    );
    expect(h.out).toEqual(['A']);
  });

  it('a rejection on the last attempt fails with AsyncRequestError, the user error as cause', async () => {
    vi.useFakeTimers();
    const h = harness({ capacity: 4, timeoutMs: Infinity, retry: { attempts: 2 } });
    h.op.processElement('a');
    const boom = new Error('service unavailable');
    h.calls[0].reject(boom);
    await vi.advanceTimersByTimeAsync(1); // the rejection, then the backoff timer (0 ms)
    h.op.drain(); // issues the retry
    expect(h.calls).toHaveLength(2);
    h.calls[1].reject(boom);
    await vi.advanceTimersByTimeAsync(1);
    const thrown = (() => {
      try {
        h.op.drain();
      } catch (e) {
        return e;
      }
    })() as UserCodeError;
    expect(thrown.operator).toBe('enrich');
    expect(thrown.original).toBeInstanceOf(AsyncRequestError);
    expect((thrown.original as AsyncRequestError).cause).toBe(boom);
    expect((thrown.original as Error).message).toMatch(
      /record #0 failed on attempt 2 of 2: Error: service unavailable/,
    );
  });

  it('flatMapAsync: every element of the iterable, and a non-iterable result is a typed error', async () => {
    const h = harness({ timeoutMs: Infinity }, { flat: true });
    h.op.processElement(1);
    h.op.processElement(2);
    h.calls[0].resolve(new Set(['x', 'y']));
    h.calls[1].resolve(42);
    await settle();
    expect(() => h.op.drain()).toThrow(/flatMapAsync must resolve to an iterable object .* got number/);
  });

  it('snapshot holds the unemitted records (in flight or held back); a restore issues them again first', async () => {
    const h = harness({ capacity: 4, timeoutMs: Infinity });
    for (const x of [1, 2, 3]) h.op.processElement(x);
    h.calls[0].resolve('r1');
    h.calls[2].resolve('r3'); // complete but held back behind 2
    await settle();
    h.op.drain();
    expect(h.out).toEqual(['r1']);
    const snap = h.op.snapshotState(1);
    expect(snap.keyedState).toBeUndefined();
    expect(snap.operatorState.map((e) => (e as { v: unknown }).v)).toEqual([2, 3]);
    // restore: a new operator gets the entries; open() issues them before any new input
    const r = harness({ capacity: 4, timeoutMs: Infinity }, { restored: [...snap.operatorState] });
    expect(r.calls.map((c) => c.input)).toEqual([2, 3]);
    r.op.processElement(4);
    for (const c of r.calls) c.resolve(`r${c.input}`);
    await settle();
    r.op.drain();
    expect(r.out).toEqual(['r2', 'r3', 'r4']);
  });
});

describe('keyed async context', () => {
  it('ctx.key is the record key; ctx.state throws StateAccessError at once (no retry)', async () => {
    const seen: unknown[] = [];
    let calls = 0;
    const backend = {
      setCurrentKey() {},
      currentKey: undefined,
      store: { list: () => ({}) },
      keys: () => [],
      snapshot: () => ({}),
      dispose() {},
    };
    const op = new AsyncWaitOperator(
      0,
      'keyed enrich',
      'async-0',
      { subtaskIndex: 0, parallelism: 1, attempt: 0, operatorName: 'keyed enrich' },
      { collect() {} },
      async (v: unknown, ctx) => {
        calls++;
        seen.push((ctx as unknown as { key: unknown }).key);
        if (v === 'bad') return (ctx as unknown as { state: unknown }).state;
        return v;
      },
      false,
      resolveAsyncOptions({ retry: { attempts: 3 }, timeoutMs: Infinity }, 'mapAsync()'),
      new TaskTime(),
      backend as never,
      (v: unknown) => `k-${String(v)}`,
      undefined,
    );
    op.open();
    op.processElement('a');
    op.processElement('bad');
    await settle();
    let thrown: unknown;
    try {
      op.drain();
    } catch (e) {
      thrown = e;
    }
    expect(seen).toEqual(['k-a', 'k-bad']);
    expect(calls).toBe(2); // not retried
    const cause = ((thrown as UserCodeError).original as AsyncRequestError).cause;
    expect(cause).toBeInstanceOf(StateAccessError);
    expect((cause as Error).message).toMatch(/keyed state \(ctx.state\) cannot be used in an async function/);
  });
});

/** A keyed backend with list state only, enough for the operator's in-flight snapshot. */
function fakeKeyedBackend(initial = new Map<unknown, unknown[]>()) {
  const lists = initial;
  let current: unknown;
  return {
    lists,
    setCurrentKey(key: unknown) {
      current = key;
    },
    get currentKey() {
      return current;
    },
    store: {
      list: () => ({
        get: () => lists.get(current) ?? [],
        add: (v: unknown) => lists.set(current, [...(lists.get(current) ?? []), v]),
        clear: () => lists.delete(current),
      }),
    },
    keys: () => lists.keys(),
    snapshot: () => ({ serialize: async () => [], release() {} }),
  };
}

describe('keyed snapshot and restore', () => {
  function keyedOperator(backend: ReturnType<typeof fakeKeyedBackend>, calls: Deferred[]) {
    const out: unknown[] = [];
    const op = new AsyncWaitOperator(
      0,
      'keyed enrich',
      'async-0',
      { subtaskIndex: 0, parallelism: 1, attempt: 0, operatorName: 'keyed enrich' },
      { collect: (v) => out.push(v) },
      (input: unknown) => new Promise((resolve, reject) => calls.push({ input, resolve, reject })),
      false,
      resolveAsyncOptions({ capacity: 10, timeoutMs: Infinity }, 'mapAsync()'),
      new TaskTime(),
      backend as never,
      (v: unknown) => (v as number) % 2,
      undefined,
    );
    op.open();
    return { op, out };
  }

  it('stores unemitted records under their key, rewrites them at each snapshot, and re-issues them in input order per key', async () => {
    const backend = fakeKeyedBackend();
    const calls: Deferred[] = [];
    const { op } = keyedOperator(backend, calls);
    for (const x of [1, 2, 3, 4, 5]) op.processElement(x);
    op.snapshotState(1);
    expect([...backend.lists.entries()].map(([k, l]) => [k, (l as { v: number }[]).map((e) => e.v)])).toEqual(
      [
        [1, [1, 3, 5]],
        [0, [2, 4]],
      ],
    );
    // 1 and 2 are emitted; the next snapshot no longer holds them (and key lists are rewritten)
    calls[0].resolve('r1');
    calls[1].resolve('r2');
    await settle();
    op.drain();
    op.snapshotState(2);
    const stored = new Map([...backend.lists.entries()].map(([k, l]) => [k, (l as unknown[]).slice()]));
    expect([...stored.entries()].map(([k, l]) => [k, (l as { v: number }[]).map((e) => e.v)])).toEqual([
      [1, [3, 5]],
      [0, [4]],
    ]);
    // restore into a new operator (as another subtask owning both keys would): state is read,
    // cleared, and the requests are issued again in input order, before any new record
    const restoredBackend = fakeKeyedBackend(new Map([...stored.entries()].reverse()));
    const again: Deferred[] = [];
    const restored = keyedOperator(restoredBackend, again);
    expect(again.map((c) => c.input)).toEqual([3, 4, 5]);
    expect(restoredBackend.lists.size).toBe(0);
    restored.op.processElement(6);
    for (const c of again) c.resolve(`r${c.input}`);
    await settle();
    restored.op.drain();
    expect(restored.out).toEqual(['r3', 'r4', 'r5', 'r6']);
  });
});
