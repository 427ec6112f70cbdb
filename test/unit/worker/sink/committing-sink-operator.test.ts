// The committing-sink operator as a task drives it (through the harness): asynchronous
// pre-commits that overlap writes and each other, the snapshot's contents, commit retries and
// giving up, and the errors for broken contracts.
import { describe, expect, it } from 'vitest';
import type { CommitContext } from '../../../../src/api/committing-sink.js';
import { custom } from '../../../../src/connectors/custom-sink.js';
import { InvalidOptionError, SinkCommitError, SinkProtocolError } from '../../../../src/errors.js';
import { committablesIn, SinkHarness } from '../../connectors/committing-sink-harness.js';

/** A promise resolved from outside. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('CommittingSinkOperator', () => {
  it('a rejected pre-commit whose snapshot the task awaits late is not an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const sink = custom<number, number>({
        createWriter: () => ({
          write() {},
          preCommit: async () => {
            throw new Error('pre-commit down');
          },
        }),
        commit() {},
      });
      const h = new SinkHarness<number>(sink);
      h.write(1);
      // The task awaits operatorState only after earlier operators serialized their state.
      const { operatorState } = h.op.snapshotState(1);
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
      await expect(operatorState).rejects.toThrow('pre-commit down');
      expect(h.failures).toHaveLength(1); // the task fails through bindAsyncFailure
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('awaitCommitted resolves true once the commits up to its id succeeded, false when it closes first', async () => {
    const gates: ReturnType<typeof deferred<void>>[] = [];
    const sink = custom<number, number>({
      createWriter: () => ({ write() {}, preCommit: (id) => id }),
      async commit() {
        const gate = deferred();
        gates.push(gate);
        await gate.promise;
      },
    });
    const h = new SinkHarness<number>(sink);
    h.write(1);
    await h.preCommit(1);
    h.write(2);
    await h.preCommit(2);
    let through1: boolean | null = null;
    void h.op.awaitCommitted(1).then((ok) => {
      through1 = ok;
    });
    const through2 = h.op.awaitCommitted(2);
    h.op.notifyCheckpointComplete(2);
    await new Promise((r) => setImmediate(r));
    expect(gates).toHaveLength(1); // 1's commit runs
    expect(through1).toBe(null);
    gates[0].resolve();
    await new Promise((r) => setImmediate(r));
    expect(through1).toBe(true);
    expect(gates).toHaveLength(2); // 2's commit runs
    let closed = false;
    const closing = h.close().then(() => {
      closed = true;
    }); // before 2's commit succeeded: left to a restore
    expect(await through2).toBe(false);
    // ... but the teardown waits for that commit in flight (the next attempt must not overlap it)
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    gates[1].resolve();
    await closing;
    expect(closed).toBe(true);
    expect(await h.op.awaitCommitted(1)).toBe(true); // already committed, also after close
  });

  it('a pending pre-commit delays only its snapshot; later writes belong to the next checkpoint', async () => {
    const gates = new Map<number, ReturnType<typeof deferred<void>>>();
    const commits: { id: number; records: number[] }[] = [];
    const sink = custom<number, number[]>({
      createWriter() {
        let buffer: number[] = [];
        return {
          write: (v) => void buffer.push(v),
          async preCommit(id) {
            const records = buffer;
            buffer = [];
            const gate = deferred();
            gates.set(id, gate);
            await gate.promise;
            return records;
          },
        };
      },
      commit: (records, ctx) => void commits.push({ id: ctx.checkpointId, records }),
    });
    const h = new SinkHarness<number>(sink);
    h.write(1);
    h.write(2);
    let settled1 = false;
    const s1 = h.preCommit(1).then((s) => {
      settled1 = true;
      return s;
    });
    h.write(3); // while checkpoint 1's pre-commit is pending
    const s2 = h.preCommit(2); // overlapping pre-commit
    gates.get(2)!.resolve(); // 2 resolves first
    await Promise.resolve();
    expect(settled1).toBe(false); // 2's snapshot waits for 1 as well; 1's for its own pre-commit
    gates.get(1)!.resolve();
    const [state1, state2] = await Promise.all([s1, s2]);
    expect(committablesIn(state1).map((c) => [c.checkpointId, c.committable])).toEqual([[1, [1, 2]]]);
    expect(committablesIn(state2).map((c) => [c.checkpointId, c.committable])).toEqual([
      [1, [1, 2]],
      [2, [3]],
    ]);
    expect(commits).toEqual([]); // nothing before completion
    await h.complete(2); // 2's completion commits 1 too, in order
    expect(commits).toEqual([
      { id: 1, records: [1, 2] },
      { id: 2, records: [3] },
    ]);
    expect(h.failures).toEqual([]);
    expect(h.op.counters()).toEqual({ commits: 2, commitRetries: 0 });
  });

  it('a failing commit is retried with backoff, then the task fails with a SinkCommitError', async () => {
    const tries: CommitContext[] = [];
    const sink = custom<number, string>({
      name: 'flaky',
      commitRetry: { retries: 2, backoffMs: 1, maxBackoffMs: 2 },
      createWriter: () => ({ write() {}, preCommit: (id) => `c${id}` }),
      commit(_c, ctx) {
        tries.push(ctx);
        throw new Error(`down (${ctx.retry})`);
      },
    });
    const h = new SinkHarness<number>(sink);
    await h.preCommit(4);
    await expect(h.complete(4)).rejects.toMatchObject({ cause: expect.any(SinkCommitError) });
    expect(tries.map((t) => t.retry)).toEqual([0, 1, 2]);
    expect(h.failures).toHaveLength(1);
    const error = (h.failures[0] as Error).cause as SinkCommitError;
    expect(error.message).toMatch(
      /sink flaky: commit of checkpoint 4 \(writer subtask 0\) failed 3 times, last: down \(2\)/,
    );
    expect((error.cause as Error).message).toBe('down (2)');
  });

  it('a rejected pre-commit fails the task and declines its checkpoint', async () => {
    const sink = custom<number, string>({
      createWriter: () => ({
        write() {},
        preCommit: async () => {
          throw new Error('flush failed');
        },
      }),
      commit() {},
    });
    const h = new SinkHarness<number>(sink);
    await expect(h.preCommit(1)).rejects.toThrow(/flush failed/);
    expect(h.failures).toHaveLength(1);
    await expect(h.drain()).rejects.toThrow(/flush failed/);
  });

  it('write returning a promise is a SinkProtocolError naming the sink', () => {
    const sink = custom<number, string>({
      name: 'db',
      createWriter: () => ({ write: async () => {}, preCommit: () => undefined }) as never,
      commit() {},
    });
    const h = new SinkHarness<number>(sink);
    expect(() => h.write(1)).toThrow(SinkProtocolError);
    expect(() => h.write(1)).toThrow(/sink db: write\(\) returned a promise/);
  });

  it('restored committables are committed before new ones, with their writer subtask and restored: true', async () => {
    const seen: [number, number, boolean][] = [];
    const sink = custom<number, string>({
      createWriter: () => ({ write() {}, preCommit: (id) => `c${id}` }),
      commit: (_c, ctx) => void seen.push([ctx.checkpointId, ctx.subtaskIndex, ctx.restored]),
    });
    const restoredState = [
      { writerSubtask: 2, committables: [{ checkpointId: 6, committable: 'x' }] },
      { writerSubtask: 1, committables: [{ checkpointId: 7, committable: 'y' }] },
    ];
    const h = new SinkHarness<number>(sink, { restoredState, restoredCheckpointId: 7 });
    await h.preCommit(8);
    await h.complete(8);
    expect(seen).toEqual([
      [6, 2, true],
      [7, 1, true],
      [8, 0, false],
    ]);
  });

  it('restored state of another kind of operator is refused', () => {
    const sink = custom<number, string>({
      createWriter: () => ({ write() {}, preCommit: () => undefined }),
      commit() {},
    });
    expect(
      () => new SinkHarness<number>(sink, { restoredState: [{ pending: 'a' }], restoredCheckpointId: 3 }),
    ).toThrow(/not written by a committing sink/);
  });

  it('a legacy writer wrapper around a committing sink fails loudly instead of never committing', () => {
    const sink = custom<number, string>({
      createWriter: () => ({ write() {}, preCommit: () => undefined }),
      commit() {},
    });
    const legacyCtx = {
      subtaskIndex: 0,
      parallelism: 1,
      attempt: 0,
      operatorName: 'x',
      checkpointingMode: 'exactly-once',
    };
    expect(() => sink.createWriter(legacyCtx as never)).toThrow(SinkProtocolError);
  });

  it('sinks.custom checks its options up front', () => {
    const writer = () => ({ write() {}, preCommit: () => undefined });
    const bad: unknown[] = [
      null,
      { commit() {} },
      { createWriter: writer },
      { createWriter: writer, commit() {}, createCommitter: () => ({ commit() {} }) },
      { createWriter: writer, commit: 'x' },
      { createWriter: writer, commit() {}, name: '' },
      { createWriter: writer, commit() {}, commitRetry: { retries: -1 } },
      { createWriter: writer, commit() {}, commitRetry: { backoffMs: 1.5 } },
    ];
    for (const o of bad) expect(() => custom(o as never), JSON.stringify(o)).toThrow(InvalidOptionError);
  });
});
