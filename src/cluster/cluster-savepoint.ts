/**
 * Stop-with-savepoint of a cluster job (issue 17), asked on ANY instance's job handle
 * (`JobClient.stopWithSavepoint(dir)`). Messages on the run's subjects (cluster-job.ts
 * `runSubjects`), in this order:
 *
 * 1. The asking instance publishes `savepoint { member, requestId, dir }` on `up`
 *    ({@link ClusterSavepointRequests}).
 * 2. The coordinator ({@link SavepointCoordinator}) takes the next checkpoint as a savepoint
 *    (`ClusterCheckpoints.triggerSavepoint`: barriers typed `savepoint`, committed through the
 *    lease's fence like every checkpoint, `complete` published, and nothing triggered after it),
 *    copies it — metadata and every chunk, from the shared checkpoint directory — into `dir` as a
 *    self-contained checkpoint directory (savepoint-copy.ts; `dir` must be readable where it will
 *    be restored), commits the stop as the job's `outcome` record through the lease's fence
 *    (run-control.ts `ClusterJobStop`), then publishes `stop { requestId, checkpointId, path }` on
 *    `ctl`. A savepoint
 *    that is declined, times out or cannot be copied is `savepoint-failed { requestId }` instead,
 *    and the job runs on (periodic checkpoints resume).
 * 3. Every member ({@link MemberStop}) waits until its tasks' committing sinks committed up to the
 *    savepoint (bounded by the checkpoint timeout), reports `stopped { committed }` and waits for
 *    `stopped-all`; no member cancels a task before every member's sinks committed, so a cancel
 *    never cuts a commit elsewhere short through a remote flow.
 * 4. The coordinator, once every member reported (or after the checkpoint timeout), records in
 *    the savepoint that its sinks committed when all did (`sinksCommitted`: a restore commits
 *    nothing again) and publishes `stopped-all`. Each member then cancels its tasks; its `done`
 *    resolves with `status: 'stopped'` and the savepoint, on every instance.
 *
 * Control messages are core NATS (at most once): a lost `savepoint` or answer makes the asker's
 * wait end with an error after a bound; a lost `stopped`/`stopped-all` only costs the
 * `sinksCommitted` mark (members stop after the bound anyway). A lost `stop` costs one read
 * period: every member reads the committed stop back (cluster-job.ts, run-control.ts), and so does
 * an instance that takes the lease over or waits for its next assignment — a member that missed
 * `stop` never runs on past the savepoint, and the job never restarts after it (a run after the
 * savepoint would commit output that a restore of the savepoint commits again). The stop is
 * committed only after the savepoint was copied: a coordinator that dies before that leaves a job
 * that runs on under the next coordinator, and the asker's wait ends with an error.
 */

import { resolve } from 'node:path';
import type { DeployedTask } from '../coordinator/scheduler.js';
import { ClusterError, JobStateError } from '../errors.js';
import type { ExecutionPlan } from '../graph/execution-plan.js';
import { CheckpointStorage } from '../state/storage/checkpoint-storage.js';
import { checkSavepointDir, copyCheckpoint } from '../state/storage/savepoint-copy.js';
import type { ClusterCheckpointRecord, ClusterCheckpoints } from './cluster-checkpoints.js';
import { metadataOfRecord } from './cluster-restore.js';
import type { SavepointCoordinatorMessage, SavepointMemberMessage } from './savepoint-messages.js';

export type { SavepointCoordinatorMessage, SavepointMemberMessage } from './savepoint-messages.js';

/** Where a cluster job's stop-with-savepoint put its savepoint (the shape of a one-process job's). */
export interface ClusterSavepoint {
  readonly checkpointId: number;
  readonly path: string;
}

export interface SavepointCoordinatorOptions {
  readonly checkpoints: ClusterCheckpoints;
  readonly plan: ExecutionPlan;
  readonly members: readonly string[];
  /** The shared checkpoint directory (the savepoint's chunks are read from it). */
  readonly storage: CheckpointStorage;
  readonly publish: (m: SavepointCoordinatorMessage) => void;
  /**
   * Commits the stop (the job's `outcome` record) through the lease's fence before `stop` is
   * published; rejects when the lease was lost (the savepoint then fails, the job runs on).
   */
  readonly commitStop: (stop: { requestId: string; checkpointId: number; path: string }) => Promise<void>;
  readonly timeoutMs: number;
  readonly log: (level: 'info' | 'warn', fields: Record<string, unknown>, msg: string) => void;
}

/** The coordinator's side: one stop-with-savepoint at a time. */
export class SavepointCoordinator {
  readonly #o: SavepointCoordinatorOptions;
  /** The stop under way (from the request to `stopped-all`). */
  #active: {
    readonly requestId: string;
    savepoint: ClusterSavepoint | null;
    readonly stopped: Map<string, boolean>;
    timer: NodeJS.Timeout | null;
    finished: boolean;
  } | null = null;

  constructor(o: SavepointCoordinatorOptions) {
    this.#o = o;
  }

  /** The job's stop is committed (or being committed): its end must not be overwritten by a failure. */
  get stopping(): boolean {
    return this.#stopCommitting;
  }
  #stopCommitting = false;

  onMessage(m: SavepointMemberMessage): void {
    switch (m.type) {
      case 'savepoint':
        if (this.#active) {
          this.#o.publish({
            type: 'savepoint-failed',
            requestId: m.requestId,
            message: 'another stop-with-savepoint is under way',
          });
          return;
        }
        this.#active = {
          requestId: m.requestId,
          savepoint: null,
          stopped: new Map(),
          timer: null,
          finished: false,
        };
        void this.#take(m.requestId, m.dir, m.member);
        return;
      case 'stopped': {
        const a = this.#active;
        if (!a?.savepoint || a.savepoint.checkpointId !== m.checkpointId) return;
        a.stopped.set(m.member, m.committed);
        if (this.#o.members.every((x) => a.stopped.has(x))) void this.#finish();
        return;
      }
      default: {
        const unreachable: never = m;
        throw new Error(`unknown savepoint message ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** Stops waiting (the run ended). */
  close(): void {
    if (this.#active?.timer) clearTimeout(this.#active.timer);
  }

  async #take(requestId: string, dir: string, member: string): Promise<void> {
    const o = this.#o;
    let record: ClusterCheckpointRecord | null = null;
    try {
      const path = resolve(dir);
      checkSavepointDir(path);
      record = await o.checkpoints.triggerSavepoint();
      await copyCheckpoint(o.storage, metadataOfRecord(o.plan, record), path);
      const savepoint = { checkpointId: record.checkpointId, path };
      this.#stopCommitting = true;
      try {
        await o.commitStop({ requestId, ...savepoint });
      } catch (e) {
        this.#stopCommitting = false;
        throw e;
      }
      this.#active!.savepoint = savepoint;
      o.log(
        'info',
        { checkpointId: record.checkpointId, path, requestedBy: member },
        'savepoint taken; stopping',
      );
      o.publish({ type: 'stop', requestId, ...savepoint });
      // Members that do not answer (their message lost, or they died) cost the `sinksCommitted` mark only.
      this.#active!.timer = setTimeout(() => void this.#finish(), o.timeoutMs);
    } catch (e) {
      // The checkpoint committed but its copy failed: the job runs on, periodic checkpoints resume.
      if (record) o.checkpoints.resume();
      this.#active = null;
      const message = e instanceof Error ? e.message : String(e);
      o.log('warn', { err: message }, 'stop-with-savepoint failed; the job runs on');
      o.publish({ type: 'savepoint-failed', requestId, message });
    }
  }

  async #finish(): Promise<void> {
    const a = this.#active;
    if (!a?.savepoint || a.finished) return;
    a.finished = true;
    if (a.timer) clearTimeout(a.timer);
    const { checkpointId, path } = a.savepoint;
    let sinksCommitted = this.#o.members.every((m) => a.stopped.get(m) === true);
    if (sinksCommitted) {
      // Recorded in the savepoint (and the shared directory's copy of the checkpoint): a restore
      // then commits nothing again. Without the mark a restore commits the savepoint's
      // transactions again, as after any checkpoint.
      try {
        const copy = CheckpointStorage.open(path, { create: false });
        try {
          await copy.markSinksCommitted(checkpointId);
        } finally {
          await copy.close();
        }
        await this.#o.storage.markSinksCommitted(checkpointId);
      } catch (e) {
        sinksCommitted = false;
        this.#o.log(
          'warn',
          { err: (e as Error).message },
          'savepoint: recording that its sinks committed failed',
        );
      }
    } else
      this.#o.log(
        'warn',
        { checkpointId, answered: [...a.stopped.keys()] },
        'savepoint: not every member confirmed its sinks committed; a restore commits them again',
      );
    this.#o.publish({ type: 'stopped-all', checkpointId, path, sinksCommitted });
  }
}

/**
 * A member's side of one run's stop: on `stop`, wait for the local sinks' commits, report, wait
 * for `stopped-all`, cancel. `savepoint` is set from `stop` on: the run then ends as `stopped`
 * whatever its execution's outcome.
 */
export class MemberStop {
  savepoint: ClusterSavepoint | null = null;
  #stoppedAll: (() => void) | null = null;
  readonly #o: MemberStopOptions;

  constructor(o: MemberStopOptions) {
    this.#o = o;
  }

  onControl(m: SavepointCoordinatorMessage): void {
    switch (m.type) {
      case 'stop':
        if (this.savepoint) return;
        this.savepoint = { checkpointId: m.checkpointId, path: m.path };
        void this.#stop(m.checkpointId);
        return;
      case 'stopped-all':
        this.#stoppedAll?.();
        return;
      case 'savepoint-failed':
        return; // ClusterSavepointRequests
      default: {
        const unreachable: never = m;
        throw new Error(`unknown savepoint message ${JSON.stringify(unreachable)}`);
      }
    }
  }

  async #stop(checkpointId: number): Promise<void> {
    const o = this.#o;
    const stoppedAll = new Promise<void>((r) => {
      this.#stoppedAll = r;
    });
    const committed = await within(
      o.timeoutMs,
      Promise.all(
        o.tasks().map((t) =>
          Promise.resolve()
            .then(() => t.control.awaitCommitted(checkpointId))
            // The task ended (its port closed): what it did not commit is left to a restore.
            .catch(() => false),
        ),
      ).then((oks) => oks.every(Boolean)),
      false,
    );
    o.up({ type: 'stopped', member: o.member, checkpointId, committed });
    // The coordinator answers within its timeout after `stop`; past twice that it is gone.
    await within(2 * o.timeoutMs, stoppedAll, undefined);
    await o.cancel();
  }
}

export interface MemberStopOptions {
  readonly member: string;
  readonly up: (m: SavepointMemberMessage) => void;
  readonly tasks: () => readonly DeployedTask[];
  readonly cancel: () => Promise<void>;
  readonly timeoutMs: number;
}

/**
 * The asking side, one per instance for all its runs: `JobClient.stopWithSavepoint` of a cluster
 * job calls {@link request}; cluster-job.ts attaches each run and routes the coordinator's answers.
 */
export class ClusterSavepointRequests {
  #run: { readonly member: string; readonly send: (m: SavepointMemberMessage) => void } | null = null;
  #runWaiters: (() => void)[] = [];
  #ended: string | null = null;
  readonly #pending = new Map<
    string,
    { resolve(s: ClusterSavepoint): void; reject(e: Error): void; timer: NodeJS.Timeout }
  >();
  readonly #name: string;
  /** How long an asker waits for the coordinator's answer (`stop` or `savepoint-failed`). */
  readonly #answerMs: number;

  constructor(name: string, checkpointTimeoutMs: number) {
    this.#name = name;
    // A pending periodic checkpoint, then the savepoint itself, each bounded by the timeout; then the copy.
    this.#answerMs = 3 * checkpointTimeoutMs + 10_000;
  }

  /** A run is deployed: requests go to its coordinator. */
  attach(member: string, send: (m: SavepointMemberMessage) => void): void {
    this.#run = { member, send };
    for (const w of this.#runWaiters.splice(0)) w();
  }

  /** The run ended (a restart): pending requests fail; the caller may ask again. */
  detach(reason: string): void {
    this.#run = null;
    this.#rejectAll(reason);
  }

  /** The job ended on this instance: every request fails from now on. */
  end(reason: string): void {
    this.#ended = reason;
    this.#run = null;
    this.#rejectAll(reason);
    for (const w of this.#runWaiters.splice(0)) w();
  }

  /**
   * Asks the coordinator for a stop-with-savepoint into `dir`; resolves once the savepoint exists
   * and the stop began (`stop`).
   * @throws InvalidOptionError when `dir` is not empty; ClusterError when the coordinator refused
   *   or did not answer; JobStateError when the job ended.
   */
  async request(dir: string): Promise<ClusterSavepoint> {
    const path = resolve(dir);
    checkSavepointDir(path);
    while (this.#run === null && this.#ended === null)
      await new Promise<void>((r) => this.#runWaiters.push(r));
    if (this.#ended !== null || this.#run === null)
      throw new JobStateError(`stopWithSavepoint: the job has already ended (${this.#ended})`);
    const requestId = `${this.#run.member}-${Math.floor(Math.random() * 2 ** 32).toString(36)}`;
    const answer = new Promise<ClusterSavepoint>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(requestId);
        reject(
          new ClusterError(
            this.#name,
            'stop-with-savepoint',
            `the coordinator did not answer within ${this.#answerMs} ms (the request or its answer was lost, or the coordinator is gone); the job may still stop`,
          ),
        );
      }, this.#answerMs);
      this.#pending.set(requestId, { resolve, reject, timer });
    });
    this.#run.send({ type: 'savepoint', member: this.#run.member, requestId, dir: path });
    return answer;
  }

  onControl(m: SavepointCoordinatorMessage): void {
    if (m.type === 'stopped-all') return;
    const p = this.#pending.get(m.requestId);
    if (!p) return;
    this.#pending.delete(m.requestId);
    clearTimeout(p.timer);
    if (m.type === 'stop') p.resolve({ checkpointId: m.checkpointId, path: m.path });
    else p.reject(new ClusterError(this.#name, 'stop-with-savepoint', m.message));
  }

  #rejectAll(reason: string): void {
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      this.#pending.delete(id);
      p.reject(new ClusterError(this.#name, 'stop-with-savepoint', reason));
    }
  }
}

/** `p`, or `fallback` once `ms` passed. */
async function within<T>(ms: number, p: Promise<T>, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((r) => (timer = setTimeout(() => r(fallback), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}
