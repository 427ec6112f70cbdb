/**
 * What a cluster job restores, beyond its own last committed checkpoint (cluster-job.ts restores
 * that one from the coordinator bucket's `checkpoint` record):
 *
 * - `restoreFrom` of a cluster job: a checkpoint directory — a savepoint (of a cluster job or of a
 *   job of one process), another job's retained checkpoints, or the cluster's own shared directory
 *   (`'latest'`), where the coordinator also commits every cluster checkpoint's metadata
 *   ({@link metadataOfRecord}) so that it outlives the NATS buckets. The coordinator picks the
 *   checkpoint once ({@link decideClusterRestore}) and names it in the assignment; every member
 *   plans its tasks' restore from that directory ({@link planDirectoryRestore}), as a job of one
 *   process does (restore-planning.ts, task-restore-planner.ts: key groups over the new subtasks,
 *   whatever the number of instances).
 *
 * I/O: reads the checkpoint directory; no NATS.
 */

import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { type FreshStartEvent, JobWarning } from '../coordinator/job-events.js';
import type { ResolvedJobOptions } from '../coordinator/job-options.js';
import { migrateLegacyUids, requireRestoreCompatible } from '../coordinator/restore-compatibility.js';
import {
  type CheckpointDirState,
  classifyCheckpointDir,
  jobMetadataOf,
  planStoredRestore,
  restoreFailure,
} from '../coordinator/restore-planning.js';
import { planTaskRestores } from '../coordinator/task-restore-planner.js';
import { CheckpointStorageError, ClusterError } from '../errors.js';
import type { ExecutionPlan } from '../graph/execution-plan.js';
import { operatorStatePackr } from '../protocol/operator-state-codec.js';
import type { TaskRestoreState } from '../protocol/task-deployment.js';
import type { CheckpointMetadata } from '../state/storage/checkpoint-metadata.js';
import { CheckpointStorage } from '../state/storage/checkpoint-storage.js';
import type { ClusterCheckpointRecord } from './cluster-checkpoints.js';

/** A checkpoint in a directory, named by the coordinator in the assignment. */
export interface DirectoryRestore {
  readonly checkpointId: number;
  /** Absolute path of the checkpoint directory holding its metadata and chunks. */
  readonly dir: string;
}

/**
 * The checkpoint metadata of a committed cluster checkpoint record: the same shape a job of one
 * process commits (job-checkpointing.ts), so a directory holding it restores like any other.
 */
export function metadataOfRecord(plan: ExecutionPlan, record: ClusterCheckpointRecord): CheckpointMetadata {
  const subtasks = Object.entries(record.tasks).flatMap(([key, handles]) =>
    handles.operators.map((op) => ({
      operatorUid: op.operatorUid,
      subtaskIndex: Number(key.split('/')[1]),
      chunks: op.chunks,
    })),
  );
  return {
    checkpointId: record.checkpointId,
    timestamp: record.completedAt,
    // A delta names its base chain's chunks (written by earlier checkpoints, on whichever
    // instance ran the task then) before its own, as a job of one process's metadata does.
    incremental: subtasks.some((s) => s.chunks.some((h) => h.checkpointId !== record.checkpointId)),
    job: jobMetadataOf(plan),
    subtasks,
  };
}

/**
 * The coordinator's decision for a cluster job's first deployment: which checkpoint of
 * `restoreFrom` every member restores (`restore` null: `'latest'` in a shared directory that holds
 * none yet, a fresh start), and the damaged newer checkpoints a fallback the user allowed skipped
 * (`skipped`, empty otherwise). `'latest'` means the cluster's shared checkpoint directory.
 * @throws CheckpointStorageError / RestoreFallbackRefusedError as `restoreFrom` of a job of one
 *   process does (an explicit path that holds no usable checkpoint, a fallback past a damaged one);
 *   MaxParallelismMismatchError / NonRestoredStateError when the checkpoint does not fit the job.
 */
export function decideClusterRestore(
  plan: ExecutionPlan,
  options: ResolvedJobOptions,
  sharedDir: string,
): ClusterRestoreDecision {
  const from = options.restoreFrom;
  if (from === undefined) return { restore: null, skipped: [] };
  const dir = from === 'latest' ? resolve(sharedDir) : resolve(from);
  const storage = CheckpointStorage.open(dir, { create: false });
  try {
    const decision = planStoredRestore(
      storage.findRestorable(),
      from === 'latest' ? 'latest' : 'explicit',
      options.checkpointing!.mode,
      options.allowFallbackPastDamaged,
    );
    if (decision.kind === 'fresh-start') return { restore: null, skipped: [] };
    if (decision.kind === 'fail') throw restoreFailure(decision, dir);
    requireRestoreCompatible(plan, decision.checkpoint.metadata!, options.allowNonRestoredState);
    return {
      restore: { checkpointId: decision.checkpoint.checkpointId, dir },
      skipped: decision.warnings.map((w) => ({ checkpointId: w.checkpointId, problem: w.problem })),
    };
  } finally {
    void storage.close();
  }
}

export interface ClusterRestoreDecision {
  readonly restore: DirectoryRestore | null;
  /** Newer checkpoints that failed verification, skipped by an allowed fallback; newest first. */
  readonly skipped: readonly { readonly checkpointId: number; readonly problem: string }[];
}

/**
 * The shared checkpoint directory as `restoreFrom` finds it before this instance opens (and so
 * creates) it, or null when `restoreFrom` does not name it. Looked at, as a job of one process
 * does (job-checkpointing.ts), so that a directory that lost its `data.mdb` or a mistyped one is
 * refused instead of restarted from the beginning over a new, empty store. Every instance looks:
 * none creates the store of a refused directory, so they all refuse; in a missing or empty one
 * the first instance to open it creates the store, and the others find it empty of checkpoints.
 * @throws CheckpointStorageError when the directory is neither missing, empty nor checkpoint
 *   storage.
 */
export function sharedDirAtOpen(options: ResolvedJobOptions, sharedDir: string): CheckpointDirState | null {
  const from = options.restoreFrom;
  const dir = resolve(sharedDir);
  if (from === undefined || (from !== 'latest' && resolve(from) !== dir)) return null;
  const state = classifyCheckpointDir(existsSync(dir) ? readdirSync(dir) : null);
  if (state.kind === 'refuse')
    throw new CheckpointStorageError(`cannot restore from checkpoint directory ${dir}: ${state.reason}`);
  return state;
}

/**
 * What an instance tells its user about `restoreFrom`, as a job of one process does: a fresh
 * start (`'latest'` found no checkpoint; `atOpen` says whether the directory existed) or a warning
 * about an allowed fallback past damaged checkpoints; null when there is nothing to say.
 */
export function restoreNotice(
  options: ResolvedJobOptions,
  sharedDir: string,
  atOpen: CheckpointDirState | null,
  decision: ClusterRestoreDecision,
):
  | { readonly kind: 'fresh-start'; readonly event: FreshStartEvent }
  | { readonly kind: 'warning'; readonly warning: JobWarning }
  | null {
  const dir = resolve(sharedDir);
  if (options.restoreFrom === 'latest' && decision.restore === null) {
    const reason =
      atOpen?.kind === 'missing'
        ? ('no-directory' as const)
        : atOpen?.kind === 'empty'
          ? ('empty-directory' as const)
          : ('no-completed-checkpoint' as const);
    const why =
      reason === 'no-directory'
        ? 'did not exist'
        : reason === 'empty-directory'
          ? 'was empty'
          : 'held no completed checkpoint';
    return {
      kind: 'fresh-start',
      event: { dir, reason, message: `checkpoint directory ${dir} ${why}: starting from the beginning` },
    };
  }
  if (decision.restore !== null && decision.skipped.length > 0) {
    const r = decision.restore;
    return {
      kind: 'warning',
      warning: new JobWarning(
        {
          kind: 'fallback-past-damaged',
          dir: r.dir,
          restoredCheckpointId: r.checkpointId,
          skipped: decision.skipped,
        },
        `restoring checkpoint ${r.checkpointId} from ${r.dir}, past damaged checkpoint(s) ` +
          `${decision.skipped.map((d) => `${d.checkpointId} (${d.problem})`).join(', ')}: output they committed will be committed again`,
      ),
    };
  }
  return null;
}

/**
 * The state every task restores from checkpoint `r.checkpointId` of directory `r.dir`; tasks read
 * their keyed chunks from that directory (`TaskRestoreState.dir`).
 * @throws ClusterError when the checkpoint is not (any more) there; the errors of a misfit as in
 *   {@link decideClusterRestore}.
 */
export function planDirectoryRestore(
  name: string,
  plan: ExecutionPlan,
  options: ResolvedJobOptions,
  r: DirectoryRestore,
): Map<string, TaskRestoreState> {
  const storage = CheckpointStorage.open(r.dir, { create: false });
  try {
    const stored = storage.loadMetadata(r.checkpointId);
    if (!stored)
      throw new ClusterError(
        name,
        'restoring',
        `checkpoint ${r.checkpointId}, which the assignment restores, is not in ${r.dir}: every instance must read the same directory`,
      );
    requireRestoreCompatible(plan, stored, options.allowNonRestoredState);
    const packr = operatorStatePackr();
    const plans = planTaskRestores(
      plan,
      migrateLegacyUids(plan, stored),
      (h) => packr.unpack(storage.readChunk(h)) as unknown[],
    );
    const out = new Map<string, TaskRestoreState>();
    for (const [key, p] of plans) out.set(key, { ...p, dir: r.dir });
    return out;
  } finally {
    void storage.close();
  }
}
