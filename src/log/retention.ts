/**
 * The retention rule, as a pure decision over the head of one partition.
 *
 * Retention deletes whole records from the start of a partition, oldest first, and stops at the
 * first record that no limit requires deleting. So it never deletes a record while keeping an
 * older one, and never more than the limits ask for:
 * - `maxBytes`: while the partition's stored bytes exceed `maxBytes`, the head goes, except the
 *   partition's newest record, which size never deletes (a record larger than `maxBytes` stays
 *   readable until the next append to its partition).
 * - `maxAgeMs`: while the head was appended more than `maxAgeMs` before now, it goes (this may
 *   empty a partition; offsets are never reused, `endOffset` stays).
 *
 * Retention knows nothing about readers: a reader (e.g. `sources.log`) that falls behind past the
 * limits loses the deleted records and sees a gap in the offsets, which `sources.log` counts.
 */

import type { RetentionPolicy } from './log-layout.js';

export interface PartitionHead {
  /** Stored bytes of every retained record of the partition. */
  readonly partitionBytes: number;
  /** Whether the head is the partition's newest record. */
  readonly isNewest: boolean;
  /** When the head record was appended (ms). */
  readonly headAppendedAt: number;
}

/** Whether retention deletes the head record. */
export function retentionDeletesHead(policy: RetentionPolicy, head: PartitionHead, nowMs: number): boolean {
  if (policy.maxAgeMs !== undefined && head.headAppendedAt < nowMs - policy.maxAgeMs) return true;
  if (policy.maxBytes !== undefined && head.partitionBytes > policy.maxBytes && !head.isNewest) return true;
  return false;
}

export function hasRetention(policy: RetentionPolicy): boolean {
  return policy.maxBytes !== undefined || policy.maxAgeMs !== undefined;
}
