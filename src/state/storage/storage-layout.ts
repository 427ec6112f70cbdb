/**
 * The on-disk layout of a checkpoint directory (`checkpointing.dir`): one LMDB environment
 * (`data.mdb` + `lock.mdb` directly in the directory) holding four named sub-databases.
 *
 * | sub-database | key                                   | value                                        |
 * |--------------|---------------------------------------|----------------------------------------------|
 * | `chunks`     | chunk id (string, see {@link chunkIdFor}) | the chunk's bytes, verbatim                  |
 * | `metadata`   | checkpoint id (number)                | a framed, checksummed metadata record        |
 * | `refcounts`  | chunk id                              | number of committed checkpoints referencing it |
 * | `info`       | `'format'`, `'highestCheckpointId'`   | numbers                                      |
 *
 * Invariants (each LMDB write transaction preserves them; LMDB transactions are atomic and
 * serialised across every thread and process that has the directory open):
 * - A checkpoint is committed iff its `metadata` entry exists. Metadata and the refcount
 *   increments of every chunk it references are written in one transaction.
 * - Every chunk referenced by a committed checkpoint exists and has `refcounts[chunk] ≥ 1`;
 *   `refcounts[chunk]` equals the number of committed checkpoints referencing it.
 * - A chunk without a refcount entry is not (yet) part of any committed checkpoint: either its
 *   checkpoint is in flight, or it is left over from a crash or an aborted checkpoint.
 *
 * Chunk ids start with the zero-padded id of the checkpoint that wrote them, so the `chunks`
 * database is ordered by checkpoint id and `cleanup` scans a prefix of it.
 */

import type { RootDatabaseOptionsWithPath } from 'lmdb';

/** Bumped on any incompatible change of the layout above; `open` refuses other versions. */
export const STORAGE_FORMAT_VERSION = 1;

export const DB_CHUNKS = 'chunks';
export const DB_METADATA = 'metadata';
export const DB_REFCOUNTS = 'refcounts';
export const DB_INFO = 'info';

export const INFO_FORMAT = 'format';
/** Highest checkpoint id ever committed; keeps ids increasing after every checkpoint is discarded. */
export const INFO_HIGHEST_CHECKPOINT_ID = 'highestCheckpointId';

/** Checkpoint ids are positive safe integers below 10^16, so that 16 zero-padded digits sort them. */
export const CHECKPOINT_ID_DIGITS = 16;
export const MAX_CHECKPOINT_ID = 10 ** CHECKPOINT_ID_DIGITS - 1;

/** Name of LMDB's data file inside the directory (used to tell "no storage here" from "empty"). */
export const DATA_FILE = 'data.mdb';

/**
 * Environment options. Every handle in every thread must open the environment with the same
 * options: lmdb-js shares one native environment per path within a process and refuses
 * mismatched sync flags.
 *
 * `overlappingSync: false` makes every write promise resolve only after its transaction is
 * fsynced, so "the promise resolved" means "durable" for chunks and for the commit point alike.
 * (With overlapping sync a commit is visible before it is durable and durability needs
 * `flushed`, which waits for whatever else was queued.) Measured on this machine both modes
 * write 64 KiB chunks at a similar rate.
 */
export function environmentOptions(dir: string): RootDatabaseOptionsWithPath {
  return {
    path: dir,
    maxDbs: 8,
    overlappingSync: false,
    compression: false,
    cache: false,
  };
}
