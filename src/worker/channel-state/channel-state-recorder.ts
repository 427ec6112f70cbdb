/**
 * Records in-flight records for unaligned checkpoints (see barrier/unaligned-state.ts): between
 * a checkpoint's first barrier and the barrier of each other channel, every record batch read
 * from that channel is packed (msgpack, at receipt, so later mutation by user code cannot
 * change it) and kept as the checkpoint's channel state. The async part of the task's snapshot
 * waits for {@link ChannelStateRecorder.open}'s promise, which resolves with the batches once
 * every channel delivered the barrier, or with null when the checkpoint was aborted.
 *
 * Hot path: {@link isRecording} is one typed-array read per batch; nothing is recorded when no
 * unaligned checkpoint is in progress.
 */

import { Packr } from 'msgpackr';
import type { EncodedBatches } from '../../channels/encoded-batches.js';
import { SHAPE_BATCH_MARK } from '../../channels/shape-codec.js';

const NO_SHAPES: readonly (readonly string[])[] = [];

/** One recorded batch: the gate channel it came from and the records, packed. */
export interface ChannelStateBatch {
  readonly channel: number;
  readonly edgeId: number;
  readonly producerSubtask: number;
  readonly inputIndex: 0 | 1;
  /** The records: plain msgpack ({@link channelStatePackr}), or as the ring carried them when `ring` is set. */
  readonly records: Uint8Array;
  /**
   * Set for batches an overtaking barrier passed, kept in ring encoding (no decode and re-encode
   * at the barrier): the channel's shared shapes, which `decodeEncodedBatch` needs for a msgpack
   * batch (empty for a shape-codec batch, which describes itself). Absent in chunks written before.
   */
  readonly ring?: readonly (readonly string[])[];
}

interface Recording {
  readonly channels: Set<number>;
  readonly batches: ChannelStateBatch[];
  readonly resolve: (batches: ChannelStateBatch[] | null) => void;
  readonly done: Promise<ChannelStateBatch[] | null>;
}

export interface RecordedChannel {
  readonly edgeId: number;
  readonly producerSubtask: number;
  readonly inputIndex: 0 | 1;
}

/** Codec of channel-state chunks (plain msgpack: records are whatever the rings carried). */
export function channelStatePackr(): Packr {
  return new Packr({ useRecords: false, moreTypes: true });
}

export class ChannelStateRecorder {
  readonly #channels: readonly RecordedChannel[];
  /** Per gate channel: how many open recordings include it. */
  readonly #refs: Int32Array;
  readonly #recordings = new Map<number, Recording>();
  readonly #packr = channelStatePackr();
  /** Overtaken batches that arrived with the barrier that will open their checkpoint. */
  #staged: { checkpointId: number; batches: ChannelStateBatch[] } | null = null;

  constructor(channels: readonly RecordedChannel[]) {
    this.#channels = channels;
    this.#refs = new Int32Array(channels.length);
  }

  /** Begins checkpoint `checkpointId`'s channel state (before its channels are known). */
  open(checkpointId: number): Promise<ChannelStateBatch[] | null> {
    let resolve!: (b: ChannelStateBatch[] | null) => void;
    const done = new Promise<ChannelStateBatch[] | null>((r) => {
      resolve = r;
    });
    const staged = this.#staged?.checkpointId === checkpointId ? this.#staged.batches : [];
    this.#staged = null;
    this.#recordings.set(checkpointId, { channels: new Set(), batches: staged, resolve, done });
    return done;
  }

  /**
   * Records the batches an overtaking barrier of `checkpointId` passed on `channel`, as the ring
   * carried them (the reader's private copies: no user code can change them, and nothing is
   * decoded or packed here, so this costs O(batches), not O(records)). Call BEFORE handing the
   * barrier to the barrier handler: when the barrier opens the checkpoint they are staged for
   * {@link open}; {@link dropStaged} after the handler forgets them if it did not (a leftover barrier).
   */
  recordOvertaken(checkpointId: number, channel: number, batches: EncodedBatches): void {
    const ch = this.#channels[channel];
    const packed: ChannelStateBatch[] = [];
    for (const payload of batches.payloads) {
      packed.push({
        channel,
        edgeId: ch.edgeId,
        producerSubtask: ch.producerSubtask,
        inputIndex: ch.inputIndex,
        records: payload,
        ring: payload[0] === SHAPE_BATCH_MARK ? NO_SHAPES : batches.structures,
      });
    }
    const r = this.#recordings.get(checkpointId);
    if (r) r.batches.push(...packed);
    else this.#staged = { checkpointId, batches: packed };
  }

  /** Forgets overtaken batches no checkpoint took (see {@link recordOvertaken}). */
  dropStaged(): void {
    this.#staged = null;
  }

  start(checkpointId: number, channels: readonly number[]): void {
    const r = this.#get(checkpointId);
    for (const c of channels) {
      if (r.channels.has(c)) continue;
      r.channels.add(c);
      this.#refs[c]++;
    }
  }

  isRecording(channel: number): boolean {
    return this.#refs[channel] > 0;
  }

  /** Records a batch read from `channel` (call only when {@link isRecording}). */
  record(channel: number, records: readonly unknown[]): void {
    if (records.length === 0) return;
    const bytes = this.#packr.pack(records);
    const ch = this.#channels[channel];
    for (const r of this.#recordings.values()) {
      if (!r.channels.has(channel)) continue;
      r.batches.push({
        channel,
        edgeId: ch.edgeId,
        producerSubtask: ch.producerSubtask,
        inputIndex: ch.inputIndex,
        records: bytes,
      });
    }
  }

  stop(checkpointId: number, channel: number): void {
    const r = this.#get(checkpointId);
    if (r.channels.delete(channel)) this.#refs[channel]--;
  }

  finish(checkpointId: number): void {
    const r = this.#get(checkpointId);
    this.#release(r);
    this.#recordings.delete(checkpointId);
    r.resolve(r.batches);
  }

  /** Drops `checkpointId`'s channel state (aborted); unknown ids are ignored. */
  abort(checkpointId: number): void {
    const r = this.#recordings.get(checkpointId);
    if (!r) return;
    this.#release(r);
    this.#recordings.delete(checkpointId);
    r.resolve(null);
  }

  /** Aborts everything (the task ends). */
  close(): void {
    for (const id of [...this.#recordings.keys()]) this.abort(id);
  }

  /** Encodes a finished channel state as one chunk. */
  encode(batches: readonly ChannelStateBatch[]): Uint8Array {
    return this.#packr.pack(batches);
  }

  #release(r: Recording): void {
    for (const c of r.channels) this.#refs[c]--;
    r.channels.clear();
  }

  #get(checkpointId: number): Recording {
    const r = this.#recordings.get(checkpointId);
    if (!r) throw new Error(`no channel state is being recorded for checkpoint ${checkpointId}`);
    return r;
  }
}
