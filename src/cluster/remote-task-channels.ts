/**
 * A task's remote channels (TaskDeployment inputs and outputs given as `{ remoteFlow }`): one NATS
 * connection per task, opened in the task's own thread (the flows' messages arrive on its event
 * loop), a started RemoteEdgeReceiver per remote input and a RemoteEdgeSender per remote output.
 * task-channels.ts puts them into the input gate and the record writers next to the rings.
 *
 * Internal: scale-out is not public yet (docs/architecture.md, "Scale-out").
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { loadNats } from '../connectors/client-libraries.js';
import { InvalidOptionError } from '../errors.js';
import { isRemoteChannel, type RemoteEdgeMetrics, type TaskDeployment } from '../protocol/task-deployment.js';
import { RemoteEdgeReceiver } from './remote-edge-receiver.js';
import { RemoteEdgeSender } from './remote-edge-sender.js';

export interface RemoteTaskChannels {
  /** By input index (the deployment's `inputs` order). */
  readonly receivers: ReadonlyMap<number, RemoteEdgeReceiver>;
  /** By `${edgeId}:${consumer position in the edge's rings}`. */
  readonly senders: ReadonlyMap<string, RemoteEdgeSender>;
  /** Resolves once each sender's receiver acknowledged every message (after end-of-partition). */
  drain(): Promise<void>;
  /** Each flow's counters and lag now (read when the task's metrics are sampled). */
  metrics(): RemoteEdgeMetrics[];
  /** Closes every flow and the connection. */
  close(): Promise<void>;
}

export const senderKey = (edgeId: number, position: number): string => `${edgeId}:${position}`;

/** Null when the deployment has no remote channel (no connection is opened). */
export async function openRemoteTaskChannels(
  d: TaskDeployment,
  batchRecords: number,
): Promise<RemoteTaskChannels | null> {
  const remoteInputs = d.inputs.flatMap((input, index) =>
    isRemoteChannel(input.ring) ? [{ index, flow: input.ring.remoteFlow }] : [],
  );
  const remoteOutputs = d.outputs.flatMap((edge) =>
    edge.rings.flatMap((ring, position) =>
      isRemoteChannel(ring) ? [{ key: senderKey(edge.edgeId, position), flow: ring.remoteFlow }] : [],
    ),
  );
  if (remoteInputs.length === 0 && remoteOutputs.length === 0) return null;
  const o = d.remoteEdges;
  if (o === undefined || o.servers.length === 0) {
    throw new InvalidOptionError('remoteEdges', 'a task with remote channels needs the NATS servers');
  }
  const { transport } = await loadNats();
  const nc: NatsConnection = await transport.connect({
    servers: [...o.servers],
    name: `weir:task:${d.vertexId}/${d.subtaskIndex}`,
    maxReconnectAttempts: -1,
  });
  const receivers = new Map<number, RemoteEdgeReceiver>();
  const senders = new Map<string, RemoteEdgeSender>();
  const common = {
    connection: nc,
    prefix: o.prefix,
    windowBytes: o.windowBytes,
    resyncAfterMs: o.resyncAfterMs,
  };
  try {
    for (const { index, flow } of remoteInputs) {
      const receiver = new RemoteEdgeReceiver({ ...common, flow });
      receivers.set(index, receiver);
      await receiver.start();
    }
    for (const { key, flow } of remoteOutputs) {
      const sender = new RemoteEdgeSender({
        ...common,
        flow,
        batchRecords,
        shapeBatches: d.channelOptions.shapeBatches,
      });
      senders.set(key, sender);
      sender.start();
    }
  } catch (error) {
    for (const r of receivers.values()) r.close();
    for (const s of senders.values()) s.close();
    await nc.close();
    throw error;
  }
  return {
    receivers,
    senders,
    async drain() {
      await Promise.all([...senders.values()].map((s) => s.awaitReceived()));
    },
    metrics: () => remoteEdgeMetrics(senders.values(), receivers.values()),
    async close() {
      for (const r of receivers.values()) r.close();
      for (const s of senders.values()) s.close();
      await nc.close();
    },
  };
}

/** The counters of each sender and receiver of a task, outputs first. */
export function remoteEdgeMetrics(
  senders: Iterable<RemoteEdgeSender>,
  receivers: Iterable<RemoteEdgeReceiver>,
): RemoteEdgeMetrics[] {
  const out: RemoteEdgeMetrics[] = [];
  for (const s of senders)
    out.push({
      flow: s.flow,
      direction: 'out',
      records: s.stats.records,
      bytes: s.stats.bytes,
      outstandingBytes: s.outstandingBytes,
      creditStalls: s.stats.creditStalls,
      resent: s.stats.resent,
    });
  for (const r of receivers)
    out.push({
      flow: r.flow,
      direction: 'in',
      records: r.stats.records,
      bytes: r.stats.bytes,
      queuedBytes: r.queuedBytes,
      gaps: r.stats.gaps,
    });
  return out;
}
