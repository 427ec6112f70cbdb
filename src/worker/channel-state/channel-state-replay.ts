/**
 * Restore side of unaligned checkpoints: turns the channel-state chunks handed to a task into
 * the records it must process before any new input.
 *
 * Ownership when the parallelism changed: a record that travelled on a hash (keyBy) edge goes
 * to the new subtask that owns its key group — the same partitioner the producer uses picks it
 * — so keyed state and its in-flight records meet again. Records of other edges (rebalance,
 * broadcast; forward edges cannot change parallelism) stay with the new subtask
 * `oldSubtask % newParallelism`. At unchanged parallelism every subtask simply gets its own.
 */

import { decodeEncodedBatch } from '../../channels/record-codec.js';
import type { ExecutionPlan } from '../../graph/execution-plan.js';
import { createPartitionerFor, type Partitioner } from '../../graph/partitioner.js';
import type { ChannelStateChunkRef } from '../../protocol/snapshot-chunks.js';
import { type ChannelStateBatch, channelStatePackr } from './channel-state-recorder.js';

export interface ReplayBatch {
  readonly inputIndex: 0 | 1;
  /** Records of an event-time edge are `[timestamp, value]` envelopes, as on the wire. */
  readonly timestamped: boolean;
  readonly records: unknown[];
}

export function loadChannelState<H>(
  refs: readonly ChannelStateChunkRef<H>[],
  read: (handle: H) => Uint8Array,
  plan: ExecutionPlan,
  subtaskIndex: number,
  parallelism: number,
): ReplayBatch[] {
  const packr = channelStatePackr();
  const partitioners = new Map<number, Partitioner>();
  const out: ReplayBatch[] = [];
  for (const ref of refs) {
    const rescaled = ref.fromParallelism !== parallelism;
    const batches = packr.unpack(read(ref.handle)) as ChannelStateBatch[];
    for (const b of batches) {
      const records =
        b.ring !== undefined ? decodeEncodedBatch(b.records, b.ring) : (packr.unpack(b.records) as unknown[]);
      const edge = plan.edges[b.edgeId];
      const timestamped = edge?.timestamped === true;
      if (!rescaled) {
        if (ref.fromSubtask === subtaskIndex) out.push({ inputIndex: b.inputIndex, timestamped, records });
        continue;
      }
      if (edge?.partitioning === 'hash') {
        let p = partitioners.get(b.edgeId);
        if (!p) partitioners.set(b.edgeId, (p = createPartitionerFor(plan, b.edgeId, 0)));
        const value = timestamped ? (r: unknown) => (r as [unknown, unknown])[1] : (r: unknown) => r;
        const mine = records.filter((r) => p!.select(value(r)) === subtaskIndex);
        if (mine.length > 0) out.push({ inputIndex: b.inputIndex, timestamped, records: mine });
      } else if (ref.fromSubtask % parallelism === subtaskIndex) {
        out.push({ inputIndex: b.inputIndex, timestamped, records });
      }
    }
  }
  return out;
}
