/**
 * The coordinator lease of one instance, and the fenced commit (the protocol is in
 * `lease-state.ts`). `step()` reads the lease key and acts once (acquire, renew, or notice the
 * loss); `start()` runs `step()` every `timeoutMs / 4`. Every write this instance makes to the
 * coordinator bucket, renewals and commits alike, runs one at a time and expects the bucket's
 * last stream sequence to be its own previous write, so any write by another instance in between
 * (a takeover) makes it fail on the server with `CoordinatorLeaseLostError('superseded')`.
 *
 * Failure cases: a renewal or commit that times out or loses its connection may or may not have
 * been applied, so the holder cannot know its last sequence: it steps down
 * (`ambiguous`) and contends again like any follower. A holder that was paused past its validity
 * refuses to commit (`expired`) without asking the server.
 */

import { EventEmitter } from 'node:events';
import {
  ClusterError,
  CoordinatorLeaseLostError,
  InvalidOptionError,
  type LeaseLossReason,
} from '../errors.js';
import { type ClusterConnection, isWrongLastSequence, openCluster } from './cluster-connection.js';
import {
  type ClusterOptions,
  checkInstanceId,
  coordinatorBucket,
  LEASE_KEY,
  type ResolvedClusterOptions,
  resolveClusterOptions,
} from './cluster-options.js';
import {
  decideLease,
  holderAfterWrite,
  type LeaseState,
  observeLease,
  RENEWALS_PER_LEASE,
} from './lease-state.js';

export interface CoordinatorLeaseOptions extends ClusterOptions {
  /** This instance (its membership's `instanceId`). */
  readonly instanceId: string;
  /** Monotonic clock, ms (default `performance.now`); injected by tests. */
  readonly now?: () => number;
}

/** The lease key's value. */
export interface LeaseRecord {
  readonly holder: string;
  /** Null in the acquiring write (its revision becomes the epoch), then that revision. */
  readonly epoch: number | null;
  readonly leaseMs: number;
  /** Wall clock of the write, ms since the epoch (display only). */
  readonly writtenAt: number;
}

export function decodeLeaseRecord(text: string): LeaseRecord | null {
  try {
    const v = JSON.parse(text) as LeaseRecord;
    if (typeof v?.holder === 'string' && typeof v.leaseMs === 'number') return v;
  } catch {
    // not JSON: handled as not a lease record below
  }
  return null;
}

const COMMIT_KEY = /^[A-Za-z0-9_=/-]+(\.[A-Za-z0-9_=/-]+)*$/;

export interface CoordinatorLeaseEvents {
  acquired: [info: { epoch: number }];
  lost: [error: CoordinatorLeaseLostError];
  /** Reading the lease failed; the loop goes on. Without a listener it throws (EventEmitter). */
  error: [error: ClusterError];
}

export class CoordinatorLease extends EventEmitter<CoordinatorLeaseEvents> {
  readonly instanceId: string;
  readonly options: ResolvedClusterOptions;
  readonly #conn: ClusterConnection;
  readonly #now: () => number;
  #state: LeaseState = { role: 'follower', observed: null };
  /** Invariant: every read-decide-write of the lease and every commit runs inside this chain, one at a time. */
  #chain: Promise<unknown> = Promise.resolve();
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  private constructor(
    conn: ClusterConnection,
    options: ResolvedClusterOptions,
    instanceId: string,
    now: () => number,
  ) {
    super();
    this.#conn = conn;
    this.options = options;
    this.instanceId = instanceId;
    this.#now = now;
  }

  static async open(o: CoordinatorLeaseOptions): Promise<CoordinatorLease> {
    const options = resolveClusterOptions(o);
    const instanceId = checkInstanceId(o.instanceId, 'cluster.instanceId');
    const conn = await openCluster(options, { create: true, role: `${instanceId}:lease` });
    return new CoordinatorLease(conn, options, instanceId, o.now ?? (() => performance.now()));
  }

  get #subject(): string {
    return `$KV.${coordinatorBucket(this.options.name)}.`;
  }

  /** The epoch of the lease this instance holds and trusts now, or undefined. */
  get epoch(): number | undefined {
    const s = this.#state;
    return s.role === 'holder' && this.#now() < s.validUntil ? s.epoch : undefined;
  }

  isCoordinator(): boolean {
    return this.epoch !== undefined;
  }

  #serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(f, f);
    this.#chain = run.catch(() => undefined); // the caller gets the error; the chain goes on
    return run;
  }

  /** Reads the lease (as a follower) and acts once on the decision. Never throws for a lost race. */
  step(): Promise<void> {
    return this.#serial(() => this.#step());
  }

  async #step(): Promise<void> {
    if (this.#closed) return;
    const leaseMs = this.options.timeoutMs;
    if (this.#state.role === 'follower') {
      const entry = await this.#conn.coordinator.get(LEASE_KEY);
      const record = entry?.operation === 'PUT' ? decodeLeaseRecord(entry.string()) : null;
      this.#state = {
        role: 'follower',
        observed: observeLease(
          this.#state.observed,
          { revision: entry?.revision ?? 0, holder: record?.holder ?? null, leaseMs: record?.leaseMs ?? 0 },
          this.#now(),
        ),
      };
    }
    const action = decideLease(this.#state, this.#now(), leaseMs);
    switch (action.kind) {
      case 'wait':
        return;
      case 'expire':
        this.#lose('expired');
        return;
      case 'create':
      case 'take-over': {
        const sentAt = this.#now();
        const value = this.#value(null);
        let seq: number;
        try {
          seq =
            action.kind === 'create'
              ? await this.#conn.coordinator.create(LEASE_KEY, value)
              : await this.#conn.coordinator.update(LEASE_KEY, value, action.revision);
        } catch (cause) {
          if (isWrongLastSequence(cause)) return; // another contender won; the next read shows whom
          throw cause;
        }
        this.#state = holderAfterWrite(seq, seq, sentAt, leaseMs);
        this.emit('acquired', { epoch: seq });
        return;
      }
      case 'renew': {
        const s = this.#state;
        if (s.role !== 'holder') return;
        const sentAt = this.#now();
        let seq: number;
        try {
          seq = await this.#fencedWrite(LEASE_KEY, this.#value(s.epoch));
        } catch (error) {
          if (error instanceof CoordinatorLeaseLostError) return; // emitted as `lost`
          throw error;
        }
        this.#state = holderAfterWrite(s.epoch, seq, sentAt, leaseMs);
        return;
      }
    }
  }

  #value(epoch: number | null): string {
    const r: LeaseRecord = {
      holder: this.instanceId,
      epoch,
      leaseMs: this.options.timeoutMs,
      writtenAt: Date.now(),
    };
    return JSON.stringify(r);
  }

  /**
   * One write expecting the bucket's last sequence to be this holder's last write; on success it
   * becomes the last write. Must run inside `#serial`.
   */
  async #fencedWrite(key: string, value: string | Uint8Array): Promise<number> {
    const s = this.#state;
    if (s.role !== 'holder') throw this.#lose('not-holder');
    try {
      const ack = await this.#conn.js.publish(this.#subject + key, value, {
        expect: { lastSequence: s.lastSeq },
      });
      this.#state = { ...s, lastSeq: ack.seq };
      return ack.seq;
    } catch (cause) {
      throw this.#lose(isWrongLastSequence(cause) ? 'superseded' : 'ambiguous', cause);
    }
  }

  /** Becomes a follower, emits `lost` (when it held the lease) and returns the error to throw. */
  #lose(reason: LeaseLossReason, cause?: unknown): CoordinatorLeaseLostError {
    const s = this.#state;
    const error = new CoordinatorLeaseLostError(
      this.options.name,
      reason,
      s.role === 'holder' ? s.epoch : undefined,
      {
        cause,
      },
    );
    if (s.role === 'holder') {
      this.#state = { role: 'follower', observed: null };
      this.emit('lost', error);
    }
    return error;
  }

  /**
   * The fenced commit: writes `value` under `key` in the coordinator bucket only if this instance
   * still holds the lease: refused locally when it never held it or its validity ran out, refused
   * by the server when another instance wrote since (took the lease over). Resolves to the
   * commit's revision. Throws `CoordinatorLeaseLostError`; with reason `ambiguous` the write may
   * have landed.
   */
  commit(key: string, value: string | Uint8Array): Promise<number> {
    if (typeof key !== 'string' || !COMMIT_KEY.test(key) || key === LEASE_KEY)
      return Promise.reject(
        new InvalidOptionError(
          'commit key',
          `${JSON.stringify(key)} is not a KV key other than "${LEASE_KEY}"`,
        ),
      );
    return this.#serial(async () => {
      const s = this.#state;
      if (s.role !== 'holder') throw this.#lose('not-holder');
      if (this.#now() >= s.validUntil) throw this.#lose('expired');
      return this.#fencedWrite(key, value);
    });
  }

  /** Runs `step()` every `timeoutMs / 4` until `close()`; read failures are emitted as `error`. */
  start(): void {
    const period = Math.max(10, Math.floor(this.options.timeoutMs / RENEWALS_PER_LEASE));
    const loop = (): void => {
      if (this.#closed) return;
      this.step().then(
        () => {
          if (!this.#closed) this.#timer = setTimeout(loop, period);
        },
        (cause: unknown) => {
          if (this.#closed) return;
          if (!(cause instanceof CoordinatorLeaseLostError))
            this.emit('error', new ClusterError(this.options.name, 'lease step', String(cause), { cause }));
          this.#timer = setTimeout(loop, period);
        },
      );
    };
    loop();
  }

  /**
   * Gives the lease up (a KV delete expecting the lease's own revision, so it never deletes a
   * successor's lease): others can acquire at once instead of after `timeoutMs`.
   */
  release(): Promise<void> {
    return this.#serial(async () => {
      const s = this.#state;
      if (s.role !== 'holder') return;
      this.#state = { role: 'follower', observed: null };
      try {
        await this.#conn.coordinator.delete(LEASE_KEY, { previousSeq: s.leaseRevision });
      } catch (cause) {
        if (!isWrongLastSequence(cause)) throw cause; // already taken over: nothing to release
      }
    });
  }

  /** Stops the loop and closes the connection (releasing first if asked). */
  async close({ release = false }: { release?: boolean } = {}): Promise<void> {
    if (release) await this.release();
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#chain;
    await this.#conn.close();
  }
}
