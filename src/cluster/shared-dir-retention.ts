/**
 * `checkpointing.retain` for a cluster job: after the coordinator wrote a committed checkpoint's
 * metadata into the shared checkpoint directory, it discards the directory's checkpoints older
 * than the newest `retain` (as a job of one process discards beyond `retain`). Without it the
 * shared directory grew without bound.
 *
 * For full checkpoints only (`checkpointing.incremental` off, the default): each one references
 * only chunks it wrote itself (every key group, operator and channel state anew), so discarding
 * an older one cannot touch a newer or in-flight one. A discard follows only a checkpoint whose
 * metadata was written to the directory (the NATS record is the commit point; the directory's
 * copy is what `retain` counts).
 *
 * Not for incremental cluster jobs, whose shared directory still grows: a delta references the
 * chunks of the newest checkpoint its task was told completed, and `complete` is at most once on
 * NATS (a lost one is read back within `timeoutMs / 8`, run-control.ts), so a task may base a
 * delta on a checkpoint older than the newest `retain` — after a full snapshot (`fullEvery`)
 * those chunks are referenced by nothing retained, a discard would delete them, and the delta's
 * record, already the commit point, would name missing chunks. Safe incremental retention needs
 * the commit to check the delta's chunks before the record is committed (and to abort it when
 * they are gone), serialised with the discards.
 * Discards run one at a time, after the commit (off the checkpoint's critical path); a failure is
 * a warning and the next commit tries again.
 */
import type { CheckpointStorage } from '../state/storage/checkpoint-storage.js';

/** The ids to discard from `completed` (ascending) once `newest` was written: all but the newest `retain` up to it. */
export function checkpointsToDiscard(completed: readonly number[], newest: number, retain: number): number[] {
  const upTo = completed.filter((id) => id <= newest);
  return upTo.slice(0, Math.max(0, upTo.length - retain));
}

export class SharedDirRetention {
  #chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: CheckpointStorage,
    private readonly retain: number,
    private readonly log: (level: 'info' | 'warn', fields: Record<string, unknown>, msg: string) => void,
  ) {}

  /** Checkpoint `newest`'s metadata is in the directory: discard what `retain` no longer keeps. */
  written(newest: number): Promise<void> {
    this.#chain = this.#chain.then(() => this.#discard(newest));
    return this.#chain;
  }

  /** Settles once every discard asked for so far ended (before the storage is closed). */
  settled(): Promise<void> {
    return this.#chain;
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
