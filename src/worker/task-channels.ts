/**
 * Wires a task's channels from its deployment: the input gate over its input rings (with its own
 * doorbell), one ChannelWriter per output ring (ringing the consumer's doorbell), and one record
 * writer per output edge that routes each record through the edge's partitioner. A channel to or
 * from another process (`{ remoteFlow }`) is a remote edge's receiver in the gate, or its sender
 * among the outputs (src/cluster/remote-task-channels.ts opens them): same frames, same routing.
 */

import { ChannelWriter } from '../channels/channel-writer.js';
import { InputGate } from '../channels/input-gate.js';
import { type RemoteTaskChannels, senderKey } from '../cluster/remote-task-channels.js';
import type { ExecutionPlan, JobVertex } from '../graph/execution-plan.js';
import { createPartitionerFor } from '../graph/partitioner.js';
import { isRemoteChannel, type TaskDeployment } from '../protocol/task-deployment.js';
import type { Output } from './operators/stream-operator.js';
import type { RecordChannel } from './outputs/record-channel.js';
import { RecordWriter } from './outputs/record-writer.js';
import type { TaskOutputChannel } from './task-endpoints.js';

/** An output channel: a ring's writer or a remote edge's sender. */
export type TaskOutputWriter = TaskOutputChannel & RecordChannel & { readonly closed: boolean };

export interface TaskChannels {
  readonly gate: InputGate | null;
  /** Gate channel index → head operator input (0 or 1). */
  readonly inputIndexOf: readonly (0 | 1)[];
  readonly outputs: readonly TaskOutputWriter[];
  readonly networkOutputs: ReadonlyMap<number, Output>;
  close(): void;
}

export function openTaskChannels(
  d: TaskDeployment,
  plan: ExecutionPlan,
  vertex: JobVertex,
  remote: RemoteTaskChannels | null = null,
): TaskChannels {
  const remoteOf = <T>(found: T | undefined, what: string): T => {
    if (found === undefined) throw new Error(`${what} is remote but its flow was not opened`);
    return found;
  };
  const gate =
    d.inputs.length > 0
      ? new InputGate(
          d.inputs.map((input, index) =>
            isRemoteChannel(input.ring)
              ? remoteOf(remote?.receivers.get(index), `input channel ${index}`)
              : input.ring,
          ),
          d.doorbell,
          { debloat: d.channelOptions.debloat },
        )
      : null;
  const outputs: TaskOutputWriter[] = [];
  const networkOutputs = new Map<number, Output>();
  for (const edge of d.outputs) {
    const writers = edge.rings.map((ring, i): TaskOutputWriter => {
      if (isRemoteChannel(ring))
        return remoteOf(remote?.senders.get(senderKey(edge.edgeId, i)), `output ${edge.edgeId}:${i}`);
      const doorbell = edge.doorbells[i];
      if (doorbell === null) throw new Error(`output ${edge.edgeId}:${i} is a ring without a doorbell`);
      return new ChannelWriter(ring, doorbell, {
        batchRecords: d.channelOptions.batchRecords,
        batchBytes: d.channelOptions.batchBytes,
        shapeBatches: d.channelOptions.shapeBatches,
        wakeDelayMs: d.channelOptions.wakeDelayMs,
        producer: `operator ${vertex.operators[vertex.operators.length - 1].name}`,
      });
    });
    outputs.push(...writers);
    const planEdge = plan.edges.find((e) => e.edgeId === edge.edgeId)!;
    // A forward edge has one channel (to the consumer with this subtask's index): no routing.
    const partitioner =
      planEdge.partitioning === 'forward' ? null : createPartitionerFor(plan, edge.edgeId, d.subtaskIndex);
    networkOutputs.set(edge.edgeId, new RecordWriter(writers, partitioner));
  }
  void vertex;
  return {
    gate,
    inputIndexOf: d.inputs.map((i) => i.inputIndex),
    outputs,
    networkOutputs,
    close() {
      gate?.close();
      for (const w of outputs) if (!w.closed) w.close();
    },
  };
}
