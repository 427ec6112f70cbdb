/**
 * Restore planning: from a completed checkpoint's metadata to the state each task of a (possibly
 * rescaled) execution plan starts with. Pure apart from `readOperatorState`, which the caller
 * backs with checkpoint storage.
 *
 * - Operator state (source positions, sink transactions) is redistributed by even split: the
 *   old subtasks' entries are concatenated in subtask order and dealt out in contiguous runs.
 * - Keyed state goes by key group: a new subtask gets every chunk, from any old subtask, whose
 *   key group falls in its range. Rescaling is therefore free of data movement decisions.
 */

import type { ExecutionPlan } from '../graph/execution-plan.js';
import { taskKey } from '../graph/task-id.js';
import {
  CHANNEL_STATE_CHUNK,
  type ChannelStateChunkRef,
  OPERATOR_STATE_CHUNK,
} from '../protocol/snapshot-chunks.js';
import type { TaskRestoreState } from '../protocol/task-deployment.js';
import { keyGroupRangeContains, keyGroupRangeFor } from '../state/key-groups.js';
import { redistributeOperatorState } from '../state/redistribute-operator-state.js';
import type { CheckpointMetadata } from '../state/storage/checkpoint-metadata.js';
import type { ChunkHandle } from '../state/storage/chunk-handle.js';

export function planTaskRestores(
  plan: ExecutionPlan,
  metadata: CheckpointMetadata,
  readOperatorState: (handle: ChunkHandle) => unknown[],
): Map<string, TaskRestoreState> {
  const oldParallelism = new Map(metadata.job.operators.map((o) => [o.operatorUid, o.parallelism]));
  const byUid = new Map<string, { subtaskIndex: number; chunks: readonly ChunkHandle[] }[]>();
  for (const s of metadata.subtasks) {
    const list = byUid.get(s.operatorUid) ?? [];
    list.push(s);
    byUid.set(s.operatorUid, list);
  }
  const restores = new Map<string, TaskRestoreState>();
  /**
   * Channel state (unaligned checkpoints) is stored under a task's head operator. At unchanged
   * parallelism a subtask gets its own; otherwise every subtask gets all of it and keeps what it
   * owns (see channel-state-replay.ts).
   */
  const planChannelState = (headUid: string, parallelism: number, subtaskIndex: number) => {
    const fromParallelism = oldParallelism.get(headUid) ?? 0;
    const refs: ChannelStateChunkRef<ChunkHandle>[] = [];
    for (const s of byUid.get(headUid) ?? []) {
      if (fromParallelism === parallelism && s.subtaskIndex !== subtaskIndex) continue;
      for (const h of s.chunks)
        if (h.name === CHANNEL_STATE_CHUNK)
          refs.push({ fromSubtask: s.subtaskIndex, fromParallelism, handle: h });
    }
    return refs;
  };
  const operatorState = new Map<string, unknown[][]>(); // uid → per new subtask
  for (const v of plan.vertices) {
    for (const op of v.operators) {
      const subtasks = byUid.get(op.uid) ?? [];
      const old = Array.from({ length: oldParallelism.get(op.uid) ?? 0 }, () => [] as unknown[]);
      let any = false;
      for (const s of subtasks) {
        for (const h of s.chunks) {
          if (h.name !== OPERATOR_STATE_CHUNK) continue;
          while (old.length <= s.subtaskIndex) old.push([]);
          old[s.subtaskIndex].push(...readOperatorState(h));
          any = true;
        }
      }
      if (any) operatorState.set(op.uid, redistributeOperatorState(old, v.parallelism, 'even-split'));
    }
    for (let i = 0; i < v.parallelism; i++) {
      const range = keyGroupRangeFor(plan.maxParallelism, v.parallelism, i);
      const ops: Record<string, readonly unknown[]> = {};
      const keyed: Record<string, ChunkHandle[]> = {};
      for (const op of v.operators) {
        const entries = operatorState.get(op.uid);
        if (entries) ops[op.uid] = entries[i];
        for (const s of byUid.get(op.uid) ?? []) {
          for (const h of s.chunks) {
            if (h.keyGroup === undefined || !keyGroupRangeContains(range, h.keyGroup)) continue;
            (keyed[op.uid] ??= []).push(h);
          }
        }
      }
      const channelState = planChannelState(v.operators[0].uid, v.parallelism, i);
      restores.set(taskKey({ vertexId: v.vertexId, subtaskIndex: i }), {
        checkpointId: metadata.checkpointId,
        sinksCommitted: metadata.sinksCommitted === true,
        operatorState: ops,
        keyedState: keyed,
        ...(channelState.length > 0 ? { channelState } : {}),
      });
    }
  }
  return restores;
}
