/**
 * How long a cluster checkpoint record may be. The coordinator commits each completed checkpoint
 * as one KV put (`CoordinatorLease.commit`), one NATS message, which the server refuses past its
 * `max_payload` (1 MiB by default). The record of an incremental job names every chunk of each
 * task's delta chain (~170 B a handle), so it grows with each delta: past the limit the put would
 * fail after the lease's write went out, the lease would turn ambiguous and the run restart. The
 * coordinator checks the encoded record first and aborts the checkpoint instead (nothing
 * committed), telling the tasks to re-base (`abort` with `rebase`): their next snapshot is full,
 * so the next record is short again.
 */

import type { ClusterCheckpointRecord, ClusterCommitOutcome } from './cluster-checkpoints.js';

/**
 * Room left for what the KV put adds to the record in the same message: its subject
 * (`$KV.weir_coordinator_<name ≤ 64>.checkpoint`) and headers (the expected last sequence of the
 * fenced write). Both are well under 300 bytes; 1 KiB leaves room for what a newer client adds.
 */
export const RECORD_HEADROOM_BYTES = 1024;

/** The smallest `cluster.maxRecordBytes` (a record with one task's handles is already hundreds of bytes). */
export const MIN_RECORD_BYTES = 1024;

/**
 * The longest record the coordinator commits: the server's `max_payload` (from the connection's
 * INFO; undefined before it, then the NATS default 1 MiB) less the headroom, and at most
 * `maxRecordBytes` when given.
 */
export function recordLimit(maxPayload: number | undefined, maxRecordBytes?: number): number {
  const server = (maxPayload ?? 1024 * 1024) - RECORD_HEADROOM_BYTES;
  return maxRecordBytes === undefined ? server : Math.min(server, maxRecordBytes);
}

/**
 * Why checkpoint `checkpointId`'s record of `bytes` cannot be committed under `limit`, naming what
 * to change; null when it fits.
 */
export function oversizeRecord(checkpointId: number, bytes: number, limit: number): string | null {
  if (bytes <= limit) return null;
  return (
    `checkpoint ${checkpointId}: its record is ${bytes} bytes, over the limit of ${limit} bytes ` +
    "(the NATS server's max_payload less the KV message's headroom, or cluster.maxRecordBytes); " +
    'aborted, and every task takes a full snapshot next (the incremental chains re-base). ' +
    'If this repeats, lower checkpointing.fullEvery (shorter chains) or maxParallelism (fewer ' +
    "chunk handles per snapshot), or raise the server's max_payload"
  );
}

/**
 * The commit of `ClusterCheckpoints` (its `commit` option) under `limit`: encodes the record and,
 * when it is too long, aborts with `rebase` (nothing written, `warn` told why); otherwise hands the
 * encoded record to `commitEncoded`, the fenced write.
 */
export async function commitWithinLimit(
  record: ClusterCheckpointRecord,
  limit: number,
  commitEncoded: (encoded: string) => Promise<ClusterCommitOutcome>,
  warn: (message: string, fields: { checkpointId: number; recordBytes: number; limit: number }) => void,
): Promise<ClusterCommitOutcome> {
  const encoded = JSON.stringify(record);
  const bytes = Buffer.byteLength(encoded);
  const oversize = oversizeRecord(record.checkpointId, bytes, limit);
  if (oversize === null) return commitEncoded(encoded);
  warn(oversize, { checkpointId: record.checkpointId, recordBytes: bytes, limit });
  return { state: 'aborted', reason: oversize, rebase: true };
}
