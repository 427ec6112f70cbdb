/**
 * One instance's membership in a cluster: it writes its heartbeat under `members.<instanceId>` in
 * the members bucket every `timeoutMs / 3`, and watches `members.>` to keep the live member set
 * (`member-view.ts`), emitting `join` and `leave` events.
 *
 * Expiry is the readers' staleness check, not a KV TTL: NATS 2.9 (this machine's server) has no
 * per-key TTL and removes keys aged out by the bucket's `max_age` without telling watchers, so a
 * TTL alone would never produce a `leave`. Each reader times the beats it sees on its own
 * monotonic clock (no clock synchronization needed); `max_age` only garbage-collects the keys of
 * members that died (`MEMBER_KEY_TTL_MS`). A graceful `leave()` deletes the key: watchers see the
 * delete and report `leave` at once.
 *
 * Costs: one KV put per member per beat (every `timeoutMs / 3`), each delivered to every
 * member's watch: N members, N² / (timeoutMs / 3) deliveries per second (3 members, 3 s: 9/s).
 */

import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { KvWatchEntry } from '@nats-io/kv';
import { ClusterError } from '../errors.js';
import { type ClusterConnection, openCluster } from './cluster-connection.js';
import {
  type ClusterOptions,
  checkInstanceId,
  MEMBER_KEY_PREFIX,
  membersBucket,
  newInstanceId,
  type ResolvedClusterOptions,
  resolveClusterOptions,
} from './cluster-options.js';
import { decodeMemberRecord, encodeMemberRecord, type MemberRecord } from './member-record.js';
import {
  emptyMemberView,
  type LiveMember,
  type MemberView,
  type MemberViewEvent,
  stepMemberView,
} from './member-view.js';
import type { MemberRunStatus } from './run-status.js';

export interface MembershipOptions extends ClusterOptions {
  /** Default: a fresh id from host, pid and random bits (`newInstanceId`). */
  readonly instanceId?: string;
  /** Monotonic clock, ms (default `performance.now`); injected by tests. */
  readonly now?: () => number;
}

export interface ClusterMembershipEvents {
  join: [member: LiveMember];
  leave: [change: { instanceId: string; reason: 'left' | 'timeout'; last: LiveMember }];
  /**
   * A heartbeat or the watch failed, or a key held no member record; membership goes on. As for
   * any EventEmitter, an `error` without a listener throws: a user must listen.
   */
  error: [error: ClusterError];
}

export class ClusterMembership extends EventEmitter<ClusterMembershipEvents> {
  readonly instanceId: string;
  readonly options: ResolvedClusterOptions;
  readonly #conn: ClusterConnection;
  readonly #now: () => number;
  readonly #record: Omit<MemberRecord, 'beat' | 'beatAt'>;
  #view: MemberView;
  #beat = 0;
  /** A cluster job's report of its current run, written with every beat (run-status.ts). */
  #run: MemberRunStatus | undefined;
  #timers: NodeJS.Timeout[] = [];
  #stopWatch: (() => void) | null = null;
  #closed = false;

  private constructor(
    conn: ClusterConnection,
    options: ResolvedClusterOptions,
    instanceId: string,
    now: () => number,
    startRevision: number,
  ) {
    super();
    this.#conn = conn;
    this.options = options;
    this.instanceId = instanceId;
    this.#now = now;
    this.#view = emptyMemberView(startRevision);
    this.#record = {
      instanceId,
      host: hostname(),
      pid: process.pid,
      startedAt: Date.now(),
      timeoutMs: options.timeoutMs,
    };
  }

  /**
   * Joins cluster `name` (creating its buckets if needed): writes the first heartbeat with KV
   * `create` (an id already present is an error, not a silent takeover of another's key), starts
   * beating and watching. Resolves once both run.
   */
  static async join(o: MembershipOptions): Promise<ClusterMembership> {
    const options = resolveClusterOptions(o);
    const instanceId = checkInstanceId(o.instanceId ?? newInstanceId(), 'cluster.instanceId');
    const conn = await openCluster(options, { create: true, role: instanceId });
    try {
      // Read before the watch starts: what the watch replays up to here may be dead (member-view.ts).
      const startRevision = (await conn.members.status()).streamInfo.state.last_seq;
      const m = new ClusterMembership(
        conn,
        options,
        instanceId,
        o.now ?? (() => performance.now()),
        startRevision,
      );
      await m.#start();
      return m;
    } catch (cause) {
      await conn.close().catch(() => undefined); // the join failed; the error below says why
      if (cause instanceof ClusterError) throw cause;
      throw new ClusterError(options.name, 'joining', String(cause), { cause });
    }
  }

  /** The live members as this instance sees them (itself included, once its own beat came back). */
  members(): LiveMember[] {
    return [...this.#view.live.values()];
  }

  get #key(): string {
    return MEMBER_KEY_PREFIX + this.instanceId;
  }

  #value(): string {
    return encodeMemberRecord({
      ...this.#record,
      beat: this.#beat,
      beatAt: Date.now(),
      ...(this.#run ? { run: this.#run } : {}),
    });
  }

  async #start(): Promise<void> {
    try {
      await this.#conn.members.create(this.#key, this.#value());
    } catch (cause) {
      throw new ClusterError(
        this.options.name,
        `joining as ${this.instanceId}`,
        'the id is taken or the write failed',
        {
          cause,
        },
      );
    }
    const watch = await this.#conn.members.watch({ key: `${MEMBER_KEY_PREFIX}>` });
    this.#stopWatch = () => watch.stop();
    void (async () => {
      try {
        for await (const entry of watch) this.#onEntry(entry);
      } catch (cause) {
        if (!this.#closed)
          this.emit(
            'error',
            new ClusterError(this.options.name, 'watching members', String(cause), { cause }),
          );
      }
    })();
    const { timeoutMs } = this.options;
    const period = Math.max(10, Math.floor(timeoutMs / 4));
    let lastTick = this.#now();
    let skipped = false;
    this.#timers.push(
      setInterval(() => {
        // A tick late by more than a period means this process was stalled (GC, a busy loop, an
        // overloaded machine). Node runs due timers before the I/O poll, so the beats that
        // arrived during the stall are still unread: timing members out now would blame them for
        // our stall. Skip one such tick (the next one runs after the poll), never two in a row.
        const now = this.#now();
        const late = now - lastTick > 2 * period;
        lastTick = now;
        if (late && !skipped) {
          skipped = true;
          return;
        }
        skipped = false;
        this.#apply({ kind: 'tick' });
      }, period),
    );
    this.#timers.push(setInterval(() => void this.#heartbeat(), Math.max(10, Math.floor(timeoutMs / 3))));
  }

  async #heartbeat(): Promise<void> {
    if (this.#closed) return;
    this.#beat++;
    try {
      await this.#conn.members.put(this.#key, this.#value());
    } catch (cause) {
      if (!this.#closed)
        this.emit(
          'error',
          new ClusterError(this.options.name, `heartbeat ${this.#beat}`, String(cause), { cause }),
        );
    }
  }

  /**
   * Sets the run report every later beat carries and writes it at once (an extra beat). Resolves
   * when that write landed or failed (a failure is an `error` event; the next beat resends it).
   */
  setRunStatus(status: MemberRunStatus): Promise<void> {
    this.#run = status;
    return this.#heartbeat();
  }

  #onEntry(entry: KvWatchEntry): void {
    const instanceId = entry.key.slice(MEMBER_KEY_PREFIX.length);
    if (entry.operation !== 'PUT') {
      this.#apply({ kind: 'delete', instanceId, revision: entry.revision });
      return;
    }
    const record = decodeMemberRecord(entry.string());
    if ('invalid' in record || record.instanceId !== instanceId) {
      const why = 'invalid' in record ? record.invalid : `names ${record.instanceId}`;
      this.emit(
        'error',
        new ClusterError(this.options.name, `member key ${entry.key}`, `not a member record: ${why}`),
      );
      return;
    }
    this.#apply({ kind: 'put', record, revision: entry.revision, serverTime: entry.created.getTime() });
  }

  #apply(event: MemberViewEvent): void {
    if (this.#closed) return;
    const { next, changes } = stepMemberView(this.#view, event, this.#now());
    this.#view = next;
    for (const c of changes) {
      if (c.kind === 'join') this.emit('join', c.member);
      else this.emit('leave', { instanceId: c.instanceId, reason: c.reason, last: c.last });
    }
  }

  #stop(): void {
    this.#closed = true;
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    this.#stopWatch?.();
  }

  /** Leaves gracefully: deletes the key (others see `leave` at once) and closes the connection. */
  async leave(): Promise<void> {
    if (this.#closed) return;
    this.#stop();
    try {
      await this.#conn.members.delete(this.#key);
    } finally {
      await this.#conn.close();
    }
  }

  /**
   * Stops beating and watching without deleting the key, as a killed process would: the others
   * see `leave` (reason `timeout`) after the timeout. For failure drills and tests.
   */
  async halt(): Promise<void> {
    if (this.#closed) return;
    this.#stop();
    await this.#conn.close();
  }

  /** The bucket this membership lives in (for messages and clean-up). */
  get bucket(): string {
    return membersBucket(this.options.name);
  }
}
