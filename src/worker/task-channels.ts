/**
 * Wires a task's channels from its deployment: the input gate over its input rings (with its own
 * doorbell), one ChannelWriter per output ring (ringing the consumer's doorbell), and one record
 * writer per output edge that routes each record through the edge's partitioner.
 */

import { ChannelWriter } from '../channels/channel-writer.js';
import { InputGate } from '../channels/input-gate.js';
import type { ExecutionPlan, JobVertex } from '../graph/execution-plan.js';
import {
  ALL_CONSUMERS,
  createPartitionerFor,
  HashPartitioner,
  type Partitioner,
} from '../graph/partitioner.js';
import type { TaskDeployment } from '../protocol/task-deployment.js';
import type { Output } from './operators/stream-operator.js';

/**
 * Routes records of one edge to its channels. Broadcast writes (and encodes) once per channel. On a
 * hash edge each record goes with the key group the partitioner computed for it (the keyed
 * consumer then does not hash the key again).
 */
class RecordWriter implements Output {
  readonly #hash: HashPartitioner | null;
  constructor(
    readonly writers: readonly ChannelWriter[],
    readonly partitioner: Partitioner | null,
  ) {
    this.#hash = partitioner instanceof HashPartitioner ? partitioner : null;
  }
  collect(value: unknown): void {
    if (this.partitioner === null) {
      this.writers[0].write(value);
      return;
    }
    const hash = this.#hash;
    if (hash !== null) {
      const target = hash.select(value);
      this.writers[target].write(value, hash.lastKeyGroup);
      return;
    }
    const target = this.partitioner.select(value);
    if (target === ALL_CONSUMERS) for (const w of this.writers) w.write(value);
    else this.writers[target].write(value);
  }
}

export interface TaskChannels {
  readonly gate: InputGate | null;
  /** Gate channel index → head operator input (0 or 1). */
  readonly inputIndexOf: readonly (0 | 1)[];
  readonly outputs: readonly ChannelWriter[];
  readonly networkOutputs: ReadonlyMap<number, Output>;
  close(): void;
}

export function openTaskChannels(d: TaskDeployment, plan: ExecutionPlan, vertex: JobVertex): TaskChannels {
  const gate =
    d.inputs.length > 0
      ? new InputGate(
          d.inputs.map((i) => i.ring),
          d.doorbell,
          { debloat: d.channelOptions.debloat },
        )
      : null;
  const outputs: ChannelWriter[] = [];
  const networkOutputs = new Map<number, Output>();
  for (const edge of d.outputs) {
    const writers = edge.rings.map(
      (ring, i) =>
        new ChannelWriter(ring, edge.doorbells[i], {
          batchRecords: d.channelOptions.batchRecords,
          batchBytes: d.channelOptions.batchBytes,
          shapeBatches: d.channelOptions.shapeBatches,
          producer: `operator ${vertex.operators[vertex.operators.length - 1].name}`,
        }),
    );
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
