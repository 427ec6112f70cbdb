/**
 * What names a cluster and how fast it detects failures, checked up front (`InvalidOptionError`).
 *
 * One cluster is two JetStream KV buckets on the NATS servers `servers`:
 * - `weir_cluster_<name>`: one key per instance, `members.<instanceId>`, rewritten by its
 *   heartbeat (`cluster-membership.ts`);
 * - `weir_coordinator_<name>`: the coordinator lease (`lease`) and everything the coordinator
 *   commits, fenced by the lease (`coordinator-lease.ts`). A bucket of its own because the fence
 *   is the bucket's stream sequence: heartbeats in the same stream would move it every beat.
 * The two prefixes differ, so no cluster name maps onto another cluster's bucket.
 */

import { hostname } from 'node:os';
import { checkKnownKeys, type KeyTable } from '../coordinator/option-keys.js';
import { InvalidOptionError } from '../errors.js';
import { MIN_RECORD_BYTES } from './cluster-record-limit.js';

/** How a caller names a cluster. */
export interface ClusterOptions {
  /** NATS server URL(s), e.g. `nats://127.0.0.1:4222`. */
  readonly servers: string | readonly string[];
  /** The cluster's name: letters, digits, `_` and `-`, at most 64. */
  readonly name: string;
  /**
   * Failure detection timeout, ms (default {@link DEFAULT_TIMEOUT_MS}): a member whose heartbeat
   * is this old is gone, and a coordinator lease not renewed for this long can be taken over.
   * Heartbeats and renewals run at a third and a quarter of it.
   */
  readonly timeoutMs?: number;
}

/**
 * 3 s: a dead member is seen gone after 3 s plus at most a quarter (the sweep), and a dead
 * coordinator's lease is taken over after 3 s plus at most a quarter (the poll), which leaves
 * ~1 s of the 5 s takeover goal for restarting the job.
 */
export const DEFAULT_TIMEOUT_MS = 3_000;
export const MIN_TIMEOUT_MS = 100;
/** Member keys expire from the bucket (`max_age`) after {@link MEMBER_KEY_TTL_MS}; beats must come well before. */
export const MAX_TIMEOUT_MS = 30_000;
/**
 * The members bucket's `max_age`: garbage collection of the keys of instances that died without
 * deleting theirs. NATS 2.9 removes an aged key without telling watchers, so readers never rely on
 * it for detection (they time heartbeats themselves, `member-view.ts`); it only keeps dead
 * instances from piling up. Twice the longest timeout, so a live member's key never ages out.
 */
export const MEMBER_KEY_TTL_MS = 2 * MAX_TIMEOUT_MS;

export const MEMBER_KEY_PREFIX = 'members.';
export const LEASE_KEY = 'lease';
/** Coordinator bucket: the current deployment (cluster-job.ts). */
export const ASSIGNMENT_KEY = 'assignment';
/** Coordinator bucket: the latest committed checkpoint's record (cluster-checkpoints.ts). */
export const CHECKPOINT_KEY = 'checkpoint';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Options after checking, with defaults applied. */
export interface ResolvedClusterOptions {
  readonly servers: readonly string[];
  readonly name: string;
  readonly timeoutMs: number;
}

export function resolveClusterOptions(o: ClusterOptions, option = 'cluster'): ResolvedClusterOptions {
  if (typeof o !== 'object' || o === null) throw new InvalidOptionError(option, 'must be an object');
  const servers = typeof o.servers === 'string' ? [o.servers] : o.servers;
  if (
    !Array.isArray(servers) ||
    servers.length === 0 ||
    servers.some((s) => typeof s !== 'string' || s === '')
  )
    throw new InvalidOptionError(`${option}.servers`, 'must be a URL or a non-empty array of URLs');
  if (typeof o.name !== 'string' || !NAME.test(o.name))
    throw new InvalidOptionError(
      `${option}.name`,
      `${JSON.stringify(o.name)} is not a cluster name (1-64 letters, digits, "_" or "-")`,
    );
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < MIN_TIMEOUT_MS || timeoutMs > MAX_TIMEOUT_MS)
    throw new InvalidOptionError(
      `${option}.timeoutMs`,
      `must be an integer from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS} ms, got ${String(timeoutMs)}`,
    );
  return { servers: [...servers], name: o.name, timeoutMs };
}

/**
 * The `cluster` option of `startJob`/`runJob` (`weir run --cluster URL --cluster-name NAME
 * [--instances N]`): this process is one instance of the job; every instance runs the same job
 * module with the same options.
 */
export interface ClusterJobOptions extends ClusterOptions {
  /** How many instances must have joined before the first deployment. Default 1. */
  readonly instances?: number;
  /**
   * The checkpoint directory, the SAME path on every instance (a shared or network file system
   * for instances on several machines). Default: `checkpointing.dir`, which is then required.
   */
  readonly checkpointDir?: string;
  /**
   * How long the coordinator waits, ms, after it first sees an instance join a running job before
   * it restarts the job over every live instance (default {@link DEFAULT_REBALANCE_DELAY_MS},
   * 0–60 000). Instances that join within this window share one restart, and a run is never
   * rebalanced sooner than this after it was deployed (join-rebalance.ts).
   */
  readonly rebalanceDelayMs?: number;
  /**
   * The longest checkpoint record the coordinator commits, bytes (at least
   * {@link MIN_RECORD_BYTES}). Default, and never more than: the NATS server's `max_payload` less
   * a headroom for the KV message (cluster-record-limit.ts). A longer record (an incremental job's
   * chunk handles) aborts its checkpoint and re-bases every task's chain. Lower it to keep the
   * coordinator bucket's messages small.
   */
  readonly maxRecordBytes?: number;
}

/** 1 s: instances started together (a deployment scaling out) are all seen within it. */
export const DEFAULT_REBALANCE_DELAY_MS = 1_000;
export const MAX_REBALANCE_DELAY_MS = 60_000;

const CLUSTER_JOB_OPTION_KEYS: KeyTable<ClusterJobOptions> = {
  servers: true,
  name: true,
  timeoutMs: true,
  instances: true,
  checkpointDir: true,
  rebalanceDelayMs: true,
  maxRecordBytes: true,
};

export const MAX_INSTANCES = 256;

export interface ResolvedClusterJobOptions extends ResolvedClusterOptions {
  readonly instances: number;
  /** Set when given; `resolveJobOptions` falls back to `checkpointing.dir`. */
  readonly checkpointDir: string | undefined;
  readonly rebalanceDelayMs: number;
  /** Set when given: the server's limit applies alone otherwise. */
  readonly maxRecordBytes: number | undefined;
}

/** Checks the `cluster` job option (unknown keys included); the rest is checked against the job's other options. */
export function resolveClusterJobOptions(o: ClusterJobOptions): ResolvedClusterJobOptions {
  if (typeof o !== 'object' || o === null) throw new InvalidOptionError('cluster', 'must be an object');
  checkKnownKeys(o, 'cluster', CLUSTER_JOB_OPTION_KEYS);
  const base = resolveClusterOptions(o);
  const instances = o.instances ?? 1;
  if (!Number.isInteger(instances) || instances < 1 || instances > MAX_INSTANCES)
    throw new InvalidOptionError(
      'cluster.instances',
      `must be an integer from 1 to ${MAX_INSTANCES}, got ${JSON.stringify(instances)}`,
    );
  if (o.checkpointDir !== undefined && (typeof o.checkpointDir !== 'string' || o.checkpointDir === ''))
    throw new InvalidOptionError('cluster.checkpointDir', 'must be a non-empty path');
  const rebalanceDelayMs = o.rebalanceDelayMs ?? DEFAULT_REBALANCE_DELAY_MS;
  if (
    !Number.isInteger(rebalanceDelayMs) ||
    rebalanceDelayMs < 0 ||
    rebalanceDelayMs > MAX_REBALANCE_DELAY_MS
  )
    throw new InvalidOptionError(
      'cluster.rebalanceDelayMs',
      `must be an integer from 0 to ${MAX_REBALANCE_DELAY_MS} ms, got ${JSON.stringify(rebalanceDelayMs)}`,
    );
  const maxRecordBytes = o.maxRecordBytes;
  if (
    maxRecordBytes !== undefined &&
    (!Number.isInteger(maxRecordBytes) || maxRecordBytes < MIN_RECORD_BYTES)
  )
    throw new InvalidOptionError(
      'cluster.maxRecordBytes',
      `must be an integer of at least ${MIN_RECORD_BYTES} bytes, got ${JSON.stringify(maxRecordBytes)}`,
    );
  return { ...base, instances, checkpointDir: o.checkpointDir, rebalanceDelayMs, maxRecordBytes };
}

export const membersBucket = (name: string): string => `weir_cluster_${name}`;
export const coordinatorBucket = (name: string): string => `weir_coordinator_${name}`;

/**
 * A fresh instance id: host, pid and 48 random bits, reduced to what a KV key token allows
 * (`[A-Za-z0-9_-]`; a dot would split the key). Fresh per process start: an instance that comes
 * back is a new member.
 */
export function newInstanceId(host = hostname(), pid = process.pid): string {
  const random = Math.floor(Math.random() * 2 ** 48)
    .toString(36)
    .padStart(10, '0');
  return `${host.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40)}-${pid}-${random}`;
}

export function checkInstanceId(id: string, option = 'instanceId'): string {
  if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,100}$/.test(id))
    throw new InvalidOptionError(
      option,
      `${JSON.stringify(id)} is not an instance id ([A-Za-z0-9_-], 1-100)`,
    );
  return id;
}
