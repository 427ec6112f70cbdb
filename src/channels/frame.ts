/**
 * The data-plane vocabulary: everything that travels through a channel, in order.
 *
 * A closed union keyed on `kind`; every `switch` over it ends in `assertNever` (`src/util/assert-never.ts`).
 * Barriers, cancel markers and watermarks travel in the same ring as record batches, so
 * a barrier can never overtake a record that was written before it.
 *
 * Note on naming: Flink's barrier carries a `CheckpointType` (checkpoint or savepoint). The frame
 * union already uses `kind` as its discriminant, so the barrier's type is `checkpointType`.
 */

export type CheckpointType = 'checkpoint' | 'savepoint';

/** A batch of records, in order. */
export interface RecordsFrame {
  readonly kind: 'records';
  readonly records: readonly unknown[];
  /**
   * The key group of each record (`keyGroups[i]` for `records[i]`), when the producer's hash
   * partitioner computed them (keyed edges); absent otherwise. Lets the keyed consumer skip hashing
   * the key a second time.
   */
  readonly keyGroups?: Uint16Array;
}

export interface CheckpointBarrier {
  readonly kind: 'barrier';
  readonly checkpointId: number;
  /** Trigger time, ms since the epoch (coordinator clock). */
  readonly timestamp: number;
  readonly checkpointType: CheckpointType;
  /** True when this barrier may overtake in-flight data (unaligned checkpoint). */
  readonly unaligned: boolean;
}

/** Tells downstream tasks that checkpoint `checkpointId` was aborted upstream: stop aligning for it. */
export interface CancelCheckpointMarker {
  readonly kind: 'cancel-checkpoint';
  readonly checkpointId: number;
}

export interface Watermark {
  readonly kind: 'watermark';
  /** Event time, ms. `Infinity` is the final watermark of a bounded input. */
  readonly timestamp: number;
}

/** The producer will write nothing more to this channel. */
export interface EndOfPartition {
  readonly kind: 'end-of-partition';
}

export type ControlFrame = CheckpointBarrier | CancelCheckpointMarker | Watermark | EndOfPartition;
export type Frame = RecordsFrame | ControlFrame;
export type FrameKind = Frame['kind'];
