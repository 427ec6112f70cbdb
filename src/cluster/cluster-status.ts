/**
 * A one-time read of a cluster's state for `weir cluster status`: its member keys and the lease.
 * It joins nothing and creates nothing. Ages are this process's wall clock minus the server's
 * timestamp of the last write, so they are off by the clock difference between this machine and
 * the NATS server (zero on one machine); `live` applies each member's own timeout to that age.
 */

import { openCluster } from './cluster-connection.js';
import { LEASE_KEY, MEMBER_KEY_PREFIX, type ResolvedClusterOptions } from './cluster-options.js';
import { decodeLeaseRecord } from './coordinator-lease.js';
import { decodeMemberRecord } from './member-record.js';

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
    return { cluster: o.name, members, coordinator, problems };
  } finally {
    await conn.close();
  }
}
