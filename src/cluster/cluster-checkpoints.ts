/**
 * Checkpoint coordination of a cluster job, on the coordinator instance (the lease holder): the
 * messages of the run's subjects in, what to publish and commit out. No NATS here: `cluster-job.ts`
 * wires it to the subjects and to the lease, so scripted event sequences test it
 * (test/unit/cluster/cluster-checkpoints.test.ts).
 *
 * Protocol, per run (`ClusterAssignment.run`), on core NATS subjects `weir.cluster.<name>.<run>.*`:
 * - members → coordinator (`up`): `ready` (all its tasks run), `ack` (task, checkpoint, its state
 *   handles), `decline`, `ended` (a task's input ended), `done` (its tasks finished), `failed`;
 * - coordinator → members (`ctl`): `trigger` (id, final: every task, else the sources), `complete`,
 *   `abort`, `fail`.
 * A checkpoint completes when every task of the assignment acknowledged it. The commit point is
 * `commit('checkpoint', …)` through the lease — a fenced write, refused once another instance
 * took the lease over — and only after it succeeded is `complete` published, upon which the sinks
 * commit. One checkpoint at a time; once every task's input ended, the final one (`final`, every
 * task triggered, each task ends after it completed). A decline or a timeout aborts the pending
 * checkpoint (the next tick triggers another one), and so does a commit refused before its
 * commit point: chunks it references were discarded (shared-dir-retention.ts), or its record is
 * too long for a NATS message (cluster-record-limit.ts) — then `abort` carries `rebase` and every
 * task's keyed backends take a full snapshot next, so the next record is short again.
 *
 * Stop-with-savepoint (cluster-savepoint.ts carries it out): {@link ClusterCheckpoints.triggerSavepoint}
 * takes the next checkpoint as a savepoint (barriers typed `savepoint`) and, once it committed,
 * triggers nothing more — no periodic checkpoint, no final one — so no sink commits output the
 * savepoint does not cover (as `JobCheckpointing.savepoint` does for a job of one process).
 *
 * Delivery: the subjects are core NATS (at most once). Every handler is idempotent, so the same
 * facts may also arrive from a member's heartbeat report (run-status.ts), which repeats `ready`,
 * `ended`, `done` and `failed` until the run ends; a lost `ack` or `decline` costs its checkpoint
 * (timed out, the next one follows). The other way, `complete` is also read from the committed
 * `checkpoint` record and `fail` from the committed `outcome` record by every member
 * (run-control.ts). A member that leaves the cluster gracefully (`left`, seen in the membership)
 * before its part ended fails the run: its `failed` was lost, or it was cancelled. After a
 * savepoint committed the members stop: a leave then fails nothing.
 */

import {
  allSourcesEnded,
  calculateCheckpointPlan,
  lateTriggersOnInputEnd,
} from '../coordinator/checkpoint-plan.js';
import type { FailureKind } from '../errors.js';
import type { TaskSnapshotHandles } from '../protocol/task-deployment.js';
import type { SavepointCoordinatorMessage, SavepointMemberMessage } from './savepoint-messages.js';

export type MemberMessage =
  | { readonly type: 'ready'; readonly member: string }
  | {
      readonly type: 'ack';
      readonly member: string;
      readonly checkpointId: number;
      readonly task: string;
      readonly state: TaskSnapshotHandles;
      readonly bytes: number;
    }
  | {
      readonly type: 'decline';
      readonly member: string;
      readonly checkpointId: number;
      readonly task: string;
      readonly message: string;
    }
  | { readonly type: 'ended'; readonly member: string; readonly task: string }
  | { readonly type: 'done'; readonly member: string }
  | {
      readonly type: 'failed';
      readonly member: string;
      readonly message: string;
      /** The failure's kind (errors.ts); a `fatal` one is never restarted. Default `task`. */
      readonly kind?: FailureKind;
    }
  /** Not on the wire: the membership saw the member delete its key (a graceful leave). */
  | { readonly type: 'left'; readonly member: string }
  /** Stop-with-savepoint's messages (cluster-savepoint.ts). */
  | SavepointMemberMessage;

export type CoordinatorMessage =
  | {
      readonly type: 'trigger';
      readonly checkpointId: number;
      readonly timestamp: number;
      readonly final: boolean;
      /** A savepoint (stop-with-savepoint): barriers typed `savepoint`. Absent: a checkpoint. */
      readonly savepoint?: boolean;
      /** The task keys to trigger directly (checkpoint-plan.ts): running sources and ended tasks; all for `final`. */
      readonly tasks: readonly string[];
    }
  | { readonly type: 'complete'; readonly checkpointId: number }
  | {
      readonly type: 'abort';
      readonly checkpointId: number;
      readonly reason: string;
      /** The keyed backends' next snapshot is full (the record was too long: cluster-record-limit.ts). */
      readonly rebase?: boolean;
    }
  | { readonly type: 'fail'; readonly member: string; readonly message: string }
  /**
   * The coordinator lost its lease, or instances joined (join-rebalance.ts): every member ends the
   * run and waits for the next assignment (over every live member, restoring the last committed
   * checkpoint).
   */
  | { readonly type: 'restart'; readonly reason: string }
  /** Stop-with-savepoint's messages (cluster-savepoint.ts). */
  | SavepointCoordinatorMessage;

/** The committed record of a completed checkpoint (the coordinator bucket's `checkpoint` key). */
export interface ClusterCheckpointRecord {
  readonly run: string;
  /** The job's first run id: a restore takes only a record of its own job. */
  readonly lineage: string;
  readonly checkpointId: number;
  readonly final: boolean;
  readonly completedAt: number;
  /** Per task key, its state handles (chunks in the shared checkpoint directory). */
  readonly tasks: Readonly<Record<string, TaskSnapshotHandles>>;
}

/**
 * What the commit of a completed checkpoint did: `aborted` — refused before its commit point,
 * nothing committed (`reason` says why); with `rebase`, because of the incremental chains it
 * names (a record too long to commit): the abort tells every task to start its chains over.
 */
export type ClusterCommitOutcome =
  | { readonly state: 'committed' }
  | { readonly state: 'aborted'; readonly reason: string; readonly rebase?: boolean };

export interface ClusterCheckpointsOptions {
  readonly run: string;
  readonly lineage?: string;
  /** Default 1; after a restart, past every id used before. */
  readonly firstCheckpointId?: number;
  readonly members: readonly string[];
  /** Every task key of the assignment. */
  readonly tasks: readonly string[];
  /** The source tasks among them. */
  readonly sources: readonly string[];
  readonly timeoutMs: number;
  readonly publish: (m: CoordinatorMessage) => void;
  /**
   * The fenced commit (CoordinatorLease.commit); a rejection fails the job. `aborted`: nothing
   * was committed and the checkpoint cannot be (shared-dir-retention.ts:
   * chunks it references were discarded): it is aborted like a timed-out one.
   */
  readonly commit: (record: ClusterCheckpointRecord) => Promise<ClusterCommitOutcome>;
  readonly onCompleted?: (record: ClusterCheckpointRecord, bytes: number, durationMs: number) => void;
  /** The job failed (a member failed, a commit was refused): every member is told with `fail`. */
  readonly onFailed: (message: string) => void;
  /** Every member finished after the final checkpoint. */
  readonly onFinished: () => void;
  /**
   * A member's execution failed by itself (once per member): the caller decides between a restart
   * and failing the job (its restart strategy). Without it, the job fails.
   */
  readonly onMemberFailed?: (member: string, message: string, kind: FailureKind) => void;
  readonly now?: () => number;
}

interface Pending {
  readonly checkpointId: number;
  readonly final: boolean;
  readonly savepoint: boolean;
  readonly startedAt: number;
  readonly waiting: Set<string>;
  readonly triggered: Set<string>;
  readonly handles: Record<string, TaskSnapshotHandles>;
  bytes: number;
  committing: boolean;
}

export class ClusterCheckpoints {
  readonly #o: ClusterCheckpointsOptions;
  readonly #now: () => number;
  readonly #ready = new Set<string>();
  readonly #ended = new Set<string>();
  readonly #done = new Set<string>();
  #pending: Pending | null = null;
  #nextId = 1;
  #finalCompleted = false;
  #finished = false;
  #failed = false;
  /** A savepoint was asked for and not yet triggered, or is pending: settled when it commits or aborts. */
  #savepoint: { resolve(r: ClusterCheckpointRecord): void; reject(e: Error): void } | null = null;
  /** A savepoint committed: nothing is triggered any more (the job stops). */
  #stopping = false;
  readonly #memberFailed = new Set<string>();
  /** Completed checkpoint ids, in order. */
  readonly completed: number[] = [];

  constructor(o: ClusterCheckpointsOptions) {
    this.#o = o;
    this.#now = o.now ?? (() => Date.now());
    this.#nextId = o.firstCheckpointId ?? 1;
  }

  /** The id the next checkpoint gets. */
  get nextId(): number {
    return this.#nextId;
  }

  /** Every member reported `ready`: periodic checkpoints may start. */
  get running(): boolean {
    return this.#ready.size === this.#o.members.length;
  }

  get pendingId(): number | null {
    return this.#pending?.checkpointId ?? null;
  }

  /** A completed checkpoint's record is being committed (its outcome is not known yet). */
  get committing(): boolean {
    return this.#pending?.committing === true;
  }

  /** Every source ended (only the final checkpoint follows), or the final checkpoint is pending or done. */
  get finishing(): boolean {
    return (
      this.#finalCompleted || this.#pending?.final === true || allSourcesEnded(this.#o.sources, this.#ended)
    );
  }

  onMessage(m: MemberMessage): void {
    if (this.#failed) return;
    switch (m.type) {
      case 'ready':
        this.#ready.add(m.member);
        return;
      case 'ended': {
        this.#ended.add(m.task);
        // It may have ended without the pending checkpoint's barrier: trigger it directly.
        const p = this.#pending;
        if (
          p &&
          lateTriggersOnInputEnd(m.task, [
            { checkpointId: p.checkpointId, notYetAcknowledged: p.waiting, triggered: p.triggered },
          ]).length > 0
        ) {
          p.triggered.add(m.task);
          this.#o.publish({
            type: 'trigger',
            checkpointId: p.checkpointId,
            timestamp: Date.now(),
            final: p.final,
            ...(p.savepoint ? { savepoint: true } : {}),
            tasks: [m.task],
          });
        }
        this.#maybeFinal();
        return;
      }
      case 'ack': {
        const p = this.#pending;
        if (!p || p.checkpointId !== m.checkpointId || !p.waiting.delete(m.task)) return;
        p.handles[m.task] = m.state;
        p.bytes += m.bytes;
        if (p.waiting.size === 0) void this.#complete(p);
        return;
      }
      case 'decline': {
        const p = this.#pending;
        if (!p || p.checkpointId !== m.checkpointId) return;
        this.#abort(p, `declined by ${m.task}: ${m.message}`);
        return;
      }
      case 'done':
        this.#done.add(m.member);
        this.#maybeFinished();
        return;
      case 'failed': {
        if (this.#memberFailed.has(m.member)) return;
        this.#memberFailed.add(m.member);
        if (this.#o.onMemberFailed) this.#o.onMemberFailed(m.member, m.message, m.kind ?? 'task');
        else this.fail(`instance ${m.member} failed: ${m.message}`, m.member);
        return;
      }
      case 'left': {
        if (this.#done.has(m.member) || !this.#o.members.includes(m.member)) return;
        // A savepoint committed: every member stops (cluster-savepoint.ts), a leave is part of it.
        if (this.#stopping) return;
        const p = this.#pending;
        // After every task acknowledged the final checkpoint its tasks only wait for `complete`
        // (which they may read from the committed record before this commit returns): the member
        // finished, its `done` was lost or overtaken by its leave.
        if (this.#finalCompleted || (p?.final === true && p.committing)) {
          this.#done.add(m.member);
          this.#maybeFinished();
          return;
        }
        this.fail(
          `instance ${m.member} left the cluster before its part of the run ended (cancelled, or its failure report was lost)`,
          m.member,
        );
        return;
      }
      case 'savepoint':
      case 'stopped':
        return; // cluster-savepoint.ts
      default: {
        const unreachable: never = m;
        throw new Error(`unknown member message ${JSON.stringify(unreachable)}`);
      }
    }
  }

  #maybeFinished(): void {
    if (this.#finished || !this.#finalCompleted || this.#done.size < this.#o.members.length) return;
    this.#finished = true;
    this.#o.onFinished();
  }

  /** The periodic tick: triggers a checkpoint when none is pending, aborts one past its timeout. */
  tick(): void {
    if (this.#failed || !this.running || this.#finalCompleted || this.#stopping) return;
    const p = this.#pending;
    if (p) {
      if (!p.committing && this.#now() - p.startedAt > this.#o.timeoutMs)
        this.#abort(p, `timed out after ${this.#o.timeoutMs} ms`);
      return;
    }
    if (this.#savepoint) this.#trigger(false, true);
    else if (this.#allEnded()) this.#maybeFinal();
    // Once every source ended, only the final checkpoint follows (as in job-checkpointing.ts).
    else if (!allSourcesEnded(this.#o.sources, this.#ended)) this.#trigger(false);
  }

  /**
   * Takes the next checkpoint as a savepoint (at once when none is pending, else after the pending
   * one) and resolves with its committed record; from then on nothing is triggered any more. Rejects
   * when it is declined or times out (periodic checkpoints go on), or when the job cannot take one:
   * another savepoint is under way, every task's input ended (the final checkpoint ends the job),
   * or the run failed.
   */
  triggerSavepoint(): Promise<ClusterCheckpointRecord> {
    const refuse = (why: string) => Promise.reject(new Error(`no savepoint: ${why}`));
    if (this.#failed) return refuse('the run failed or restarts');
    if (this.#savepoint || this.#stopping) return refuse('another stop-with-savepoint is under way');
    if (this.#finalCompleted || this.#pending?.final || this.#allEnded())
      return refuse('every input ended: the job is finishing with its final checkpoint');
    const done = new Promise<ClusterCheckpointRecord>((resolve, reject) => {
      this.#savepoint = { resolve, reject };
    });
    if (!this.#pending && this.running) this.#trigger(false, true);
    return done;
  }

  /** After a savepoint that could not be used (its copy failed): periodic checkpoints go on. */
  resume(): void {
    this.#stopping = false;
  }

  /** Stops coordinating this run without telling anyone (every member ends it by itself: a restart). */
  stop(): void {
    this.#failed = true;
    this.#savepoint?.reject(new Error('no savepoint: the run ended'));
    this.#savepoint = null;
  }

  /**
   * A member was lost (timed out) after the final checkpoint completed: nothing to wait for and
   * nothing to restart, so the job fails, unless it had reported `done` (or the job finished).
   */
  memberLost(member: string, message: string): void {
    if (this.#done.has(member) || this.#finished) return;
    this.fail(message, member);
  }

  /** Fails the job on every member (once; not after it finished). */
  fail(message: string, member = 'coordinator'): void {
    if (this.#failed || this.#finished) return;
    this.#failed = true;
    this.#savepoint?.reject(new Error(`no savepoint: ${message}`));
    this.#savepoint = null;
    this.#o.publish({ type: 'fail', member, message });
    this.#o.onFailed(message);
  }

  #allEnded(): boolean {
    return this.#ended.size === this.#o.tasks.length;
  }

  #maybeFinal(): void {
    if (
      this.#failed ||
      this.#stopping ||
      !this.running ||
      this.#pending ||
      this.#finalCompleted ||
      !this.#allEnded()
    )
      return;
    this.#trigger(true);
  }

  #trigger(final: boolean, savepoint = false): void {
    const checkpointId = this.#nextId++;
    const plan = calculateCheckpointPlan({
      kind: final ? 'final' : savepoint ? 'savepoint' : 'periodic',
      tasks: this.#o.tasks,
      sources: this.#o.sources,
      inputEnded: this.#ended,
    });
    this.#pending = {
      checkpointId,
      final,
      savepoint,
      startedAt: this.#now(),
      waiting: new Set(plan.tasksToAcknowledge),
      triggered: new Set(plan.tasksToTrigger),
      handles: {},
      bytes: 0,
      committing: false,
    };
    this.#o.publish({
      type: 'trigger',
      checkpointId,
      timestamp: Date.now(),
      final,
      ...(savepoint ? { savepoint: true } : {}),
      tasks: plan.tasksToTrigger,
    });
  }

  #abort(p: Pending, reason: string, rebase = false): void {
    if (p.committing) return;
    this.#pending = null;
    this.#o.publish({ type: 'abort', checkpointId: p.checkpointId, reason, ...(rebase ? { rebase } : {}) });
    if (p.savepoint) {
      this.#savepoint?.reject(new Error(`savepoint ${p.checkpointId} aborted: ${reason}`));
      this.#savepoint = null;
      return;
    }
    // A final checkpoint is retried at once: every task waits for it.
    if (p.final) this.#maybeFinal();
  }

  async #complete(p: Pending): Promise<void> {
    p.committing = true;
    const record: ClusterCheckpointRecord = {
      run: this.#o.run,
      lineage: this.#o.lineage ?? this.#o.run,
      checkpointId: p.checkpointId,
      final: p.final,
      completedAt: Date.now(),
      tasks: p.handles,
    };
    let outcome: ClusterCommitOutcome;
    try {
      outcome = await this.#o.commit(record);
    } catch (e) {
      this.fail(`checkpoint ${p.checkpointId} not committed: ${(e as Error).message}`);
      return;
    }
    if (this.#failed) return;
    if (outcome.state === 'aborted') {
      // Nothing was committed: abort it as a decline would (#abort skips a committing one).
      p.committing = false;
      this.#abort(p, outcome.reason, outcome.rebase === true);
      return;
    }
    this.#pending = null;
    this.completed.push(p.checkpointId);
    this.#o.onCompleted?.(record, p.bytes, this.#now() - p.startedAt);
    this.#o.publish({ type: 'complete', checkpointId: p.checkpointId });
    if (p.savepoint) {
      this.#stopping = true;
      const s = this.#savepoint;
      this.#savepoint = null;
      s?.resolve(record);
    } else if (this.#savepoint) this.#trigger(false, true);
    else if (p.final) {
      this.#finalCompleted = true;
      this.#maybeFinished();
    } else this.#maybeFinal();
  }
}
