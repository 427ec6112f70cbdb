/**
 * Names of the chunks a task writes into a checkpoint that the coordinator reads back by name
 * when it plans a restore, and the reference to a channel-state chunk that a restored task is
 * handed. Keyed-state chunks are named by their backend and not listed here.
 */

/** Chunk name of an operator's operator-state entries. */
export const OPERATOR_STATE_CHUNK = 'operator-state';

/** Chunk name of a task's channel state, stored under its head operator's uid. */
export const CHANNEL_STATE_CHUNK = 'channel-state';

export interface ChannelStateChunkRef<H> {
  /** Subtask of the checkpoint that recorded it. */
  readonly fromSubtask: number;
  /** The vertex's parallelism in the checkpoint. */
  readonly fromParallelism: number;
  readonly handle: H;
}
