/**
 * A one-time read of a cluster's state for `weir cluster status`: its member keys, each member's
 * published figures (member-status.ts: its subtasks, their backpressure and remote edge lag), the
 * lease, the current assignment and the latest committed checkpoint.
 * It joins nothing and creates nothing. Ages are this process's wall clock minus the server's
 * timestamp of the last write, so they are off by the clock difference between this machine and
 * the NATS server (zero on one machine); `live` applies each member's own timeout to that age.
 */

import type { KV } from '@nats-io/kv';
import { openCluster } from './cluster-connection.js';
import {
  ASSIGNMENT_KEY,
  CHECKPOINT_KEY,
  LEASE_KEY,
  MEMBER_KEY_PREFIX,
  type ResolvedClusterOptions,
} from './cluster-options.js';
import { decodeLeaseRecord } from './coordinator-lease.js';
import { decodeMemberRecord } from './member-record.js';
import { decodeMemberStatus, type MemberStatusRecord, STATUS_KEY_PREFIX } from './member-status.js';

export interface MemberStatus {
  readonly instanceId: string;
  readonly host: string;
  readonly pid: number;
  readonly startedAt: string;
  readonly beat: number;
  /** Now minus the server time of the last heartbeat, ms. */
  readonly lastHeartbeatAgeMs: number;
  readonly timeoutMs: number;
  /** `lastHeartbeatAgeMs <= timeoutMs`. */
  readonly live: boolean;
  /** Its subtasks' figures as it last published them (absent while it runs no deployment). */
  readonly status?: MemberStatusRecord & { readonly ageMs: number };
}

/** The deployment the coordinator last published. */
export interface AssignmentStatus {
  readonly run: string;
  readonly attempt: number;
  readonly coordinator: string;
  readonly members: readonly string[];
  /** The checkpoint the run restored, or null for a fresh start. */
  readonly restoredFrom: number | null;
  /** Per member, its subtasks (`vertexId/subtask`). */
  readonly subtasks: Readonly<Record<string, readonly string[]>>;
}

/** The latest committed checkpoint of the cluster's job. */
export interface CheckpointStatus {
  readonly checkpointId: number;
  readonly run: string;
  readonly final: boolean;
  readonly completedAt: string;
  readonly ageMs: number;
  readonly subtasks: number;
}

export interface CoordinatorStatus {
  readonly instanceId: string;
  /** Revision of the lease key's last write (acquire or renewal). */
  readonly leaseRevision: number;
  /** Revision of the acquiring write. */
  readonly epoch: number;
  readonly lastRenewalAgeMs: number;
  readonly leaseMs: number;
  /** `lastRenewalAgeMs > leaseMs`: the holder is presumed dead, any instance may take over. */
  readonly expired: boolean;
}

export interface ClusterStatus {
  readonly cluster: string;
  readonly members: readonly MemberStatus[];
  /** Null when no instance holds the lease (never acquired, or released). */
  readonly coordinator: CoordinatorStatus | null;
  /** Null before the first deployment. */
  readonly assignment: AssignmentStatus | null;
  /** Null before the first committed checkpoint. */
  readonly latestCheckpoint: CheckpointStatus | null;
  /** Keys that hold no readable record, with why. */
  readonly problems: readonly string[];
}

export async function readClusterStatus(o: ResolvedClusterOptions): Promise<ClusterStatus> {
  const conn = await openCluster(o, { create: false, role: 'status' });
  try {
    const problems: string[] = [];
    const members: MemberStatus[] = [];
    const keys: string[] = [];
    for await (const k of await conn.members.keys(`${MEMBER_KEY_PREFIX}>`)) keys.push(k);
    const now = Date.now();
    const statuses = new Map<string, MemberStatusRecord & { readonly ageMs: number }>();
    for await (const key of await conn.members.keys(`${STATUS_KEY_PREFIX}>`)) {
      const entry = await conn.members.get(key);
      if (entry?.operation !== 'PUT') continue;
      const r = decodeMemberStatus(entry.string());
      if ('invalid' in r) problems.push(`${key}: ${r.invalid}`);
      else statuses.set(r.instanceId, { ...r, ageMs: Math.max(0, now - entry.created.getTime()) });
    }
    for (const key of keys.sort()) {
      const entry = await conn.members.get(key);
      if (entry?.operation !== 'PUT') continue; // deleted since listed
      const r = decodeMemberRecord(entry.string());
      if ('invalid' in r) {
        problems.push(`${key}: ${r.invalid}`);
        continue;
      }
      const age = Math.max(0, now - entry.created.getTime());
      members.push({
        instanceId: r.instanceId,
        host: r.host,
        pid: r.pid,
        startedAt: new Date(r.startedAt).toISOString(),
        beat: r.beat,
        lastHeartbeatAgeMs: age,
        timeoutMs: r.timeoutMs,
        live: age <= r.timeoutMs,
        ...(statuses.has(r.instanceId) ? { status: statuses.get(r.instanceId) } : {}),
      });
    }
    let coordinator: CoordinatorStatus | null = null;
    const lease = await conn.coordinator.get(LEASE_KEY);
    if (lease && lease.operation === 'PUT') {
      const r = decodeLeaseRecord(lease.string());
      if (r === null) problems.push(`${LEASE_KEY}: not a lease record`);
      else {
        const age = Math.max(0, now - lease.created.getTime());
        coordinator = {
          instanceId: r.holder,
          leaseRevision: lease.revision,
          epoch: r.epoch ?? lease.revision,
          lastRenewalAgeMs: age,
          leaseMs: r.leaseMs,
          expired: age > r.leaseMs,
        };
      }
    }
    const assignment = await readJson(conn.coordinator, ASSIGNMENT_KEY, problems, decodeAssignment);
    const checkpoint = await readJson(conn.coordinator, CHECKPOINT_KEY, problems, decodeCheckpoint);
    const latestCheckpoint =
      checkpoint === null
        ? null
        : {
            ...checkpoint,
            completedAt: new Date(checkpoint.completedAt).toISOString(),
            ageMs: Math.max(0, now - checkpoint.completedAt),
          };
    return { cluster: o.name, members, coordinator, assignment, latestCheckpoint, problems };
  } finally {
    await conn.close();
  }
}

/** The value of `key` decoded, null when absent; a malformed value is a problem, not a failure. */
async function readJson<T>(
  kv: KV,
  key: string,
  problems: string[],
  decode: (v: Record<string, unknown>) => T | string,
): Promise<T | null> {
  const entry = await kv.get(key);
  if (entry?.operation !== 'PUT') return null;
  let v: unknown;
  try {
    v = JSON.parse(entry.string());
  } catch (e) {
    problems.push(`${key}: not JSON (${(e as Error).message})`);
    return null;
  }
  const r = typeof v === 'object' && v !== null ? decode(v as Record<string, unknown>) : 'not an object';
  if (typeof r === 'string') {
    problems.push(`${key}: ${r}`);
    return null;
  }
  return r;
}

function decodeAssignment(v: Record<string, unknown>): AssignmentStatus | string {
  if (typeof v.run !== 'string' || typeof v.coordinator !== 'string') return 'no run or coordinator';
  if (!Array.isArray(v.members) || typeof v.tasks !== 'object' || v.tasks === null)
    return 'no members or tasks';
  const subtasks: Record<string, string[]> = {};
  for (const m of v.members as string[]) subtasks[m] = [];
  for (const [task, member] of Object.entries(v.tasks as Record<string, string>))
    (subtasks[member] ??= []).push(task);
  const restore = v.restore as { checkpointId?: unknown } | null | undefined;
  return {
    run: v.run,
    attempt: typeof v.attempt === 'number' ? v.attempt : 0,
    coordinator: v.coordinator,
    members: v.members as string[],
    restoredFrom: typeof restore?.checkpointId === 'number' ? restore.checkpointId : null,
    subtasks,
  };
}

function decodeCheckpoint(
  v: Record<string, unknown>,
): (Omit<CheckpointStatus, 'completedAt' | 'ageMs'> & { completedAt: number }) | string {
  if (typeof v.checkpointId !== 'number' || typeof v.run !== 'string' || typeof v.completedAt !== 'number')
    return 'no checkpointId, run or completedAt';
  return {
    checkpointId: v.checkpointId,
    run: v.run,
    final: v.final === true,
    completedAt: v.completedAt,
    subtasks: typeof v.tasks === 'object' && v.tasks !== null ? Object.keys(v.tasks).length : 0,
  };
}
