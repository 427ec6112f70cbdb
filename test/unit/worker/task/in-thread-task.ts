/**
 * A StreamTask running in the test's own thread: the job's single chained vertex (a source and
 * its chained operators and sink) with no channels, exactly-once checkpointing, storage that
 * writes nothing, and an event port that records every task event. `until(pred)` resolves with
 * the first recorded event matching `pred`, waiting for later ones (synchronised on events, never
 * on time).
 */
import type { MessagePort } from 'node:worker_threads';
import { buildStreamGraph, type JobDefinition } from '../../../../src/api/define-job.js';
import { consoleLogger } from '../../../../src/api/logger.js';
import type { SinkContext } from '../../../../src/api/source.js';
import { buildExecutionPlan } from '../../../../src/graph/build-execution-plan.js';
import type { TaskEvent } from '../../../../src/protocol/task-deployment.js';
import { findVertex, OperatorChain } from '../../../../src/worker/operator-chain.js';
import type { TaskSnapshotStorage } from '../../../../src/worker/snapshot-storage.js';
import { StreamTask } from '../../../../src/worker/stream-task.js';
import { TaskTime } from '../../../../src/worker/timers/task-time.js';

export function inThreadTask(def: JobDefinition, name: string) {
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
  const storage = {
    writeKeyedChunks: async () => ({ handles: [], bytes: 0 }),
    writeOperatorChunks: async () => ({ handles: [], keyedHandles: [], bytes: 0 }),
    readChunk: () => {
      throw new Error('nothing to read');
    },
    close: async () => undefined,
  } as unknown as TaskSnapshotStorage;
  const task = new StreamTask({
    name,
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

export const acked = (id: number) => (e: TaskEvent) => e.kind === 'acknowledge' && e.checkpointId === id;
