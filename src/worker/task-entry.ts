/**
 * The worker entry: piscina runs `default(deployment)` once per subtask. The worker imports the
 * job module, builds the same graph and plan as the main thread, picks its vertex, wires its
 * channels, exposes its control calls over comlink, and runs the task to the end.
 *
 * A failure inside the task resolves with `{ state: 'failed' }` carrying the operator and the
 * original error, so the details travel in the same message as the result; only crashes that
 * escape the task (process.exit, an uncaught asynchronous error) reject.
 */

import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { Piscina } from 'piscina';
import { buildStreamGraph } from '../api/define-job.js';
import type { RuntimeContext } from '../api/functions.js';
import type { SinkContext } from '../api/source.js';
import { openRemoteTaskChannels } from '../cluster/remote-task-channels.js';
import { buildExecutionPlan } from '../graph/build-execution-plan.js';
import { createPartitionerFor } from '../graph/partitioner.js';
import { formatTaskId } from '../graph/task-id.js';
import { importJobModule } from '../loader/job-module.js';
import type { PoolWorkerData } from '../protocol/pool-worker-data.js';
import type { TaskDeployment, TaskEvent, TaskResult } from '../protocol/task-deployment.js';
import { createBarrierHandler } from './barrier/create-barrier-handler.js';
import { BusyMarker } from './busy-marker.js';
import { ChannelStateRecorder } from './channel-state/channel-state-recorder.js';
import { loadChannelState } from './channel-state/channel-state-replay.js';
import { createKeyedBackendFactory } from './create-keyed-backend.js';
import { findVertex, OperatorChain } from './operator-chain.js';
import type { Output, WatermarkOutput } from './operators/stream-operator.js';
import { EdgeWatermarkWriter } from './outputs/edge-watermark-writer.js';
import { TimestampedRecordWriter } from './outputs/timestamped-record-writer.js';
import { openChunkReader, openSnapshotStorage, type TaskSnapshotStorage } from './snapshot-storage.js';
import { StreamTask } from './stream-task.js';
import { openTaskChannels } from './task-channels.js';
import { describeFailure } from './task-failure-description.js';
import { taskLogger } from './task-logger.js';
import { lowerWorkerThreadPriority } from './thread-priority.js';
import { TaskTime } from './timers/task-time.js';

/**
 * How long a task waits, when it ends, for its sinks' commit in flight and teardown; past it the
 * thread is returned as `lingering` and terminated, not reused. The scheduler's cancel grace.
 */
const SINK_TEARDOWN_WAIT_MS = 2000;

export default async function runTask(d: TaskDeployment): Promise<TaskResult> {
  const post = (e: TaskEvent) => d.eventPort.postMessage(e);
  const log = taskLogger(post);
  const disposers: (() => void | Promise<void>)[] = [];
  let lingering = false;
  let result: TaskResult;
  let closeChannels: (() => void) | undefined;
  try {
    // First, before the job module loads (its import and graph build are work too); once per
    // thread, so a thread reused by a restart stays where it is.
    lowerWorkerThreadPriority((Piscina.workerData as PoolWorkerData | undefined)?.workerNice ?? 0);
    const def = await importJobModule(d.jobModule);
    const graph = buildStreamGraph(def, d.args, d.jobModule);
    const plan = buildExecutionPlan(graph, { parallelism: d.parallelism, maxParallelism: d.maxParallelism });
    const vertex = findVertex(plan, d.vertexId);
    const name = formatTaskId(
      { vertexId: d.vertexId, subtaskIndex: d.subtaskIndex },
      vertex.name,
      vertex.parallelism,
    );

    // Channels to other processes (remote edges): a NATS connection in this thread.
    const remote = await openRemoteTaskChannels(d, d.channelOptions.batchRecords);
    if (remote) disposers.push(() => remote.close());
    const channels = openTaskChannels(d, plan, vertex, remote);
    // Channels are closed only after a clean finish. A failed task leaves them open: closing
    // would make its peers fail with ChannelClosedError and race the real cause to the
    // scheduler; the execution's teardown ends every peer anyway.
    closeChannels = () => channels.close();
    const storage = d.checkpointing ? await openSnapshotStorage(d) : null;
    if (storage) disposers.push(() => storage.close());
    // Restore state lives in the job's directory, or in another one (restoring a savepoint).
    let restoreReader: Pick<TaskSnapshotStorage, 'readChunk'> | null = storage;
    if (d.restore?.dir) {
      const reader = openChunkReader(d.restore.dir);
      disposers.push(() => reader.close());
      restoreReader = reader;
    }

    // Event time: per output edge a watermark writer (every channel of the edge), and for
    // timestamped edges a record writer that sends the envelope. `channels.outputs` holds the
    // edges' channel writers in deployment order.
    const time = new TaskTime();
    const networkOutputs = new Map<number, Output>(channels.networkOutputs);
    const networkWatermarkOutputs = new Map<number, WatermarkOutput>();
    let offset = 0;
    for (const edge of d.outputs) {
      const writers = channels.outputs.slice(offset, offset + edge.rings.length);
      offset += edge.rings.length;
      networkWatermarkOutputs.set(edge.edgeId, new EdgeWatermarkWriter(writers));
      const planEdge = plan.edges[edge.edgeId];
      if (planEdge.timestamped) {
        const partitioner =
          planEdge.partitioning === 'forward'
            ? null
            : createPartitionerFor(plan, edge.edgeId, d.subtaskIndex);
        networkOutputs.set(edge.edgeId, new TimestampedRecordWriter(writers, partitioner, time));
      }
    }
    const timestampedChannels = d.inputs.map((i) => plan.edges[i.edgeId].timestamped === true);

    const checkpointingMode = d.checkpointing?.mode ?? 'none';
    const busy = d.busy ? new BusyMarker(d.busy.buffer, d.busy.slot) : null;
    const keyedBackends = createKeyedBackendFactory(d, vertex, restoreReader);
    disposers.push(() => keyedBackends.close());
    await keyedBackends.prepare();
    const chain = new OperatorChain(vertex, {
      subtaskIndex: d.subtaskIndex,
      parallelism: vertex.parallelism,
      attempt: d.attempt,
      networkOutputs,
      networkWatermarkOutputs,
      time,
      createKeyedBackend: keyedBackends.create,
      busy,
      faults: d.faultInjection,
      logger: (operatorName) => taskLogger(post, { operator: operatorName }),
      restoredOperatorState: (uid) => (d.restore ? (d.restore.operatorState[uid] ?? []) : undefined),
      sinkContext: (base: RuntimeContext, restoredState): SinkContext => ({
        ...base,
        checkpointingMode,
        // A sink's restored state is its pending transactions. When the checkpoint recorded that
        // they were all committed (a stop-with-savepoint that waited for its commits), committing
        // them again would repeat output a sink cannot always recognise (`sinks.collect` with a new
        // client), so every sink restores none: one rule for committing and legacy sinks alike.
        restoredState: d.restore?.sinksCommitted && restoredState !== undefined ? [] : restoredState,
        restoredCheckpointId: d.restore?.checkpointId,
        logger: taskLogger(post, { operator: base.operatorName }),
        deliver: (sink, records, transactionId) => post({ kind: 'deliver', sink, records, transactionId }),
      }),
    });
    // A committing sink's commit in flight and its clients' teardown end before the thread is
    // returned (the task's failure or end is reported before, not after): the scheduler's teardown
    // waits for returns (a grace period), so a cancelled attempt's commit does not overlap the
    // restored attempt's re-commit of the same committable. Never rejects.
    // Bounded: past the wait the thread is returned as `lingering`, and terminated.
    disposers.push(async () => {
      let timer: NodeJS.Timeout | undefined;
      const hung = await Promise.race([
        Promise.all(chain.operators.map((op) => op.whenClosed)).then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), SINK_TEARDOWN_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
      if (hung) {
        lingering = true;
        log.warn(
          { waitedMs: SINK_TEARDOWN_WAIT_MS },
          'a sink commit or teardown still runs; its thread is terminated instead of reused',
        );
      }
    });
    // Unaligned exactly-once: in-flight records become channel state; restored channel state is
    // replayed before any new input.
    const unaligned = d.checkpointing?.mode === 'exactly-once' && d.checkpointing.unaligned === true;
    // With an alignment timeout a checkpoint may switch to unaligned at this task: record then too.
    const alignmentTimeoutMs =
      d.checkpointing?.mode === 'exactly-once' ? d.checkpointing.alignmentTimeout : undefined;
    const channelState =
      (unaligned || alignmentTimeoutMs !== undefined) && channels.gate
        ? new ChannelStateRecorder(
            d.inputs.map((i) => ({
              edgeId: i.edgeId,
              producerSubtask: i.producerSubtask,
              inputIndex: i.inputIndex,
            })),
          )
        : null;
    const replay =
      d.restore?.channelState && restoreReader
        ? loadChannelState(
            d.restore.channelState,
            (h) => restoreReader.readChunk(h),
            plan,
            d.subtaskIndex,
            vertex.parallelism,
          )
        : [];
    const task = new StreamTask({
      name,
      chain,
      gate: channels.gate,
      inputIndexOf: channels.inputIndexOf,
      timestampedChannels,
      inputIdleTimeout: vertex.inputIdleTimeout,
      time,
      outputs: channels.outputs,
      checkpointing: d.checkpointing,
      createBarrierHandler:
        d.checkpointing && channels.gate
          ? (actions) =>
              createBarrierHandler(d.checkpointing!.mode, {
                channelCount: channels.inputIndexOf.length,
                actions,
                clock: Date,
                unaligned,
                alignmentTimeoutMs,
              })
          : null,
      storage,
      eventPort: d.eventPort,
      logger: log,
      channelState,
      replay,
      busy,
      remote,
    });
    Comlink.expose(task.control, nodeEndpoint(d.controlPort));
    post({ kind: 'running' });
    const metrics = await task.run();
    // A remote consumer must have received everything before the flows close (a cut connection
    // is repaired by resending, which needs the sender).
    await remote?.drain();
    closeChannels?.();
    result = { state: 'finished', metrics };
  } catch (e) {
    const failure = describeFailure(e);
    post({ kind: 'failed', ...failure });
    result = { state: 'failed', failure };
  } finally {
    for (const dispose of disposers.reverse()) {
      try {
        await dispose();
      } catch (e) {
        log.warn({ err: e }, 'task cleanup failed');
      }
    }
    // The event port is left open: closing it here could drop events still in flight. The main
    // thread closes its end when the execution is torn down, which closes both.
    d.controlPort.close();
  }
  return lingering ? { ...result, lingering } : result;
}
