/**
 * One instance of a job formed by several processes (`startJob/runJob(job, { cluster })`, issue
 * 17). Every instance runs the same job module with the same options:
 *
 * 1. It joins the cluster's membership and contends for the coordinator lease.
 * 2. The lease holder waits until `instances` members are live, writes a probe file into the
 *    shared checkpoint directory, computes the assignment over the live members (assignment.ts)
 *    and publishes it with a fenced commit (`assignment` in the coordinator bucket).
 * 3. Every instance named in it checks that it can read the probe (the checkpoint directory must
 *    be the same directory everywhere), then deploys its share through the scheduler: rings
 *    between its own subtasks, remote flows to the others' (`Execution`'s `cluster` option).
 * 4. Checkpoints are coordinated over core NATS subjects of the run (cluster-checkpoints.ts): the
 *    coordinator triggers, each instance relays to its tasks and reports acknowledgements, input
 *    ends, its finish or failure; a checkpoint completes only once its record was committed
 *    through the lease's fence, then `complete` makes the sinks commit.
 * 5. The job ends when every instance's tasks finished after the final checkpoint. A member of
 *    the assignment that times out, or the coordinator losing its lease, ends the run: the
 *    survivors restart over the live members from the last committed checkpoint (a new run, new
 *    flow names). A task's own failure is reported to the coordinator, which restarts the run the
 *    same way or fails the job, as the restart strategy says (cluster-failover.ts); a cancel fails
 *    the job on every instance.
 * 6. No control message is trusted to arrive (core NATS is at most once): members repeat their
 *    reports in their heartbeats (run-status.ts), and read the coordinator's committed records
 *    back (run-control.ts).
 * 7. Stop-with-savepoint from any instance, and `restoreFrom` (a savepoint or retained checkpoint
 *    directory): cluster-savepoint.ts and cluster-restore.ts; this loop only routes to them.
 *
 * `JobResult.sinks` of an instance holds what ITS sink subtasks delivered; the job's output is the
 * union over the instances.
 *
 * One file (over 400 lines): steps 1–5 are one run loop over one membership, lease and
 * connection, and each restart re-enters it; the pure parts live apart (assignment.ts for the
 * placement, cluster-checkpoints.ts for the checkpoint protocol's decisions).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Subscription } from '@nats-io/transport-node';
import type { LogLevel } from '../api/logger.js';
import type { CompletedCheckpointStats } from '../coordinator/job-events.js';
import type { ResolvedJobOptions } from '../coordinator/job-options.js';
import { createRestartStrategy } from '../coordinator/restart-strategy.js';
import { type CheckpointDirState, failureKindOf } from '../coordinator/restore-planning.js';
import { type DeployedTask, Execution, type ExecutionOutcome, TaskPool } from '../coordinator/scheduler.js';
import { planTaskRestores } from '../coordinator/task-restore-planner.js';
import { ClusterError, type FailureKind, JobFailedError, TaskFailureError } from '../errors.js';
import type { ExecutionPlan } from '../graph/execution-plan.js';
import { operatorStatePackr } from '../protocol/operator-state-codec.js';
import type {
  OperatorMetrics,
  TaskCheckpointConfig,
  TaskEvent,
  TaskRestoreState,
} from '../protocol/task-deployment.js';
import type { CheckpointMetadata } from '../state/storage/checkpoint-metadata.js';
import type { CheckpointStorage } from '../state/storage/checkpoint-storage.js';
import { assertNever } from '../util/assert-never.js';
import { assignSubtasks, type ClusterAssignment, placementOf, tasksOf } from './assignment.js';
import {
  type ClusterCheckpointRecord,
  ClusterCheckpoints,
  type CoordinatorMessage,
  type MemberMessage,
} from './cluster-checkpoints.js';
import { type ClusterConnection, openCluster } from './cluster-connection.js';
import { catchUpRestarts, decideMemberFailure } from './cluster-failover.js';
import { ClusterMembership } from './cluster-membership.js';
import { ASSIGNMENT_KEY, CHECKPOINT_KEY } from './cluster-options.js';
import { commitWithinLimit, recordLimit } from './cluster-record-limit.js';
import {
  type ClusterRestoreDecision,
  type DirectoryRestore,
  decideClusterRestore,
  metadataOfRecord,
  planDirectoryRestore,
  restoreNotice,
  sharedDirAtOpen,
} from './cluster-restore.js';
import {
  type ClusterSavepoint,
  type ClusterSavepointRequests,
  MemberStop,
  SavepointCoordinator,
  type SavepointMemberMessage,
} from './cluster-savepoint.js';
import { CoordinatorLease } from './coordinator-lease.js';
import { watchJoiners } from './join-watcher.js';
import { publishMemberStatus } from './member-status.js';
import {
  type ClusterJobEnd,
  type ClusterJobOutcome,
  initialRunControl,
  noteComplete,
  type RunControlAction,
  reconcileRunControl,
} from './run-control.js';
import { initialRunStatus, type MemberRunStatus, runStatusMessages } from './run-status.js';
import { openSharedCheckpointStorage } from './shared-checkpoint-storage.js';
import { SharedDirRetention } from './shared-dir-retention.js';

export { ASSIGNMENT_KEY, CHECKPOINT_KEY };
/** The committed end of the job: failed, or stopped with a savepoint (run-control.ts `ClusterJobEnd`). */
export const OUTCOME_KEY = 'outcome';

/**
 * The job client as its cluster run sees it. Structural on purpose: the client imports this module
 * (lazily, only for a cluster job), so naming its class here would be an import cycle.
 */
export interface JobClient {
  readonly plan: ExecutionPlan;
  readonly options: ResolvedJobOptions;
  log(level: LogLevel, fields: Record<string, unknown>, msg: string): void;
  recordCheckpoint(stats: CompletedCheckpointStats): void;
  emit(event: 'deployed' | 'restarting' | 'restored' | 'fresh-start', payload: unknown): boolean;
  /** Logs a problem that does not fail the job and emits it as `warning`. */
  warn(error: unknown): void;
  /** The latest live sample per local subtask (member-status.ts publishes them). */
  subtaskMetrics(): ReadonlyMap<string, readonly OperatorMetrics[]>;
}

/** How often an instance publishes its subtasks' figures for `weir cluster status` (member-status.ts). */
const STATUS_EVERY_MS = 1000;

/** What JobClient hands its cluster run (its private parts it needs). */
export interface ClusterJobHost {
  readonly jobModule: string;
  onTaskEvent(task: DeployedTask, event: TaskEvent): void;
  /** The execution now running (so `cancel()` reaches it). */
  onExecution(execution: Execution): void;
  /** Where `JobClient.stopWithSavepoint` asks; each run attaches to it. */
  readonly savepoints: ClusterSavepointRequests;
  /** A worker error that belongs to no running execution (between deployments). */
  onStrayError(error: TaskFailureError): void;
}

interface PublishedAssignment extends ClusterAssignment {
  readonly coordinator: string;
  readonly epoch: number;
  /** The run id of the job's first deployment: checkpoint records of this job carry it. */
  readonly lineage: string;
  readonly attempt: number;
  /**
   * The checkpoint every task restores, or null for a fresh start: the committed `checkpoint`
   * record of this lineage, or (`dir` set) a checkpoint of that directory (`restoreFrom`).
   */
  readonly restore: { readonly checkpointId: number; readonly dir?: string } | null;
  /** The first checkpoint id of this run (ids keep increasing over restarts). */
  readonly nextCheckpointId: number;
  /** Restarts the restart strategy granted so far (after tasks' own failures; cluster-failover.ts). */
  readonly taskRestarts?: number;
}

/** How the previous run of this instance ended, for the lease holder's next assignment. */
interface PreviousRun {
  readonly assignment: PublishedAssignment;
  /**
   * `restart`: a member timed out or the coordinator lost its lease (reassign at once);
   * `decided`: ended by a member's own failure: reassign only once the coordinator's decision
   * granted a restart (`restartGranted`) or the lease changed hands (the deciding coordinator is gone).
   */
  readonly ended: 'restart' | 'decided';
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The run's subjects: `weir.cluster.<name>.<run>.up` (members → coordinator) and `.ctl`. */
export function runSubjects(name: string, run: string): { up: string; ctl: string } {
  return { up: `weir.cluster.${name}.${run}.up`, ctl: `weir.cluster.${name}.${run}.ctl` };
}

/**
 * Runs this process's part of the job to its end. Resolves with its tasks' final metrics, or
 * null when the execution was cancelled; rejects with the job's failure.
 */
export async function runClusterInstance(
  client: JobClient,
  host: ClusterJobHost,
): Promise<
  | { metrics: ReadonlyMap<string, readonly OperatorMetrics[]>; restarts: number; stopped?: undefined }
  | { stopped: ClusterSavepoint; restarts: number }
  | null
> {
  const o = client.options;
  const cluster = o.cluster!;
  const c = o.checkpointing!;
  const log = (level: 'info' | 'warn', fields: Record<string, unknown>, msg: string) =>
    client.log(level, { cluster: cluster.name, ...fields }, msg);
  // The shared directory as `restoreFrom` finds it, looked at before this instance creates its
  // store (a refused directory throws here).
  const atOpen = sharedDirAtOpen(o, cluster.checkpointDir);
  // Created (or opened) here first, as JobCheckpointing does for a job of one process: tasks open
  // it without validating.
  const storage = await openSharedCheckpointStorage(cluster.checkpointDir);
  // Every commit goes through it: checked against, and serialised with, `retain`'s discards
  // (shared-dir-retention.ts says why incremental checkpoints need the check).
  const retention = new SharedDirRetention(storage, c.retain, log);
  // `restoreFrom` decided on every instance before it joins: a refusal (a damaged newest
  // checkpoint, a misfit) fails every instance alike and at once; were it only the coordinator's,
  // the others would wait for `instances` members forever. Decided after this instance's own
  // store is open: another instance may be creating the store of a new directory right now. The
  // coordinator decides again when it assigns (the checkpoint it names is the one restored).
  let firstDecision: ClusterRestoreDecision;
  try {
    firstDecision =
      atOpen?.kind === 'missing' || atOpen?.kind === 'empty'
        ? { restore: null, skipped: [] }
        : decideClusterRestore(client.plan, o, cluster.checkpointDir);
  } catch (e) {
    await storage.close();
    throw e;
  }
  let restoreTold = false;
  // One set of worker threads for every deployment of this instance, as a local job's attempts
  // share theirs: a restart (a member lost or joined) reuses the threads whose tasks stopped
  // cleanly, so redeploying does not load weir, lmdb and the job module again in new threads
  // (the takeover benchmark measured 2.7–4.1 s of CPU per survivor doing that). Sized for the
  // whole plan: after failures one instance may run every subtask; threads start lazily.
  const pool = new TaskPool(
    client.plan.vertices.reduce((n, v) => n + v.parallelism, 0),
    { onStrayError: (e) => host.onStrayError(e), workerNice: o.workerNice },
  );
  const membership = await ClusterMembership.join(cluster);
  const id = membership.instanceId;
  membership.on('error', (e) => log('warn', { err: e.message }, 'membership'));
  let lease: CoordinatorLease | null = null;
  let conn: ClusterConnection | null = null;
  const subs: Subscription[] = [];
  let tick: NodeJS.Timeout | null = null;
  try {
    lease = await CoordinatorLease.open({ ...cluster, instanceId: id });
    lease.on('error', (e) => log('warn', { err: e.message }, 'lease'));
    lease.start();
    conn = await openCluster(cluster, { create: true, role: `${id}:job` });
    log('info', { instance: id }, 'joined; waiting for the assignment');
    const strategy = createRestartStrategy(o.restartStrategy);
    /** The restart this instance granted as coordinator, for the run that failed. */
    let restartGranted: { run: string; notBefore: number } | null = null;
    let previous: PreviousRun | null = null;
    // Past every checkpoint whose metadata the shared directory holds (an earlier job's too): a
    // checkpoint id is never reused in one directory.
    let nextCheckpointId = storage.nextCheckpointId();
    const period = Math.max(20, Math.floor(cluster.timeoutMs / 8));
    for (;;) {
      const awaited = await awaitAssignment(
        client,
        cluster,
        id,
        membership,
        lease,
        conn,
        log,
        previous,
        () => restartGranted,
        nextCheckpointId,
        () => decideClusterRestore(client.plan, o, cluster.checkpointDir).restore,
      );
      if (awaited === 'finished') {
        // Joined a job that ended before it was rebalanced (joiners wait while it finishes).
        log('info', { instance: id }, 'the job finished before this instance was given a share');
        return { metrics: new Map(), restarts: 0 };
      }
      if ('stopped' in awaited) {
        // The job stopped with a savepoint while this instance's run ended (it missed `stop`:
        // its run failed first, or it joined meanwhile): it ends stopped too, never restarts.
        log('info', { instance: id, ...awaited.stopped }, 'the job stopped with a savepoint');
        host.savepoints.end('the job stopped with a savepoint');
        return { stopped: awaited.stopped, restarts: awaited.attempt };
      }
      const { assignment, upstream } = awaited;
      // The job's attempt, not this process's count: an instance that joined a running job
      // deploys first at that job's attempt (its result shows the restart it took part in).
      const attempt = assignment.attempt;
      if (upstream) subs.push(upstream.sub);
      const restore = assignment.restore?.dir
        ? planDirectoryRestore(cluster.name, client.plan, o, assignment.restore as DirectoryRestore)
        : assignment.restore
          ? await readRestore(client, cluster.name, conn, storage, assignment)
          : null;
      const subjects = runSubjects(cluster.name, assignment.run);
      const nc = conn.nc;
      const send = (subject: string, m: MemberMessage | CoordinatorMessage) =>
        nc.publish(subject, encoder.encode(JSON.stringify(m)));
      const up = (m: MemberMessage) => send(subjects.up, m);
      // This member's report of the run, repeated with every heartbeat (run-status.ts).
      let status: MemberRunStatus = initialRunStatus(assignment.run);
      const report = (next: MemberRunStatus) => {
        status = next;
        return membership.setRunStatus(next);
      };
      void report(status);

      // The coordinator side (the instance that published the assignment).
      let coordinatorDone: Promise<void> = Promise.resolve();
      let checkpoints: ClusterCheckpoints | null = null;
      let savepoints: SavepointCoordinator | null = null;
      let stopWatchingJoiners = () => {};
      let execution: Execution | null = null;
      let failure = null as string | null;
      /** The failure is a member that timed out or a restart: restart over the live members. */
      let restartable = false;
      /** The job failed (told by the coordinator, or read from the committed outcome). */
      let jobFailed: ClusterJobOutcome | null = null;
      const failLocal = (message: string) => {
        failure ??= message;
        execution?.fail(
          new TaskFailureError(`cluster "${cluster.name}"`, undefined, message, undefined, {
            failureKind: 'task',
          }),
        );
      };
      const restartLocal = (reason: string) => {
        if (failure === null) restartable = true;
        failLocal(reason);
      };
      const failJob = (outcome: ClusterJobOutcome) => {
        jobFailed ??= outcome;
        failLocal(outcome.message);
      };
      const outcomeOf = (message: string, reason: ClusterJobOutcome['reason']): ClusterJobOutcome => ({
        kind: 'failed',
        lineage: assignment.lineage,
        run: assignment.run,
        message,
        reason,
        restarts: assignment.attempt,
      });
      if (assignment.coordinator === id) {
        const activeLease = lease;
        let finished!: () => void;
        coordinatorDone = new Promise((resolve) => {
          finished = resolve;
        });
        const allTasks = Object.keys(assignment.tasks);
        // The job's end is committed before it is told (`fail` is at most once; run-control.ts).
        const endJob = async (outcome: ClusterJobOutcome) => {
          if (savepoints?.stopping) {
            // The job's stop is committed: it ends stopped on every member, not failed.
            log('warn', { err: outcome.message }, 'a failure while the job stops with a savepoint');
            return;
          }
          await activeLease
            .commit(OUTCOME_KEY, JSON.stringify(outcome))
            .catch((e) => log('warn', { err: (e as Error).message }, 'job outcome not committed'));
          failJob(outcome);
        };
        const cp = new ClusterCheckpoints({
          run: assignment.run,
          lineage: assignment.lineage,
          firstCheckpointId: assignment.nextCheckpointId,
          members: assignment.members,
          tasks: allTasks,
          sources: allTasks.filter(
            (k) => client.plan.vertices[Number(k.split('/')[0])].operators[0].spec.kind === 'source',
          ),
          timeoutMs: c.timeout,
          publish: (m) => send(subjects.ctl, m),
          // The record's length is checked before anything is written: a put past max_payload
          // would fail after the lease's write went out (cluster-record-limit.ts).
          commit: (record) =>
            commitWithinLimit(
              record,
              recordLimit(nc.info?.max_payload, cluster.maxRecordBytes),
              async (encoded) => {
                const outcome = await retention.commit(metadataOfRecord(client.plan, record), () =>
                  activeLease.commit(CHECKPOINT_KEY, encoded),
                );
                return outcome.state === 'missing-chunks'
                  ? { state: 'aborted', reason: `chunk ${outcome.missing[0]} it references was discarded` }
                  : { state: 'committed' };
              },
              (reason, fields) => log('warn', fields, reason),
            ),
          onCompleted: (record, bytes, durationMs) => {
            client.recordCheckpoint(statsOf(record, bytes, durationMs));
            log('info', { checkpointId: record.checkpointId, final: record.final }, 'checkpoint committed');
          },
          onFailed: (message) => {
            void endJob(outcomeOf(message, 'fatal-error')).then(() => finished());
          },
          onMemberFailed: (member, message, kind) => {
            catchUpRestarts(strategy, assignment.taskRestarts ?? 0, Date.now());
            const d = decideMemberFailure(kind, strategy, Date.now());
            const what = `instance ${member} failed: ${message.split('\n')[0]}`;
            if (d.kind === 'restart') {
              cp.stop();
              restartGranted = { run: assignment.run, notBefore: Date.now() + d.delayMs };
              const reason = `${what}; restart ${d.attempt} of the restart strategy in ${d.delayMs} ms`;
              log('warn', { member, delayMs: d.delayMs }, reason);
              send(subjects.ctl, { type: 'restart', reason });
              restartLocal(reason);
              finished();
              return;
            }
            const first =
              d.reason === 'fatal-error'
                ? `job failed with a fatal error (not restarted; restarting cannot fix it) after ${assignment.attempt} restart(s): ${what}`
                : `job failed after ${assignment.attempt} restart(s): ${what}`;
            cp.stop();
            void endJob(outcomeOf(first, d.reason)).then(() => {
              send(subjects.ctl, { type: 'fail', member: 'coordinator', message: first });
              finished();
            });
          },
          onFinished: () => finished(),
        });
        checkpoints = cp;
        const sp = new SavepointCoordinator({
          checkpoints: cp,
          plan: client.plan,
          members: assignment.members,
          storage,
          publish: (m) => send(subjects.ctl, m),
          commitStop: async (stop) => {
            const end: ClusterJobEnd = {
              kind: 'stopped',
              lineage: assignment.lineage,
              run: assignment.run,
              ...stop,
            };
            await activeLease.commit(OUTCOME_KEY, JSON.stringify(end));
          },
          timeoutMs: c.timeout,
          log,
        });
        savepoints = sp;
        upstream!.attach((m) => {
          if (m.type === 'savepoint' || m.type === 'stopped') sp.onMessage(m);
          else cp.onMessage(m);
        });
        // An instance joining this running job: restart the run over every live member, as for a
        // member's timeout (join-rebalance.ts decides when).
        stopWatchingJoiners = watchJoiners({
          membership,
          assigned: assignment.members,
          delayMs: cluster.rebalanceDelayMs,
          checkpoints: cp,
          onWait: (d) =>
            log('info', { joiners: d.joiners, waitingFor: d.why }, 'instances joined; rebalance pending'),
          onRestart: (joiners) => {
            cp.stop();
            const reason = `instance(s) ${joiners.join(', ')} joined; rebalancing over the live members`;
            send(subjects.ctl, { type: 'restart', reason });
            if (failure === null) restartable = true;
            failLocal(reason);
          },
        });
        if (tick) clearInterval(tick);
        tick = setInterval(
          () => {
            // What a lost `up` message said, from the members' heartbeat reports (idempotent).
            for (const m of membership.members()) {
              const r = m.record.run;
              if (r?.run === assignment.run)
                for (const msg of runStatusMessages(m.record.instanceId, r)) cp.onMessage(msg);
            }
            cp.tick();
          },
          Math.max(10, c.interval),
        );
      }

      // The member side: relay the coordinator's messages to this instance's tasks.
      const local = new Set(tasksOf(client.plan, assignment, id));
      const byKey = new Map<string, DeployedTask>();
      const stop = new MemberStop({
        member: id,
        up: (m: SavepointMemberMessage) => up(m),
        tasks: () => [...byKey.values()],
        cancel: async () => {
          await execution?.cancel();
        },
        timeoutMs: c.timeout,
      });
      const call = (f: () => Promise<unknown>) => {
        try {
          void f().catch(() => undefined); // a task that already ended: its outcome says why
        } catch {
          // proxy released: the execution ended
        }
      };
      let control = initialRunControl;
      const act = (a: RunControlAction | null) => {
        if (a === null) return;
        switch (a.kind) {
          case 'complete':
            for (const t of byKey.values()) call(() => t.control.notifyCheckpointComplete(a.checkpointId));
            return;
          case 'restart':
            restartLocal(a.reason);
            return;
          case 'fail':
            failJob(a.outcome);
            return;
          case 'stop': {
            // The committed stop of a stop-with-savepoint whose `stop` message this member missed.
            const m = {
              type: 'stop' as const,
              requestId: a.stop.requestId,
              checkpointId: a.stop.checkpointId,
              path: a.stop.path,
            };
            stop.onControl(m);
            host.savepoints.onControl(m);
            return;
          }
          default:
            return assertNever(a, 'run control action');
        }
      };
      subs.push(
        nc.subscribe(subjects.ctl, {
          callback: (_e, msg) => {
            const m = JSON.parse(decoder.decode(msg.data)) as CoordinatorMessage;
            switch (m.type) {
              case 'trigger':
                for (const key of m.tasks) {
                  const t = byKey.get(key);
                  const type = m.savepoint ? 'savepoint' : 'checkpoint';
                  if (t) call(() => t.control.triggerCheckpoint(m.checkpointId, m.timestamp, type, m.final));
                }
                return;
              case 'complete': {
                const c = noteComplete(control, m.checkpointId);
                control = c.next;
                act(c.action);
                return;
              }
              case 'abort':
                for (const t of byKey.values())
                  call(() =>
                    t.control.notifyCheckpointAborted(
                      m.checkpointId,
                      m.rebase ? { rebase: true } : undefined,
                    ),
                  );
                return;
              case 'restart':
                restartLocal(m.reason);
                return;
              case 'fail':
                if (m.member !== id)
                  failJob(
                    outcomeOf(
                      m.member === 'coordinator' ? m.message : `instance ${m.member} failed: ${m.message}`,
                      'restarts-exhausted',
                    ),
                  );
                return;
              case 'stop':
              case 'stopped-all':
              case 'savepoint-failed':
                stop.onControl(m);
                host.savepoints.onControl(m);
                return;
              default:
                return assertNever(m, 'coordinator message');
            }
          },
        }),
      );
      await nc.flush();
      // The same messages read back from the committed records (run-control.ts), for those lost.
      let reading = false;
      const controlTimer = setInterval(() => {
        if (reading || execution === null) return;
        reading = true;
        void readControlFacts(conn!)
          .then((facts) => {
            const r = reconcileRunControl(control, {
              ...facts,
              self: id,
              run: assignment.run,
              lineage: assignment.lineage,
              coordinator: assignment.coordinator,
              leaseHeld: lease!.epoch !== undefined,
            });
            control = r.next;
            for (const a of r.actions) act(a);
          })
          .catch((e) => log('warn', { err: (e as Error).message }, 'reading the run control records'))
          .finally(() => {
            reading = false;
          });
      }, period);
      // A member of the assignment that times out (died, paused, cut off) ends this run; the
      // survivors restart over the live members from the last committed checkpoint. A graceful
      // leave (`left`) is a member whose part ended: the coordinator counts it done, or fails the
      // run when it left before its part ended (cluster-checkpoints.ts).
      let ownFinished = false;
      const onLeave = ({ instanceId, reason }: { instanceId: string; reason: string }) => {
        if (!assignment.members.includes(instanceId) || instanceId === id) return;
        if (reason !== 'timeout') checkpoints?.onMessage({ type: 'left', member: instanceId });
        // The coordinator's own tasks finished and it waits for the others' `done`: a member that
        // dies now cannot be waited for (its sinks' commit of the final checkpoint is unknown).
        else if (ownFinished)
          checkpoints?.memberLost(
            instanceId,
            `instance ${instanceId} timed out after the final checkpoint, before it reported done: its sinks may not have committed it`,
          );
        else {
          // Logged at the moment of detection (bench/cluster/takeover.mjs times it).
          if (failure === null)
            log('warn', { instance: instanceId, run: assignment.run }, 'member timed out');
          restartLocal(
            `instance ${instanceId} left the cluster (${reason}); restarting over the live members`,
          );
        }
      };
      membership.on('leave', onLeave);
      // The coordinator lost its lease (expired under load, taken over): this run cannot commit
      // any more; every member restarts from the last committed checkpoint under the next holder.
      const onLost = (e: Error) => {
        if (assignment.coordinator !== id) return;
        checkpoints?.stop();
        const reason = `the coordinator lost its lease: ${e.message}`;
        send(subjects.ctl, { type: 'restart', reason });
        restartLocal(reason);
      };
      lease.on('lost', onLost);

      const taskConfig: TaskCheckpointConfig = {
        mode: c.mode,
        dir: cluster.checkpointDir,
        // A delta's base chunks are in the shared directory, which nothing in a cluster job
        // discards (docs/architecture.md "Incremental checkpoints of a cluster job").
        incremental: c.incremental,
        fullEvery: c.fullEvery,
        stateBackend: o.stateBackend,
        unaligned: c.unaligned,
        ...(c.alignmentTimeout !== null ? { alignmentTimeout: c.alignmentTimeout } : {}),
      };
      let running = 0;
      const ex = new Execution(
        client.plan,
        {
          jobModule: host.jobModule,
          args: o.args,
          parallelism: o.parallelism,
          maxParallelism: o.maxParallelism,
          attempt,
          ringBytes: o.channels.ringBytes,
          batchRecords: o.channels.batchRecords,
          batchBytes: o.channels.batchBytes,
          recordFormat: o.channels.recordFormat,
          debloat: o.channels.debloat,
          wakeDelayMs: o.channels.wakeDelayMs,
          checkpointing: taskConfig,
          stateBackend: o.stateBackend,
          restore,
          stuckTaskTimeout: o.stuckTaskTimeout,
          faultInjection: o.faultInjection,
          pool,
          cluster: { placement: placementOf(assignment, id), remoteEdges: { servers: cluster.servers } },
        },
        (task, event) => {
          host.onTaskEvent(task, event);
          switch (event.kind) {
            case 'running':
              if (++running === local.size) {
                up({ type: 'ready', member: id });
                void report({ ...status, ready: true });
                log('info', { attempt }, 'tasks running');
              }
              break;
            case 'acknowledge':
              up({
                type: 'ack',
                member: id,
                checkpointId: event.checkpointId,
                task: task.key,
                state: event.state,
                bytes: event.metrics.bytes ?? 0,
              });
              break;
            case 'decline':
              up({
                type: 'decline',
                member: id,
                checkpointId: event.checkpointId,
                task: task.key,
                message: event.message,
              });
              break;
            case 'input-ended':
              up({ type: 'ended', member: id, task: task.key });
              void report({ ...status, ended: [...status.ended, task.key] });
              break;
            default:
              break;
          }
        },
      );
      execution = ex;
      for (const t of ex.tasks) byKey.set(t.key, t);
      if (failure !== null) failLocal(failure);
      host.onExecution(ex);
      if (!restoreTold) {
        // What `restoreFrom` did, said once as a job of one process says it (job-checkpointing.ts).
        restoreTold = true;
        tellRestore(client, cluster.checkpointDir, atOpen, firstDecision, assignment.restore);
      }
      client.emit('deployed', { attempt, restoredFrom: assignment.restore?.checkpointId });
      log('info', { instance: id, tasks: [...local], coordinator: assignment.coordinator }, 'deployed');
      // A member with nothing assigned is ready at once.
      if (local.size === 0) {
        up({ type: 'ready', member: id });
        void report({ ...status, ready: true });
      }
      host.savepoints.attach(id, up);
      const stopStatus = publishMemberStatus({
        members: conn.members,
        instanceId: id,
        run: assignment.run,
        attempt,
        everyMs: STATUS_EVERY_MS,
        samples: () => client.subtaskMetrics(),
        onError: (e) => log('warn', { err: e.message }, 'member status'),
      });
      const outcome: ExecutionOutcome = await ex.done;
      clearInterval(controlTimer);
      stopWatchingJoiners();
      await stopStatus();
      lease.off('lost', onLost);
      savepoints?.close();
      if (stop.savepoint) {
        // Stopped with a savepoint: whatever the outcome of the cancel (a task may fail on a
        // flow whose other end was cancelled first), the savepoint exists and is committed.
        membership.off('leave', onLeave);
        checkpoints?.stop();
        host.savepoints.end('the job stopped with a savepoint');
        await nc.flush().catch(() => undefined);
        return { stopped: stop.savepoint, restarts: attempt };
      }
      // A failed run may be followed by another (a restart; after a task's own failure as the
      // coordinator decides): the next run attaches again.
      host.savepoints.detach(
        outcome.state === 'failed' && jobFailed === null ? 'the run ended; it may restart' : 'the job ended',
      );
      if (outcome.state === 'finished') {
        ownFinished = true;
        up({ type: 'done', member: id });
        // Written before this instance leaves (a deleted key carries no report).
        await report({ ...status, done: true });
        await nc.flush();
        // The coordinator still counts the others' leaves meanwhile (cluster-checkpoints.ts `left`).
        await coordinatorDone.finally(() => membership.off('leave', onLeave));
        if (jobFailed !== null) throw jobFailedError(jobFailed, undefined);
        if (failure !== null) throw new ClusterError(cluster.name, 'running the job', failure);
        return { metrics: outcome.metrics, restarts: attempt };
      }
      membership.off('leave', onLeave);
      if (outcome.state === 'cancelled') {
        const failed = { message: 'cancelled', kind: 'fatal' as const };
        up({ type: 'failed', member: id, ...failed });
        await report({ ...status, failed });
        checkpoints?.fail(`instance ${id} was cancelled`);
        return null;
      }
      if (jobFailed !== null) throw jobFailedError(jobFailed, outcome.error);
      if (checkpoints) nextCheckpointId = Math.max(nextCheckpointId, checkpoints.nextId);
      if (!restartable) {
        if (failure !== null) throw outcome.error;
        // This instance's own failure (a task's error): the coordinator decides between a restart
        // over the live members and failing the job (its restart strategy); wait for its next
        // assignment or the job's committed outcome (awaitAssignment). Reported twice: the message,
        // and the heartbeat report until the next run.
        const kind: FailureKind = failureKindOf(outcome.error);
        const failed = { message: outcome.error.message.split('\n')[0], kind };
        log('warn', { err: failed.message, kind }, 'task failed; the coordinator decides');
        up({ type: 'failed', member: id, ...failed });
        checkpoints?.onMessage({ type: 'failed', member: id, ...failed });
        await report({ ...status, failed });
        await nc.flush().catch(() => undefined);
        previous = { assignment, ended: 'decided' };
      } else {
        // Every survivor sees the member time out (or the restart) and comes here; the lease
        // holder reassigns over the live members, restoring the last committed checkpoint.
        checkpoints?.stop();
        previous = { assignment, ended: 'restart' };
        log('warn', { attempt: attempt + 1, err: failure }, 'restarting over the live members');
      }
      for (const s of subs.splice(0)) s.unsubscribe();
      client.emit('restarting', { attempt: attempt + 1, delayMs: 0, cause: outcome.error });
    }
  } finally {
    if (tick) clearInterval(tick);
    for (const s of subs) s.unsubscribe();
    await pool.close();
    await lease?.close({ release: true }).catch(() => undefined);
    await membership.leave().catch(() => undefined);
    await conn?.close().catch(() => undefined);
    await retention.settled();
    await storage.close();
  }
}

/**
 * Waits for the assignment that names this instance. The lease holder publishes one once
 * `instances` members are live. An assignment whose members are all live but that leaves this
 * instance out is a job already running: this instance joins it — it is live in the membership,
 * so the coordinator restarts the run over every live member (join-watcher.ts) — and from then on
 * counts that run as its `previous`: should it take the lease over before the rebalance, it
 * restarts the job (same lineage, the committed checkpoint), never starts it afresh. `'finished'`:
 * the job it joined ended (its final checkpoint committed) before it was given a share. An
 * assignment whose members are not all live, of a run this instance never saw running, is stale
 * (an earlier run of the cluster name) and ignored.
 *
 * After a run (`previous`): the job's committed outcome ends the wait (the job failed); the lease
 * holder assigns the next run at once after a restart (`ended: 'restart'`, also a joined run),
 * after a member's own failure only once its restart strategy granted it (`granted()`, after the
 * strategy's delay), or when the lease changed hands since the previous run (its coordinator, who
 * would decide, is gone).
 */
async function awaitAssignment(
  client: JobClient,
  cluster: NonNullable<JobClient['options']['cluster']>,
  id: string,
  membership: ClusterMembership,
  lease: CoordinatorLease,
  conn: ClusterConnection,
  log: (level: 'info' | 'warn', fields: Record<string, unknown>, msg: string) => void,
  previousRun: PreviousRun | null,
  granted: () => { readonly run: string; readonly notBefore: number } | null,
  nextCheckpointId: number,
  initialRestore: () => DirectoryRestore | null,
): Promise<
  | { assignment: PublishedAssignment; upstream: Upstream | null }
  | { stopped: ClusterSavepoint; attempt: number }
  | 'finished'
> {
  const period = Math.max(20, Math.floor(cluster.timeoutMs / 8));
  let previous = previousRun?.assignment ?? null;
  let ended = previousRun?.ended ?? 'restart';
  let upstream: Upstream | null = null;
  for (;;) {
    if (client.options.signal?.aborted)
      throw new ClusterError(cluster.name, 'waiting for the assignment', 'aborted');
    if (previous) {
      const end = await endOf(conn, previous);
      if (end) return end;
    }
    const entry = await conn.coordinator.get(ASSIGNMENT_KEY);
    if (entry && entry.operation === 'PUT') {
      const a = JSON.parse(entry.string()) as PublishedAssignment;
      if (a.run === previous?.run) {
        // The run that ended (its members may all be live: a task's failure): wait for its successor.
      } else if (a.members.includes(id)) {
        checkSharedDir(cluster.name, cluster.checkpointDir, a.run);
        return { assignment: a, upstream: upstream?.run === a.run ? upstream : null };
      } else {
        const live = new Set(membership.members().map((m) => m.record.instanceId));
        if (a.members.every((m) => live.has(m)) && a.run !== previous?.run) {
          log(
            'info',
            { run: a.run, members: a.members },
            'joining the running job; waiting for the rebalance',
          );
          previous = a;
          ended = 'restart';
        }
      }
    }
    const epoch = lease.epoch;
    const g = granted();
    const grantedHere = previous !== null && g?.run === previous.run;
    const mayAssign =
      previous === null ||
      (grantedHere ? Date.now() >= g.notBefore : ended === 'restart' || epoch !== previous.epoch);
    if (upstream === null && epoch !== undefined && mayAssign) {
      // The previous run's coordinator whose lease this instance took over did not renew it for
      // `leaseMs`: dead, paused or cut off, the evidence a member timeout gives. Left out; else
      // the new run would restart once more when its member key times out a moment later. A
      // coordinator that is in fact alive joins back like a new instance (join-watcher.ts).
      const deposed =
        previous !== null && previous.coordinator !== id && epoch !== previous.epoch
          ? previous.coordinator
          : null;
      const live = membership
        .members()
        .map((m) => m.record.instanceId)
        .filter((m) => m !== deposed)
        .sort();
      if (live.length >= (previous ? 1 : cluster.instances) && live.includes(id)) {
        // Read again under the lease: the previous coordinator's commit of the job's end (its stop
        // with a savepoint) is fenced by the lease this instance holds now, so a commit it made
        // is visible here, and one it did not make can no longer happen.
        if (previous) {
          const end = await endOf(conn, previous);
          if (end) return end;
        }
        const run = `${epoch}x${Math.floor(Math.random() * 2 ** 32).toString(36)}`;
        writeFileSync(join(cluster.checkpointDir, probeName(cluster.name, run)), run);
        const lineage = previous?.lineage ?? run;
        const committed = previous ? await readCheckpointRecord(conn) : null;
        // A joiner holding the lease after the job it joined completed its final checkpoint (the
        // members finished, released the lease and left): nothing is left to run.
        if (
          previous &&
          !previous.members.includes(id) &&
          committed?.final === true &&
          committed.lineage === lineage
        )
          return 'finished';
        const restoreId = committed?.lineage === lineage ? committed.checkpointId : null;
        // Before this job's first checkpoint, a restart restores what the first run restored
        // (`restoreFrom`) again.
        const restore =
          restoreId !== null
            ? { checkpointId: restoreId }
            : previous
              ? previous.restore?.dir
                ? previous.restore
                : null
              : initialRestore();
        const a: PublishedAssignment = {
          ...assignSubtasks(client.plan, live, run),
          coordinator: id,
          epoch,
          lineage,
          attempt: (previous?.attempt ?? -1) + 1,
          restore,
          nextCheckpointId: Math.max(nextCheckpointId, (restore?.checkpointId ?? 0) + 1),
          taskRestarts: (previous?.taskRestarts ?? 0) + (grantedHere ? 1 : 0),
        };
        // Listen before publishing: a member may deploy and report `ready` before this loop
        // reads the assignment back.
        upstream = listenUpstream(conn, runSubjects(cluster.name, run).up, run);
        await conn.nc.flush();
        try {
          await lease.commit(ASSIGNMENT_KEY, JSON.stringify(a));
        } catch (e) {
          // Lost the lease meanwhile: the next holder assigns.
          log('warn', { err: (e as Error).message }, 'assignment not published');
          upstream.sub.unsubscribe();
          upstream = null;
        }
        continue;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, period));
  }
}

/**
 * Emits `restored` for a first deployment that restores a checkpoint of a directory, and the
 * fresh start or fallback warning this instance's own look at `restoreFrom` found when the
 * assignment agrees with it (the coordinator decided the same).
 */
function tellRestore(
  client: JobClient,
  sharedDir: string,
  atOpen: CheckpointDirState | null,
  decision: ClusterRestoreDecision,
  restore: PublishedAssignment['restore'],
): void {
  const notice = restoreNotice(client.options, sharedDir, atOpen, decision);
  if (notice?.kind === 'fresh-start' && restore === null) {
    client.log('info', { dir: notice.event.dir, reason: notice.event.reason }, notice.event.message);
    client.emit('fresh-start', notice.event);
  }
  if (restore?.dir === undefined) return;
  if (notice?.kind === 'warning' && decision.restore?.checkpointId === restore.checkpointId)
    client.warn(notice.warning);
  client.log('info', { checkpointId: restore.checkpointId, dir: restore.dir }, 'restoring');
  client.emit('restored', { checkpointId: restore.checkpointId, dir: restore.dir });
}

/** The coordinator's subscription to its members' messages, buffering until the coordinator attaches. */
interface Upstream {
  readonly run: string;
  readonly sub: Subscription;
  attach(handler: (m: MemberMessage) => void): void;
}

function listenUpstream(conn: ClusterConnection, subject: string, run: string): Upstream {
  const buffered: MemberMessage[] = [];
  let handler: ((m: MemberMessage) => void) | null = null;
  const sub = conn.nc.subscribe(subject, {
    callback: (_e, msg) => {
      const m = JSON.parse(decoder.decode(msg.data)) as MemberMessage;
      if (handler) handler(m);
      else buffered.push(m);
    },
  });
  return {
    run,
    sub,
    attach(h) {
      handler = h;
      for (const m of buffered.splice(0)) h(m);
    },
  };
}

async function readRecord<T>(conn: ClusterConnection, key: string): Promise<T | null> {
  const entry = await conn.coordinator.get(key);
  return entry && entry.operation === 'PUT' ? (JSON.parse(entry.string()) as T) : null;
}

function readCheckpointRecord(conn: ClusterConnection): Promise<ClusterCheckpointRecord | null> {
  return readRecord<ClusterCheckpointRecord>(conn, CHECKPOINT_KEY);
}

/** The coordinator's committed records a member reads back during a run (run-control.ts). */
async function readControlFacts(conn: ClusterConnection) {
  const [assignment, checkpoint, outcome] = await Promise.all([
    readRecord<PublishedAssignment>(conn, ASSIGNMENT_KEY),
    readCheckpointRecord(conn),
    readRecord<ClusterJobEnd>(conn, OUTCOME_KEY),
  ]);
  return { assignmentRun: assignment?.run ?? null, checkpoint, outcome };
}

/**
 * The committed end of `previous`'s job, if any: it stopped with a savepoint (this instance ends
 * stopped too), or it failed (thrown as the JobFailedError every instance throws).
 */
async function endOf(
  conn: ClusterConnection,
  previous: PublishedAssignment,
): Promise<{ stopped: ClusterSavepoint; attempt: number } | null> {
  const end = await readRecord<ClusterJobEnd>(conn, OUTCOME_KEY);
  if (end?.lineage !== previous.lineage) return null;
  if (end.kind === 'stopped')
    return { stopped: { checkpointId: end.checkpointId, path: end.path }, attempt: previous.attempt };
  throw jobFailedError(end, undefined);
}

/** The job's failure as every instance throws it (the strategy's error, as for a job of one process). */
function jobFailedError(outcome: ClusterJobOutcome, cause: unknown): JobFailedError {
  return new JobFailedError(outcome.message, outcome.restarts, { cause, reason: outcome.reason });
}

/**
 * The state every local task restores: the committed checkpoint the assignment names, planned as
 * for a job of one process (task-restore-planner.ts) from the record's handles — chunks in the
 * shared checkpoint directory, written by whichever instance ran the task then.
 */
async function readRestore(
  client: JobClient,
  name: string,
  conn: ClusterConnection,
  storage: CheckpointStorage,
  a: PublishedAssignment,
): Promise<Map<string, TaskRestoreState>> {
  const record = await readCheckpointRecord(conn);
  if (!record || record.lineage !== a.lineage || record.checkpointId !== a.restore!.checkpointId)
    throw new ClusterError(
      name,
      'restoring',
      `the committed checkpoint is ${record ? `${record.checkpointId} of ${record.lineage}` : 'missing'}, the assignment restores ${a.restore!.checkpointId} of ${a.lineage}`,
    );
  const plan = client.plan;
  const metadata: CheckpointMetadata = metadataOfRecord(plan, record);
  const packr = operatorStatePackr();
  return planTaskRestores(plan, metadata, (h) => packr.unpack(storage.readChunk(h)) as unknown[]);
}

const probeName = (name: string, run: string) => `.weir-cluster-${name}-${run}`;

/** The coordinator's probe file must be readable here: the checkpoint directory is shared. */
function checkSharedDir(name: string, dir: string, run: string): void {
  let text = '';
  try {
    text = readFileSync(join(dir, probeName(name, run)), 'utf8');
  } catch {
    // reported below
  }
  if (text !== run)
    throw new ClusterError(
      name,
      'checking the checkpoint directory',
      `${dir} does not hold the coordinator's probe file ${probeName(name, run)}: cluster.checkpointDir (or checkpointing.dir) must be the same directory on every instance (a shared file system for several machines)`,
    );
}

function statsOf(record: ClusterCheckpointRecord, bytes: number, durationMs: number) {
  return {
    checkpointId: record.checkpointId,
    triggerTimestamp: record.completedAt - durationMs,
    durationMs,
    maxAlignmentDurationMs: 0,
    switchedToUnaligned: false,
    maxSyncDurationMs: 0,
    maxAsyncDurationMs: 0,
    bytes,
    subtasks: [],
  };
}
