/**
 * Whether a checkpoint's state fits the job that restores it: a pure decision over the
 * checkpoint's metadata and the new execution plan, taken before any task starts.
 * {@link requireRestoreCompatible} raises a refusal as its typed error for every restoring caller
 * (`JobCheckpointing`, a cluster job's restore), which emits the warning where it has one.
 *
 * - Old checkpoints (no `job.defaultUidScheme`) named operators without `.uid()` by position
 *   (`${kind}-${nodeId}`); {@link migrateLegacyUids} maps those to the job's current uids first,
 *   matching them exactly as the runtime that wrote them would have.
 * - keyed state written with another `maxParallelism` is refused: key groups would change meaning.
 * - State whose uid no operator of the job has (or in-flight records of an unaligned checkpoint
 *   whose operator no longer heads a task) is refused unless `allowNonRestoredState`.
 */

import { MaxParallelismMismatchError, NonRestoredStateError, type OrphanedState } from '../errors.js';
import type { ExecutionPlan } from '../graph/execution-plan.js';
import { DEFAULT_UID_SCHEME, legacyUidOf } from '../graph/operator-uid.js';
import { CHANNEL_STATE_CHUNK } from '../protocol/snapshot-chunks.js';
import type { CheckpointMetadata } from '../state/storage/checkpoint-metadata.js';

export type RestoreCompatibility =
  /** `nonRestored`: state that will be dropped (non-empty only with `allowNonRestoredState`). */
  | { readonly kind: 'compatible'; readonly nonRestored: readonly OrphanedState[] }
  | {
      readonly kind: 'max-parallelism-mismatch';
      readonly checkpointMaxParallelism: number;
      readonly jobMaxParallelism: number;
    }
  | { readonly kind: 'non-restored-state'; readonly operators: readonly OrphanedState[] };

/**
 * Renames the operators of a checkpoint written before default uid scheme 2 to the job's
 * current uids. Uids that match no node's positional uid stay as they are (and then have no
 * home). Metadata of scheme 2 is returned unchanged.
 */
export function migrateLegacyUids(plan: ExecutionPlan, metadata: CheckpointMetadata): CheckpointMetadata {
  if (metadata.job.defaultUidScheme !== undefined) return metadata;
  const current = new Map<string, string>();
  for (const v of plan.vertices)
    for (const op of v.operators) {
      const legacy = legacyUidOf(op);
      // An explicit uid wins over a positional one that happens to be spelled the same.
      if (op.explicitUid || !current.has(legacy)) current.set(legacy, op.uid);
    }
  const rename = (uid: string) => current.get(uid) ?? uid;
  return {
    ...metadata,
    job: {
      ...metadata.job,
      defaultUidScheme: DEFAULT_UID_SCHEME,
      operators: metadata.job.operators.map((o) => ({ ...o, operatorUid: rename(o.operatorUid) })),
    },
    subtasks: metadata.subtasks.map((s) => ({ ...s, operatorUid: rename(s.operatorUid) })),
  };
}

export function checkRestoreCompatibility(facts: {
  readonly plan: ExecutionPlan;
  /** After {@link migrateLegacyUids}. */
  readonly metadata: CheckpointMetadata;
  readonly allowNonRestoredState: boolean;
}): RestoreCompatibility {
  const { plan, metadata } = facts;
  const hasKeyedState = metadata.subtasks.some((s) => s.chunks.some((h) => h.keyGroup !== undefined));
  if (hasKeyedState && metadata.job.maxParallelism !== plan.maxParallelism) {
    return {
      kind: 'max-parallelism-mismatch',
      checkpointMaxParallelism: metadata.job.maxParallelism,
      jobMaxParallelism: plan.maxParallelism,
    };
  }
  const operators = new Set<string>();
  const heads = new Set<string>();
  for (const v of plan.vertices) {
    heads.add(v.operators[0].uid);
    for (const op of v.operators) operators.add(op.uid);
  }
  const names = new Map(metadata.job.operators.map((o) => [o.operatorUid, o.name]));
  const orphans = new Map<string, OrphanedState>();
  const orphan = (operatorUid: string, kind: OrphanedState['kind']) => {
    const key = `${kind}/${operatorUid}`;
    if (orphans.has(key)) return;
    const name = names.get(operatorUid);
    orphans.set(key, { operatorUid, kind, ...(name === undefined ? {} : { name }) });
  };
  for (const s of metadata.subtasks) {
    for (const h of s.chunks) {
      if (h.name === CHANNEL_STATE_CHUNK) {
        if (!heads.has(s.operatorUid)) orphan(s.operatorUid, 'channel');
      } else if (!operators.has(s.operatorUid)) orphan(s.operatorUid, 'operator');
    }
  }
  const nonRestored = [...orphans.values()];
  if (nonRestored.length > 0 && !facts.allowNonRestoredState) {
    return { kind: 'non-restored-state', operators: nonRestored };
  }
  return { kind: 'compatible', nonRestored };
}

/**
 * {@link checkRestoreCompatibility} of `stored` (its legacy uids migrated first), a refusal raised
 * as its typed error. Returns the state the restore drops (non-empty only with
 * `allowNonRestoredState`), for the caller's warning.
 * @throws MaxParallelismMismatchError, NonRestoredStateError
 */
export function requireRestoreCompatible(
  plan: ExecutionPlan,
  stored: CheckpointMetadata,
  allowNonRestoredState: boolean,
): readonly OrphanedState[] {
  const verdict = checkRestoreCompatibility({
    plan,
    metadata: migrateLegacyUids(plan, stored),
    allowNonRestoredState,
  });
  switch (verdict.kind) {
    case 'max-parallelism-mismatch':
      throw new MaxParallelismMismatchError(
        stored.checkpointId,
        verdict.checkpointMaxParallelism,
        verdict.jobMaxParallelism,
      );
    case 'non-restored-state':
      throw new NonRestoredStateError(stored.checkpointId, verdict.operators);
    case 'compatible':
      return verdict.nonRestored;
    default: {
      const unreachable: never = verdict;
      throw new Error(`unknown restore compatibility ${JSON.stringify(unreachable)}`);
    }
  }
}
