/**
 * A task whose input ended serves every checkpoint trigger, but only the coordinator's `final`
 * one lets it exit. A periodic trigger sent before the coordinator saw `input-ended` used to be
 * taken for the final checkpoint: the task exited after it completed, and the real final
 * checkpoint then waited (until its timeout) for a task that was gone.
 *
 * The task runs in this thread: a source that ends at once, chained to a discard sink.
 */
import type { MessagePort } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { buildStreamGraph, defineJob } from '../../../../src/api/define-job.js';
import { consoleLogger } from '../../../../src/api/logger.js';
import type { SinkContext } from '../../../../src/api/source.js';
import { sinks, sources } from '../../../../src/connectors/index.js';
import { buildExecutionPlan } from '../../../../src/graph/build-execution-plan.js';
import { findVertex, OperatorChain } from '../../../../src/worker/operator-chain.js';
import type { TaskSnapshotStorage } from '../../../../src/worker/snapshot-storage.js';
import { StreamTask } from '../../../../src/worker/stream-task.js';
import type { TaskEvent } from '../../../../src/worker/task-deployment.js';
import { TaskTime } from '../../../../src/worker/timers/task-time.js';

function endedSourceTask() {
  const def = defineJob((env) => {
    env.fromSource(sources.sequence({ from: 0, to: 0 }), 'empty').sinkTo(sinks.discard());
  });
  const plan = buildExecutionPlan(buildStreamGraph(def), { parallelism: 1 });
  const vertex = findVertex(plan, 0);
  const time = new TaskTime();
  const chain = new OperatorChain(vertex, {
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
    logger: () => consoleLogger,
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
  const storage: TaskSnapshotStorage = {
    writeOperatorChunks: async () => ({ handles: [], keyedHandles: [], bytes: 0 }),
    readChunk: () => {
      throw new Error('nothing to read');
    },
    close: async () => undefined,
  } as unknown as TaskSnapshotStorage;
  const task = new StreamTask({
    name: 'empty (1/1)',
    logger: consoleLogger,
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

const acked = (id: number) => (e: TaskEvent) => e.kind === 'acknowledge' && e.checkpointId === id;

describe('StreamTask after end of input', () => {
  it('acknowledges a periodic checkpoint and stays alive; exits once the final checkpoint completed', async () => {
    const { task, events, until } = endedSourceTask();
    let exited = false;
    const run = task.run().then((m) => {
      exited = true;
      return m;
    });
    await until((e) => e.kind === 'input-ended');

    task.control.triggerCheckpoint(4, Date.now(), 'checkpoint', false);
    await until(acked(4));
    task.control.notifyCheckpointComplete(4);
    await new Promise((r) => setTimeout(r, 50));
    expect(exited).toBe(false);

    task.control.triggerCheckpoint(5, Date.now(), 'checkpoint', true);
    await until(acked(5));
    expect(exited).toBe(false);
    task.control.notifyCheckpointComplete(5);
    await run;
    expect(exited).toBe(true);
    expect(events.map((e) => e.kind)).toEqual(['input-ended', 'acknowledge', 'acknowledge', 'finished']);
  });

  it('ignores a trigger for a checkpoint it already took (a late trigger after its barrier) or an older one', async () => {
    const { task, events, until } = endedSourceTask();
    const run = task.run();
    await until((e) => e.kind === 'input-ended');
    task.control.triggerCheckpoint(4, Date.now(), 'checkpoint', false);
    task.control.triggerCheckpoint(4, Date.now(), 'checkpoint', false);
    task.control.triggerCheckpoint(3, Date.now(), 'checkpoint', false);
    task.control.triggerCheckpoint(5, Date.now(), 'checkpoint', true);
    await until(acked(5));
    task.control.notifyCheckpointComplete(5);
    await run;
    const acks = events.flatMap((e) => (e.kind === 'acknowledge' ? [e.checkpointId] : []));
    expect(acks.sort((a, b) => a - b)).toEqual([4, 5]);
  });
});
