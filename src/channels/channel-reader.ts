/**
 * ChannelReader: the consumer end of one channel (one ring from one producer).
 *
 * Roles: used by exactly one thread, the consumer task's (reader side of the ring).
 * Layout: none of its own (ring-buffer.ts).
 * Publish order: each frame is decoded straight out of the ring (decoding copies), then its
 * space is released with the ring's one releasing store; frames an overtaking barrier passed are
 * copied out encoded instead, and decoded from the copy when delivered. Fragments are copied into a local
 * reassembly buffer and released piece by piece (a fragmented payload is larger than the ring).
 * Staleness: "closed" is loaded BEFORE checking for data, so when the ring looks empty after a
 * close was seen, every frame published before the close has been read: none is lost.
 */
import { ChannelClosedError, ChannelProtocolError } from '../errors.js';
import type { EncodedBatches } from './encoded-batches.js';
import type { CheckpointBarrier, Frame } from './frame.js';
import { decodeControlFrame, frameTag, isControlTag, isFinalFragment, isFragment } from './frame-codec.js';
import { CLOSED_BY, FRAGMENT_PREFIX_BYTES, FRAME_TAG } from './layout.js';
import { RecordCodec } from './record-codec.js';
import { RingBuffer } from './ring-buffer.js';

/** A frame an overtaking barrier passed: encoded (`frame` null) or, for control frames, decoded. */
interface QueuedFrame {
  readonly tag: number;
  readonly payload: Uint8Array;
  readonly frame: Frame | null;
}

const EMPTY = new Uint8Array(0);

/**
 * Consumer end of a channel.
 *
 * Close semantics: frames published before the producer closed stay readable. Once they are
 * drained, a channel that saw EndOfPartition simply stays empty (closing after the end is the
 * normal shutdown); a channel closed WITHOUT EndOfPartition makes {@link tryRead} throw
 * ChannelClosedError (the producer was cancelled or failed). After this reader's own `close()`,
 * `tryRead` throws ChannelClosedError at once.
 */
export class ChannelReader {
  readonly ring: RingBuffer;
  readonly stats = { frames: 0, records: 0, bytes: 0 };

  readonly #codec = new RecordCodec();
  #ended = false;
  #closedLocally = false;
  /** Set by #visit when the ring frame completed a user-visible Frame. */
  #frame: Frame | null = null;
  /** Reassembly of a fragmented payload: buffer, bytes filled, frame tag. */
  #assembly: Uint8Array | null = null;
  #assembled = 0;
  #assemblyTag = 0;
  /** Key groups of the next records frame (from the `key-groups` frame before it), or null. */
  #keyGroups: Uint16Array | null = null;
  /**
   * Frames an overtaking barrier passed, not yet delivered (delivered in order before any further
   * ring frame); entries before #queueHead are delivered. Records and key-groups frames are kept
   * encoded (`frame` null: copies of their ring bytes, decoded on delivery), control frames decoded.
   */
  #queue: QueuedFrame[] = [];
  #queueHead = 0;
  /** The priority barrier whose overtaken frames are being read, or null. */
  #collecting: { barrier: CheckpointBarrier; until: number; pendingLeft: number } | null = null;
  /** While collecting: frames go to the queue encoded (#keep) instead of being decoded (#decode). */
  #keeping = false;
  /** Overtaking barriers collected and not yet delivered (delivered before anything else). */
  #ready: { barrier: CheckpointBarrier; overtaken: EncodedBatches }[] = [];
  /** Record batches the last delivered overtaking barrier passed, until {@link takeOvertaken}. */
  #overtaken: EncodedBatches | null = null;

  constructor(ring: SharedArrayBuffer | RingBuffer) {
    this.ring = ring instanceof RingBuffer ? ring : new RingBuffer(ring);
  }

  /** Whether EndOfPartition has been read. */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * The next frame, or null when none is complete yet. Never blocks. Internal frames (shared
   * structures, fragments of a larger payload) are consumed on the way.
   * Throws ChannelClosedError as described in the class doc; ChannelProtocolError on corruption.
   */
  tryRead(): Frame | null {
    if (this.#closedLocally) throw new ChannelClosedError('channel closed by this reader');
    if (this.#ready.length > 0) return this.#nextReady();
    if (this.#collecting !== null || this.ring.priorityPosted()) {
      const barrier = this.#overtake();
      if (barrier !== null) return barrier;
      if (this.#collecting !== null) return null; // the writer's queued frames are not in yet
    }
    while (this.#queueHead < this.#queue.length) {
      const q = this.#queue[this.#queueHead++];
      if (this.#queueHead === this.#queue.length) {
        this.#queue = [];
        this.#queueHead = 0;
      }
      // Decoded only now, on delivery: the barrier that passed them did not wait for this.
      const frame = q.frame ?? this.#decode(q.tag, q.payload);
      if (frame !== null) return frame;
    }
    for (;;) {
      // Load `closed` before looking for data: see the file header.
      const closedBits = this.ring.closedBits;
      if (this.ring.tryRead(this.#visit) === 0) {
        // A barrier posted meanwhile stopped the ring's read: take it now.
        if (this.ring.priorityPosted()) return this.tryRead();
        if (closedBits !== 0 && !this.#ended) throw this.#closedError(closedBits);
        return null;
      }
      const frame = this.#frame;
      if (frame !== null) {
        this.#frame = null;
        return frame;
      }
    }
  }

  /**
   * The record batches the barrier {@link tryRead} just returned overtook, encoded (in flight at
   * the cut: the channel state of its checkpoint on this channel; they are delivered after the
   * barrier), or null when that barrier came in band. Clears them.
   */
  takeOvertaken(): EncodedBatches | null {
    const overtaken = this.#overtaken;
    this.#overtaken = null;
    return overtaken;
  }

  /**
   * Pulls an in-band barrier ahead of the frames before it (Flink's conversion of a timed-out
   * aligned barrier into a priority event): the first barrier, queued here or published in the
   * ring, for which `match` holds comes out of {@link tryRead} next, marked `unaligned`, and the
   * record batches before it are its overtaken frames ({@link takeOvertaken}: channel state),
   * delivered after it as for a barrier that overtook the ring. Frames after it stay where they
   * are. False (nothing changes) when no published frame is such a barrier, or while an
   * overtaking barrier is being taken. Cost: a scan of the published frames' headers, and when
   * one matches, one copy of the bytes before it (at most a ring).
   */
  pullBarrier(match: (barrier: CheckpointBarrier) => boolean): boolean {
    if (this.#closedLocally || this.#collecting !== null || this.#ready.length > 0) return false;
    if (this.ring.priorityPosted()) return false;
    const isMatch = (q: QueuedFrame) => q.frame?.kind === 'barrier' && match(q.frame);
    let at = this.#queue.findIndex((q, i) => i >= this.#queueHead && isMatch(q));
    if (at < 0) {
      const until = this.ring.scan(
        (word, payload) =>
          !isFragment(word) &&
          frameTag(word) === FRAME_TAG.barrier &&
          match(decodeControlFrame(FRAME_TAG.barrier, payload) as CheckpointBarrier),
      );
      if (until < 0) return false;
      const queued = this.#queue.length;
      this.#keeping = true;
      try {
        while (this.ring.readIndex !== until) {
          if (this.ring.tryRead(this.#visit) === 0)
            throw new ChannelProtocolError(`pulled barrier: frames before read index ${until} are missing`);
        }
      } finally {
        this.#keeping = false;
      }
      for (let i = this.#queue.length - 1; i >= queued; i--)
        if (isMatch(this.#queue[i])) {
          at = i;
          break;
        }
      if (at < 0)
        throw new ChannelProtocolError('pulled barrier: the barrier found by the scan was not read');
    }
    const barrier = this.#queue[at].frame as CheckpointBarrier;
    const payloads: Uint8Array[] = [];
    for (let i = this.#queueHead; i < at; i++) {
      const q = this.#queue[i];
      if (q.frame === null && q.tag === FRAME_TAG.records) payloads.push(q.payload);
    }
    this.#queue.splice(at, 1);
    this.#ready.push({
      barrier: { ...barrier, unaligned: true },
      overtaken: { payloads, structures: this.#codec.structures },
    });
    return true;
  }

  /** Whether a frame (or the close of an un-ended channel) is waiting: i.e. tryRead has work to do. */
  isReady(): boolean {
    if (this.#ready.length > 0 || this.#queueHead < this.#queue.length || this.ring.priorityPosted())
      return true;
    if (this.ring.hasData()) return true;
    return !this.#ended && this.ring.closed;
  }

  /** Closes the channel from the consumer side (idempotent) and wakes a parked producer. */
  close(): void {
    this.#closedLocally = true;
    this.ring.close('reader');
  }

  /**
   * Takes a posted priority barrier (or goes on with the one being collected): copies every frame
   * it overtook into the local queue, encoded — those published before its write index, then the
   * writer's queued ones as they come — and returns the barrier once all are in, with their
   * record payloads kept for {@link takeOvertaken}. Null while frames are still to come (the slot
   * stays held). Cost: one copy of the overtaken bytes (at most the ring); decoding waits for
   * delivery, so the barrier does not wait for it. Structures frames are applied at once (shapes
   * only accumulate, so the codec decodes the earlier queued batches all the same).
   */
  #overtake(): CheckpointBarrier | null {
    let c = this.#collecting;
    if (c === null) {
      const p = this.ring.takePriorityBarrier();
      if (p === null) return null;
      c = {
        barrier: {
          kind: 'barrier',
          checkpointId: p.checkpointId,
          timestamp: p.timestamp,
          checkpointType: p.type === 1 ? 'savepoint' : 'checkpoint',
          unaligned: true,
        },
        until: p.writeIndex,
        pendingLeft: p.pendingFrames,
      };
      this.#collecting = c;
      this.#keeping = true;
      try {
        // Published before the post: all readable now.
        while (this.ring.readIndex !== c.until) {
          if (this.ring.tryRead(this.#visit) === 0) {
            throw new ChannelProtocolError(
              `priority barrier ${p.checkpointId}: frames before write index ${c.until} are missing`,
            );
          }
        }
      } finally {
        this.#keeping = false;
      }
    }
    this.#keeping = true;
    try {
      while (c.pendingLeft > 0) {
        const closedBits = this.ring.closedBits;
        if (this.ring.tryRead(this.#visit) === 0) {
          if (closedBits !== 0) throw this.#closedError(closedBits);
          return null;
        }
        c.pendingLeft--;
      }
    } finally {
      this.#keeping = false;
    }
    this.#collecting = null;
    this.ring.releasePriority();
    // An older barrier written in band (the slot was held when it was sent) among the overtaken
    // frames is overtaken as well: it comes out first, with the records before it, and leaves
    // the queue — barriers of a channel stay in order.
    const structures = this.#codec.structures;
    const payloads: Uint8Array[] = [];
    const kept: QueuedFrame[] = [];
    for (let i = this.#queueHead; i < this.#queue.length; i++) {
      const q = this.#queue[i];
      const frame = q.frame;
      if (frame?.kind === 'barrier' && frame.unaligned && frame.checkpointId < c.barrier.checkpointId) {
        this.#ready.push({ barrier: frame, overtaken: { payloads: [...payloads], structures } });
        continue;
      }
      if (frame === null && q.tag === FRAME_TAG.records) payloads.push(q.payload);
      kept.push(q);
    }
    this.#queue = kept;
    this.#queueHead = 0;
    this.#ready.push({ barrier: c.barrier, overtaken: { payloads, structures } });
    return this.#nextReady();
  }

  /** The next overtaking barrier to deliver, its records kept for {@link takeOvertaken}. */
  #nextReady(): CheckpointBarrier {
    const r = this.#ready.shift()!;
    this.#overtaken = r.overtaken;
    return r.barrier;
  }

  /**
   * While collecting: queues a frame the barrier overtook. Records and key groups stay encoded
   * (`owned`: `payload` is already a private copy, a reassembled fragment; else it is a view of
   * the ring, copied here); shapes are applied now; control frames are decoded.
   */
  #keep(tag: number, payload: Uint8Array, owned: boolean): void {
    if (tag === FRAME_TAG.records || tag === FRAME_TAG['key-groups']) {
      this.#queue.push({ tag, payload: owned ? payload : payload.slice(), frame: null });
      return;
    }
    const frame = this.#decode(tag, payload);
    if (frame !== null) this.#queue.push({ tag, payload: EMPTY, frame });
  }

  #closedError(closedBits: number): ChannelClosedError {
    return (closedBits & CLOSED_BY.writer) !== 0
      ? new ChannelClosedError('channel closed by its producer before end of partition')
      : new ChannelClosedError('channel closed before end of partition');
  }

  readonly #visit = (word: number, payload: Uint8Array): void => {
    this.stats.frames++;
    this.stats.bytes += payload.length;
    const tag = frameTag(word);
    if (isFragment(word)) {
      this.#addFragment(tag, word, payload);
      return;
    }
    if (this.#assembly !== null)
      throw new ChannelProtocolError('unfragmented frame inside a fragmented payload');
    if (this.#keeping) this.#keep(tag, payload, false);
    else this.#frame = this.#decode(tag, payload);
  };

  #decode(tag: number, payload: Uint8Array): Frame | null {
    if (tag === FRAME_TAG.records) {
      const records = this.#codec.decodeBatch(payload);
      this.stats.records += records.length;
      const keyGroups = this.#keyGroups;
      if (keyGroups === null) return { kind: 'records', records };
      this.#keyGroups = null;
      if (keyGroups.length !== records.length) {
        throw new ChannelProtocolError(
          `key-groups frame has ${keyGroups.length} entries for a batch of ${records.length} records`,
        );
      }
      return { kind: 'records', records, keyGroups };
    }
    if (tag === FRAME_TAG['key-groups']) {
      if (this.#keyGroups !== null) throw new ChannelProtocolError('two key-groups frames in a row');
      if (payload.length % Uint16Array.BYTES_PER_ELEMENT !== 0) {
        throw new ChannelProtocolError(`key-groups frame of odd length ${payload.length}`);
      }
      // A copy: the payload is a view into the ring, whose space is released after this frame.
      // Copied byte-wise, so a payload at an odd offset (a reassembled fragment) is fine too.
      const groups = new Uint16Array(payload.length / Uint16Array.BYTES_PER_ELEMENT);
      new Uint8Array(groups.buffer).set(payload);
      this.#keyGroups = groups;
      return null;
    }
    if (tag === FRAME_TAG.structures) {
      this.#codec.applyStructureUpdate(payload);
      return null;
    }
    if (!isControlTag(tag)) throw new ChannelProtocolError(`unknown frame tag ${tag}`);
    const frame = decodeControlFrame(tag, payload);
    if (frame.kind === 'end-of-partition') this.#ended = true;
    return frame;
  }

  #addFragment(tag: number, word: number, payload: Uint8Array): void {
    let body = payload;
    if (this.#assembly === null) {
      if (payload.length < FRAGMENT_PREFIX_BYTES)
        throw new ChannelProtocolError('first fragment without prefix');
      const total = new DataView(payload.buffer, payload.byteOffset, FRAGMENT_PREFIX_BYTES).getUint32(
        0,
        true,
      );
      this.#assembly = new Uint8Array(total);
      this.#assembled = 0;
      this.#assemblyTag = tag;
      body = payload.subarray(FRAGMENT_PREFIX_BYTES);
    } else if (tag !== this.#assemblyTag) {
      throw new ChannelProtocolError(`fragment of tag ${tag} inside a payload of tag ${this.#assemblyTag}`);
    }
    const assembly = this.#assembly;
    if (this.#assembled + body.length > assembly.length) {
      throw new ChannelProtocolError(`fragments exceed their announced ${assembly.length} bytes`);
    }
    assembly.set(body, this.#assembled);
    this.#assembled += body.length;
    if (!isFinalFragment(word)) return;
    if (this.#assembled !== assembly.length) {
      throw new ChannelProtocolError(
        `fragments hold ${this.#assembled} of ${assembly.length} announced bytes`,
      );
    }
    this.#assembly = null;
    if (this.#keeping) this.#keep(tag, assembly, true);
    else this.#frame = this.#decode(tag, assembly);
  }
}
