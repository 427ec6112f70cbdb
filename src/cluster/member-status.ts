/**
 * What a cluster instance publishes about its part of the job, for `weir cluster status`: under
 * `status.<instanceId>` in the members bucket (next to its heartbeat key, with the same bucket
 * TTL), once a second while it runs a deployment, a JSON record of its subtasks: where each
 * thread's time goes (idle, backpressured), how full its rings are, and each remote edge flow's
 * counters and lag (`RemoteEdgeMetrics`: bytes the sender sent that the consumer has not read
 * yet). The record is built from the job client's live samples (`JobClient.subtaskMetrics()`,
 * every `metricsInterval`), so publishing costs one small KV put per second and nothing in the
 * tasks. A reader checks the record (`decodeMemberStatus`) and reports a malformed one instead of
 * failing.
 */

import type { KV } from '@nats-io/kv';
import type { OperatorMetrics, RemoteEdgeMetrics } from '../protocol/task-deployment.js';

export const STATUS_KEY_PREFIX = 'status.';

/** One subtask of the instance, from its chain head's sample. */
export interface SubtaskStatus {
  /** `vertexId/subtask`. */
  readonly key: string;
  /** The chain head operator's name. */
  readonly name: string;
  readonly recordsIn: number;
  readonly recordsOut: number;
  readonly idleMs: number;
  readonly backpressuredMs: number;
  readonly outputFill?: number;
  readonly inputFill?: number;
  readonly remoteEdges?: readonly RemoteEdgeMetrics[];
}

export interface MemberStatusRecord {
  readonly instanceId: string;
  /** The run (deployment) the figures are of. */
  readonly run: string;
  readonly attempt: number;
  /** When the record was written, ms since the epoch (the instance's clock). */
  readonly at: number;
  readonly subtasks: readonly SubtaskStatus[];
}

/** The record of an instance's samples (subtasks in key order; a subtask not sampled yet is left out). */
export function memberStatusRecord(
  instanceId: string,
  run: string,
  attempt: number,
  at: number,
  samples: ReadonlyMap<string, readonly OperatorMetrics[]>,
): MemberStatusRecord {
  const subtasks: SubtaskStatus[] = [];
  for (const key of [...samples.keys()].sort(compareTaskKeys)) {
    const head = samples.get(key)?.[0];
    if (head === undefined) continue;
    const load = head.load;
    subtasks.push({
      key,
      name: head.name,
      recordsIn: head.recordsIn,
      recordsOut: samples.get(key)?.at(-1)?.recordsOut ?? head.recordsOut,
      idleMs: load?.idleMs ?? 0,
      backpressuredMs: load?.backpressuredMs ?? 0,
      ...(load?.outputFill !== undefined ? { outputFill: load.outputFill } : {}),
      ...(load?.inputFill !== undefined ? { inputFill: load.inputFill } : {}),
      ...(load?.remoteEdges !== undefined ? { remoteEdges: load.remoteEdges } : {}),
    });
  }
  return { instanceId, run, attempt, at, subtasks };
}

/** `vertexId/subtask` keys in numeric order. */
function compareTaskKeys(a: string, b: string): number {
  const [va, sa] = a.split('/').map(Number);
  const [vb, sb] = b.split('/').map(Number);
  return va - vb || sa - sb || (a < b ? -1 : a > b ? 1 : 0);
}

export function encodeMemberStatus(r: MemberStatusRecord): string {
  return JSON.stringify(r);
}

/** The record, or why the value is not one. */
export function decodeMemberStatus(text: string): MemberStatusRecord | { readonly invalid: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { invalid: `not JSON (${(e as Error).message})` };
  }
  if (typeof v !== 'object' || v === null) return { invalid: 'not an object' };
  const r = v as Record<string, unknown>;
  if (typeof r.instanceId !== 'string' || typeof r.run !== 'string')
    return { invalid: 'no instanceId or run' };
  if (typeof r.attempt !== 'number' || typeof r.at !== 'number')
    return { invalid: 'no numeric attempt or at' };
  if (!Array.isArray(r.subtasks)) return { invalid: 'no subtasks array' };
  for (const s of r.subtasks as unknown[]) {
    const t = s as Record<string, unknown>;
    if (typeof s !== 'object' || s === null || typeof t.key !== 'string' || typeof t.name !== 'string')
      return { invalid: 'a subtask without key or name' };
    for (const field of ['recordsIn', 'recordsOut', 'idleMs', 'backpressuredMs'] as const)
      if (typeof t[field] !== 'number') return { invalid: `subtask ${t.key}: no numeric ${field}` };
    if (t.remoteEdges !== undefined && !Array.isArray(t.remoteEdges))
      return { invalid: `subtask ${t.key}: remoteEdges is not an array` };
  }
  return v as MemberStatusRecord;
}

/**
 * Publishes the instance's status every `everyMs` until the returned function is called (which
 * deletes the key, best effort: a killed instance's key expires with the bucket's TTL and carries
 * its `at`). A failed put is reported through `onError` and retried at the next tick.
 */
export function publishMemberStatus(o: {
  readonly members: KV;
  readonly instanceId: string;
  readonly run: string;
  readonly attempt: number;
  readonly everyMs: number;
  readonly samples: () => ReadonlyMap<string, readonly OperatorMetrics[]>;
  readonly onError: (error: Error) => void;
}): () => Promise<void> {
  const key = `${STATUS_KEY_PREFIX}${o.instanceId}`;
  let inFlight: Promise<unknown> | null = null;
  const put = () => {
    if (inFlight) return;
    const record = memberStatusRecord(o.instanceId, o.run, o.attempt, Date.now(), o.samples());
    inFlight = o.members
      .put(key, encodeMemberStatus(record))
      .catch((e: unknown) => o.onError(e as Error))
      .finally(() => {
        inFlight = null;
      });
  };
  const timer = setInterval(put, o.everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await inFlight;
    await o.members.delete(key).catch(() => undefined);
  };
}
