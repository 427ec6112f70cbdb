/**
 * A committing sink's asynchronous pre-commit delays its checkpoint's acknowledgement, not the
 * task loop: records keep reaching the writer while the pre-commit is pending, and the task
 * acknowledges once it resolves. A commit that uses up its retries fails the running task.
 *
 * The task runs in this thread: a rate-limited sequence chained to a `sinks.custom` sink.
 */
import type { MessagePort } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { CommittingSink } from '../../../../src/api/committing-sink.js';
import { buildStreamGraph, defineJob } from '../../../../src/api/define-job.js';
import type { SinkContext } from '../../../../src/api/source.js';
import { sinks, sources } from '../../../../src/connectors/index.js';
import { SinkCommitError } from '../../../../src/errors.js';
import { buildExecutionPlan } from '../../../../src/graph/build-execution-plan.js';
import { findVertex, OperatorChain } from '../../../../src/worker/operator-chain.js';
import type { TaskSnapshotStorage } from '../../../../src/worker/snapshot-storage.js';
import { StreamTask } from '../../../../src/worker/stream-task.js';
import type { TaskEvent } from '../../../../src/worker/task-deployment.js';
import { TaskTime } from '../../../../src/worker/timers/task-time.js';

function sinkTask(sink: CommittingSink<number, unknown>) {
  const def = defineJob((env) => {
    env.fromSource(sources.sequence({ from: 0, to: 1_000_000, ratePerSec: 20_000 }), 'numbers').sinkTo(sink);
  });
  const plan = buildExecutionPlan(buildStreamGraph(def), { parallelism: 1 });
  const time = new TaskTime();
  const chain = new OperatorChain(findVertex(plan, 0), {
    subtaskIndex: 0,
    parallelism: 1,
    attempt: 0,
    networkOutputs: new Map(),
    networkWatermarkOutputs: new Map(),
    time,
    createKeyedBackend: () => {
      throw new Error('no keyed operator in this chain');
    },
    restoredOperatorState: () => undefined,
    sinkContext: (base, restoredState): SinkContext => ({
      ...base,
      checkpointingMode: 'exactly-once',
      restoredState,
      restoredCheckpointId: undefined,
      deliver: () => undefined,
    }),
  });
  const events: TaskEvent[] = [];
  const waiters: (() => void)[] = [];
  const eventPort = {
    postMessage(e: TaskEvent) {
      events.push(e);
      for (const w of waiters.splice(0)) w();
    },
  } as unknown as MessagePort;
  const storage = {
    writeOperatorChunks: async () => ({ handles: [], keyedHandles: [], bytes: 0 }),
    readChunk: () => {
      throw new Error('nothing to read');
    },
    close: async () => undefined,
  } as unknown as TaskSnapshotStorage;
  const task = new StreamTask({
    name: 'numbers -> sink (1/1)',
    chain,
    gate: null,
    inputIndexOf: [],
    time,
    outputs: [],
    checkpointing: { mode: 'exactly-once', dir: '/nonexistent', incremental: false, stateBackend: 'heap' },
    createBarrierHandler: null,
    storage,
    eventPort,
  });
  const until = async (pred: (e: TaskEvent) => boolean): Promise<TaskEvent> => {
    for (;;) {
      const found = events.find(pred);
      if (found) return found;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return { task, events, until };
}

/** Resolves once `count()` reaches `n`, checked after every write (`onWrite` is called by the sink). */
function counter() {
  let n = 0;
  const waits: { at: number; resolve: () => void }[] = [];
  return {
    get n() {
      return n;
    },
    onWrite() {
      n++;
      for (let i = waits.length - 1; i >= 0; i--) {
        if (n >= waits[i].at) waits.splice(i, 1)[0].resolve();
      }
    },
    reach(at: number): Promise<void> {
      if (n >= at) return Promise.resolve();
      return new Promise((resolve) => waits.push({ at, resolve }));
    },
  };
}

const acked = (id: number) => (e: TaskEvent) => e.kind === 'acknowledge' && e.checkpointId === id;

describe('StreamTask with an asynchronous pre-commit', () => {
  it('keeps processing while the pre-commit is pending and acknowledges when it resolves', async () => {
    const written = counter();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let preCommitted!: (atRecord: number) => void;
    const preCommitCalled = new Promise<number>((r) => {
      preCommitted = r;
    });
    const sink = sinks.custom<number, number>({
      createWriter: () => ({
        write: () => written.onWrite(),
        async preCommit() {
          preCommitted(written.n);
          await gate;
          return written.n;
        },
      }),
      commit() {},
    });
    const { task, events, until } = sinkTask(sink as CommittingSink<number, unknown>);
    const run = task.run();
    await written.reach(10);
    task.control.triggerCheckpoint(1, Date.now(), 'checkpoint', false);
    const atBarrier = await preCommitCalled;
    // the loop goes on: records after the barrier reach the writer, no acknowledgement yet
    await written.reach(atBarrier + 50);
    expect(events.some(acked(1))).toBe(false);
    release();
    await until(acked(1));
    task.control.cancel();
    await expect(run).rejects.toThrow(/cancelled/);
  });

  it('a commit that fails past its retries fails the running task', async () => {
    const written = counter();
    const sink = sinks.custom<number, string>({
      name: 'down',
      commitRetry: { retries: 1, backoffMs: 1 },
      createWriter: () => ({ write: () => written.onWrite(), preCommit: (id) => `c${id}` }),
      commit() {
        throw new Error('unreachable database');
      },
    });
    const { task, until } = sinkTask(sink as CommittingSink<number, unknown>);
    const run = task.run();
    await written.reach(10);
    task.control.triggerCheckpoint(1, Date.now(), 'checkpoint', false);
    await until(acked(1));
    task.control.notifyCheckpointComplete(1);
    const failure = await run.then(
      () => null,
      (e: unknown) => e,
    );
    expect((failure as Error).cause).toBeInstanceOf(SinkCommitError);
    expect(String((failure as Error).message)).toMatch(/unreachable database/);
  });
});
