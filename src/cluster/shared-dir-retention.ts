/**
 * `checkpointing.retain` for a cluster job: after the coordinator committed a checkpoint (its NATS
 * record, the commit point) and wrote its metadata into the shared checkpoint directory, it
 * discards the directory's checkpoints older than the newest `retain`, as a job of one process
 * discards beyond `retain`. A discard is `CheckpointStorage.discardCheckpoint`, the one a job of
 * one process uses: chunks are reference-counted per committed checkpoint that names them, so a
 * chunk a retained checkpoint still references (a delta's base chain) stays.
 *
 * Incremental checkpoints. A delta references the chunks of the newest checkpoint its task was
 * told completed, and `complete` is at most once on NATS (a lost one is read back within
 * `timeoutMs / 8`, run-control.ts), so a task may base a delta on a checkpoint older than the
 * newest `retain`. After a full snapshot (`fullEvery`) those chunks are referenced by nothing
 * retained; a discard deletes them, and were the delta's record committed it would name missing
 * chunks: a committed checkpoint that cannot be restored. So every commit goes through
 * {@link SharedDirRetention.commit}: it first checks that every chunk the checkpoint references
 * exists in the directory and, when one is gone, aborts the checkpoint (declined like a timed-out
 * one; the task's next delta builds on a newer confirmed base) without committing anything. The
 * check, the commit and the directory's copy of the metadata (whose transaction counts the
 * references, protecting the chunks from later discards) run in one chain with the discards, so
 * no discard runs between the check and the commit.
 *
 * Only the coordinator discards. A deposed coordinator may still finish a discard while its
 * successor checks and commits; it discards only checkpoints older than the newest `retain` of
 * its last commit, which the successor restored from or committed after: the successor's tasks
 * restored (their first snapshot is full) and never base a delta on those.
 *
 * Cost: the check is one LMDB key lookup per referenced chunk (no chunk is read). A commit waits
 * for the discards the previous commit started (one fsynced transaction each, usually done by
 * the next checkpoint's completion); the discards themselves follow the commit, off its critical
 * path. A discard's failure is a warning and the next commit tries again.
 */
import type { CheckpointMetadata } from '../state/storage/checkpoint-metadata.js';
import type { CheckpointStorage } from '../state/storage/checkpoint-storage.js';

/** The ids to discard from `completed` (ascending) once `newest` was written: all but the newest `retain` up to it. */
export function checkpointsToDiscard(completed: readonly number[], newest: number, retain: number): number[] {
  const upTo = completed.filter((id) => id <= newest);
  return upTo.slice(0, Math.max(0, upTo.length - retain));
}

/** What {@link SharedDirRetention.commit} did with a completed checkpoint. */
export type SharedDirCommitOutcome =
  /** Committed; `written`: its metadata is in the shared directory too (only then does retention discard). */
  | { readonly state: 'committed'; readonly written: boolean }
  /** Not committed: chunks it references are gone from the shared directory (`missing`, never empty). */
  | { readonly state: 'missing-chunks'; readonly missing: readonly string[] };

/** The part of the shared directory's store retention uses. */
export type RetentionStorage = Pick<
  CheckpointStorage,
  'closed' | 'missingChunks' | 'commitCheckpoint' | 'listCompleted' | 'discardCheckpoint'
>;

type Log = (level: 'info' | 'warn', fields: Record<string, unknown>, msg: string) => void;

export class SharedDirRetention {
  /** Every check, commit and discard, in order: nothing of one runs while another does. */
  #chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly storage: RetentionStorage,
    /** `checkpointing.retain`: committed checkpoints the directory keeps. */
    private readonly retain: number,
    private readonly log: Log,
  ) {}

  /**
   * Commits completed checkpoint `metadata`: once every chunk it references is found in the
   * directory, `commitPoint` (the fenced NATS commit), then its metadata into the directory,
   * then (after this resolves) the discards `retain` asks for.
   * @returns `missing-chunks` without calling `commitPoint` when a referenced chunk is gone.
   * @throws what `commitPoint` throws (nothing is written to the directory then), and
   *   LMDB's errors from the check (nothing is committed then).
   */
  commit(metadata: CheckpointMetadata, commitPoint: () => Promise<unknown>): Promise<SharedDirCommitOutcome> {
    const outcome = this.#chain.then(() => this.#commit(metadata, commitPoint));
    // The discards join the chain behind the commit but are not awaited by its caller.
    this.#chain = outcome.then(
      (o) => (o.state === 'committed' && o.written ? this.#discard(metadata.checkpointId) : undefined),
      () => undefined,
    );
    return outcome;
  }

  /** Settles once every commit and discard asked for so far ended (before the storage is closed). */
  async settled(): Promise<void> {
    await this.#chain;
  }

  async #commit(
    metadata: CheckpointMetadata,
    commitPoint: () => Promise<unknown>,
  ): Promise<SharedDirCommitOutcome> {
    const checkpointId = metadata.checkpointId;
    // A closed store (the instance is ending) cannot be checked; the commit goes on as before
    // retention checked anything: a discard cannot run any more either.
    const missing = this.storage.closed ? [] : this.storage.missingChunks(metadata);
    if (missing.length > 0) {
      this.log(
        'warn',
        { checkpointId, missing: missing.length, chunk: missing[0] },
        `checkpoint ${checkpointId} aborted: it references chunk ${missing[0]}${missing.length > 1 ? ` and ${missing.length - 1} more` : ''}, no longer in the shared checkpoint directory (its base checkpoint was discarded by checkpointing.retain)`,
      );
      return { state: 'missing-chunks', missing };
    }
    await commitPoint();
    return { state: 'committed', written: await this.#write(metadata) };
  }

  /**
   * Writes committed checkpoint `metadata` into the directory too (the commit point stays the
   * record): so the directory holds it when the NATS buckets are gone — `weir checkpoints DIR`
   * lists it, `restoreFrom: DIR` restores it — and its references protect its chunks from
   * discards. A failure costs only that (a warning).
   */
  async #write(metadata: CheckpointMetadata): Promise<boolean> {
    const checkpointId = metadata.checkpointId;
    try {
      if (this.storage.closed) throw new Error('the shared directory store is closed');
      const outcome = await this.storage.commitCheckpoint(metadata);
      if (outcome.state === 'committed') return true;
      this.log(
        'warn',
        { checkpointId, outcome: outcome.state },
        'checkpoint metadata not written to the shared directory',
      );
    } catch (e) {
      this.log(
        'warn',
        { checkpointId, err: (e as Error).message },
        'checkpoint metadata not written to the shared directory',
      );
    }
    return false;
  }

  async #discard(newest: number): Promise<void> {
    if (this.storage.closed) return;
    try {
      for (const id of checkpointsToDiscard(this.storage.listCompleted(), newest, this.retain))
        await this.storage.discardCheckpoint(id);
    } catch (e) {
      this.log(
        'warn',
        { checkpointId: newest, err: (e as Error).message },
        'discarding checkpoints beyond checkpointing.retain in the shared directory failed; the next commit tries again',
      );
    }
  }
}
