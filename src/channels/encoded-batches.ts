/**
 * Record batches as a ring carried them: what an overtaking barrier passed (ChannelReader), kept
 * encoded so that taking them as channel state costs one copy of their bytes instead of a decode
 * and a re-encode (issue 14: that re-encode, ~100 k records for a full 1 MiB ring, ran before the
 * task could snapshot, and its decode before the barrier was even delivered).
 */
import { decodeEncodedBatch } from './record-codec.js';

export interface EncodedBatches {
  /** Payloads of records frames in channel order; owned copies (never views of the ring). */
  readonly payloads: readonly Uint8Array[];
  /**
   * The channel's shared msgpack shapes when the last of them was read: enough to decode every
   * payload on its own (shape-codec batches need none). Shared, never mutated.
   */
  readonly structures: readonly (readonly string[])[];
}

/** The records of `batches`, one array per payload. For restore and tests (a decoder per payload). */
export function decodeBatches(batches: EncodedBatches): unknown[][] {
  return batches.payloads.map((p) => decodeEncodedBatch(p, batches.structures));
}
