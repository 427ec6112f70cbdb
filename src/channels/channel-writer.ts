/**
 * ChannelWriter: the producer end of one channel (one ring to one consumer).
 *
 * Roles: used by exactly one thread, the producer task's. It writes the ring (writer side) and
 * rings the consumer's doorbell after publishing.
 * Layout: none of its own (ring-buffer.ts, doorbell.ts).
 * Publish order: frames are published in the order they were produced: a `structures` frame
 * before the first batch that uses its shapes, a batch before any control frame written after
 * its records, pending frames before new ones. The doorbell is rung after the ring's publishing
 * store, once per call that published anything (not per frame).
 * Staleness: the ring's free space can only be under-estimated here; `closed` can be seen late,
 * so a write after the reader closed may still be buffered locally; it fails at the next flush.
 *
 * One file (over 400 lines): one class whose batching, fragmenting of large records, pending
 * frames and flush all guard the same publish order above; split apart, each part would have to
 * re-check the others' invariants.
 */
import { ChannelClosedError, InvalidOptionError, RecordTooLargeError } from '../errors.js';
import { Doorbell } from './doorbell.js';
import type { CheckpointBarrier, ControlFrame } from './frame.js';
import { createControlScratch, encodeControlFrame } from './frame-codec.js';
import { CLOSED_BY, FRAGMENT_PREFIX_BYTES, FRAME_FLAG, FRAME_TAG } from './layout.js';
import { RecordCodec } from './record-codec.js';
import { RingBuffer } from './ring-buffer.js';

export interface ChannelWriterOptions {
  /** Flush a batch once it holds this many records. Default 256. */
  readonly batchRecords?: number;
  /**
   * Flush a batch once its ESTIMATED encoded size reaches this many bytes. The estimate is the
   * record count times the average encoded record size of the previous batch, so the first batch
   * of a channel, or a batch after a change of record size, can overshoot. Default 64 KiB.
   */
  readonly batchBytes?: number;
  /**
   * Largest encoded record accepted. Records larger than the ring's frame limit are fragmented
   * across several frames (and reassembled by the reader) up to this size; above it `write`
   * (or the flush it triggers) throws RecordTooLargeError. Default 64 MiB.
   */
  readonly maxRecordBytes?: number;
  /**
   * Encode batches of one flat shape with the shape codec (shape-codec.ts) instead of msgpack.
   * Default true; false is for benchmarks that compare the two.
   */
  readonly shapeBatches?: boolean;
  /** The operator whose records this channel carries, for errors about them (e.g. a function value). */
  readonly producer?: string;
  /**
   * Wake-up batching, ms; 0 (default) rings the consumer's doorbell after every publish. When > 0
   * and the consumer is parked, a batch published because it was full leaves the doorbell unrung
   * until the first such batch the consumer has not read has waited this long (checked at each
   * full batch and every 8th record written meanwhile: no timer) or the ring is a quarter full (of
   * its in-flight limit). A consumer woken by another producer of its gate that read this
   * writer's unrung batches restarts that wait: one wake-up per delay per consumer, not per
   * producer.
   * Everything else rings at once: `flush` (the task's input went idle), control frames,
   * {@link ChannelWriter.ringDeferred} (the task is about to wait), a wait for capacity, close.
   * So a busy producer slower than its consumer wakes it once per many batches, which it then
   * drains in one go, and a producer that goes idle or blocks still wakes it at once. The price: a full batch waits unrung up to this long plus the time to write
   * 8 records (Flink's buffer timeout, for wake-ups).
   */
  readonly wakeDelayMs?: number;
  /** Clock for `wakeDelayMs` (ms). Default `performance.now`. For tests. */
  readonly now?: () => number;
}

export const DEFAULT_BATCH_RECORDS = 256;
export const DEFAULT_BATCH_BYTES = 64 * 1024;
export const DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** A frame that did not fit into the ring yet. Owns its bytes (copied out of codec scratch). */
interface PendingFrame {
  readonly word: number;
  /** Fragment prefix (first fragment only) or an empty array. */
  readonly head: Uint8Array;
  readonly body: Uint8Array;
}

const EMPTY = new Uint8Array(0);

/**
 * A copy that owns its memory. Not `payload.slice()`: codecs may hand out Node Buffers, whose
 * `slice` is a view (msgpackr's `pack` returns one).
 */
function copyBytes(payload: Uint8Array): Uint8Array {
  return new Uint8Array(payload);
}

/**
 * Producer end of a channel. `write` is synchronous and never blocks: records go into the current
 * batch; a full batch is encoded and published; what the ring cannot take waits in a local
 * pending queue.
 *
 * Memory bound: the pending queue is NOT bounded by this class. The caller bounds it by checking
 * {@link backlogged} after writing and, when true, awaiting {@link waitForCapacity} (or calling
 * {@link waitForCapacitySync}) before producing more. Doing so bounds local memory to about one
 * batch (plus one record) beyond the ring.
 *
 * Flush rule: a batch is published when it is full (count or estimated bytes), before any control
 * frame (so barriers never overtake records), and when the task calls {@link flush} — which it
 * must do whenever its input goes idle, so latency stays low without a timer.
 *
 * Graceful end: `writeControl({ kind: 'end-of-partition' })`, drain (`flush()` / `waitForCapacity()`
 * until `flush()` returns true), then `close()`; {@link finish} does exactly that.
 * Cancel: `close()` alone; unpublished records are dropped.
 */
export class ChannelWriter {
  readonly ring: RingBuffer;
  readonly doorbell: Doorbell;
  readonly batchRecords: number;
  readonly batchBytes: number;
  readonly maxRecordBytes: number;
  readonly wakeDelayMs: number;
  /** Counters of this endpoint. Ring parks are in `ring.stats`, notifies in `doorbell.stats`. */
  readonly stats = {
    records: 0,
    batches: 0,
    framesPublished: 0,
    bytesPublished: 0,
    fragmented: 0,
    copiedToPending: 0,
    overtakingBarriers: 0,
    /** Full batches published without ringing a parked consumer (wakeDelayMs). */
    deferredRings: 0,
  };

  readonly #codec: RecordCodec;
  readonly #now: () => number;
  readonly #controlScratch = createControlScratch();
  /** Records of the open batch. Invariant: shorter than batchRecords between calls. */
  #batch: unknown[] = [];
  /** Key groups of the open batch's records (`write`'s second argument); allocated on first use. */
  #keyGroups: Uint16Array | null = null;
  /** How many of the open batch's records came with a key group (all or none is the norm). */
  #keyed = 0;
  /** Set by {@link interruptWait}; consumed by the next {@link waitForCapacity}. */
  #interrupted = false;
  /** Average encoded bytes per record of the last batch; drives the batchBytes estimate. */
  #avgRecordBytes = 16;
  /** FIFO of frames waiting for ring space; entries before #pendingHead are already published. */
  #pending: PendingFrame[] = [];
  #pendingHead = 0;
  #pendingBytes = 0;
  /** Whether something was published since the doorbell was last rung. */
  #unrung = false;
  /** performance.now() when a full batch was first left unrung for a parked consumer; -1 after every ring. */
  #deferredSince = -1;
  #closedLocally = false;

  constructor(
    ring: SharedArrayBuffer | RingBuffer,
    doorbell: SharedArrayBuffer | Doorbell,
    options: ChannelWriterOptions = {},
  ) {
    this.ring = ring instanceof RingBuffer ? ring : new RingBuffer(ring);
    this.doorbell = doorbell instanceof Doorbell ? doorbell : new Doorbell(doorbell);
    this.batchRecords = positiveInteger('batchRecords', options.batchRecords ?? DEFAULT_BATCH_RECORDS);
    this.batchBytes = positiveInteger('batchBytes', options.batchBytes ?? DEFAULT_BATCH_BYTES);
    this.maxRecordBytes = positiveInteger(
      'maxRecordBytes',
      options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES,
    );
    this.wakeDelayMs = options.wakeDelayMs ?? 0;
    this.#now = options.now ?? (() => performance.now());
    if (!(this.wakeDelayMs >= 0 && this.wakeDelayMs <= 60_000)) {
      throw new InvalidOptionError(
        'wakeDelayMs',
        `must be in [0, 60000] ms, got ${String(options.wakeDelayMs)}`,
      );
    }
    this.#codec = new RecordCodec({ shapeBatches: options.shapeBatches, producer: options.producer });
  }

  /** Whether frames are waiting for ring space. When true, stop producing and wait for capacity. */
  get backlogged(): boolean {
    return this.#pendingHead < this.#pending.length;
  }

  /**
   * Share of the ring in use, 1 while frames wait for room (the producer is backpressured). Read
   * for metrics (two atomic loads), stale like the ring's indices.
   */
  get fillRatio(): number {
    return this.backlogged ? 1 : this.ring.usedBytes / this.ring.capacity;
  }

  /** Payload bytes waiting in the pending queue (not counting the open batch). */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** Records in the open (not yet encoded) batch. */
  get bufferedRecords(): number {
    return this.#batch.length;
  }

  /**
   * Appends `record` to the open batch; publishes the batch when full. Never blocks.
   * Throws ChannelClosedError if the channel is closed (seen at the next flush if the reader
   * closed it), RecordTooLargeError for a record above `maxRecordBytes` (then the whole open
   * batch is dropped; the ring is untouched and the writer stays usable).
   *
   * `keyGroup` (0..65535): the record's key group, from the producer's hash partitioner. When every
   * record of a batch has one, they travel in a `key-groups` frame before the batch and the reader
   * hands them out as `RecordsFrame.keyGroups`; a batch with some records lacking one sends none.
   */
  write(record: unknown, keyGroup = -1): void {
    if (this.#closedLocally) throw this.#closedError();
    const batch = this.#batch;
    if (keyGroup >= 0) {
      const groups = this.#keyGroups ?? this.#allocateKeyGroups();
      if (batch.length < groups.length) {
        groups[batch.length] = keyGroup;
        this.#keyed++;
      }
    }
    batch.push(record);
    this.stats.records++;
    if (batch.length >= this.batchRecords || batch.length * this.#avgRecordBytes >= this.batchBytes) {
      this.#throwIfClosed();
      const from = this.ring.writerIndex;
      this.#sealBatch();
      this.#drain();
      this.#ringOrDefer(from);
    } else if (this.#deferredSince >= 0 && (batch.length & 7) === 0) this.#ringIfOverdue();
  }

  /** Publishes the open batch, then `frame`, in that order (or queues them). Never blocks. */
  writeControl(frame: ControlFrame): void {
    this.#throwIfClosed();
    this.#sealBatch();
    const { word, payload } = encodeControlFrame(frame, this.#controlScratch);
    this.#emit(word, payload);
    this.#drain();
    this.#ringIfPublished();
  }

  /**
   * Unaligned checkpoints: seals the open batch, then posts `barrier` in the ring's priority slot
   * so that it overtakes every frame published or queued before it (the consumer records them as
   * channel state), even while the ring is full. Returns true when it overtook; false when the
   * slot is still held by an earlier barrier, in which case `barrier` was written in band like
   * {@link writeControl}. Never blocks.
   */
  writeOvertakingBarrier(barrier: CheckpointBarrier): boolean {
    this.#throwIfClosed();
    this.#sealBatch();
    const pendingFrames = this.#pending.length - this.#pendingHead;
    const type = barrier.checkpointType === 'savepoint' ? 1 : 0;
    if (!this.ring.postPriorityBarrier(barrier.checkpointId, barrier.timestamp, type, pendingFrames)) {
      this.writeControl(barrier);
      return false;
    }
    this.stats.overtakingBarriers++;
    this.#drain();
    this.#unrung = true;
    this.#ringIfPublished();
    return true;
  }

  /**
   * Publishes the open batch and the pending frames as far as the ring allows. Returns true when
   * everything is published. Call it whenever the task's input goes idle.
   */
  flush(): boolean {
    this.#throwIfClosed();
    this.#sealBatch();
    this.#drain();
    this.#ringIfPublished();
    return !this.backlogged;
  }

  /**
   * Rings the consumer's doorbell if something published was left unrung (`wakeDelayMs`). A task
   * calls it on every output before it waits for anything (capacity of another output, ...), so
   * that no consumer sleeps on data while its producer sleeps too.
   */
  ringDeferred(): void {
    this.#ringIfPublished();
  }

  /**
   * Resolves once the pending queue is empty, re-trying to publish each time the reader releases
   * space (parks with Atomics.waitAsync in between, without blocking the event loop). The open
   * batch is left alone. Rejects with ChannelClosedError if the channel is or gets closed.
   */
  async waitForCapacity(): Promise<void> {
    for (;;) {
      this.#throwIfClosed();
      this.#drain();
      this.#ringIfPublished();
      if (!this.backlogged) return;
      if (this.#interrupted) {
        this.#interrupted = false;
        return; // still backlogged: the caller serves what interrupted it, then waits again
      }
      await this.ring.parkWriterAsync(this.#nextPendingSize());
    }
  }

  /**
   * Makes a pending (or the next) {@link waitForCapacity} return even though the channel is still
   * backlogged, so the producing task can serve a control command — a cancel must not wait for a
   * consumer that stopped reading.
   */
  interruptWait(): void {
    this.#interrupted = true;
    this.ring.interruptWriterPark();
  }

  /**
   * Blocking variant of {@link waitForCapacity} (Atomics.wait): for benchmarks and simple
   * producers that own their thread. Returns false if `timeoutMs` elapsed with frames still pending.
   */
  waitForCapacitySync(timeoutMs = Infinity): boolean {
    const deadline = timeoutMs === Infinity ? Infinity : performance.now() + timeoutMs;
    for (;;) {
      this.#throwIfClosed();
      this.#drain();
      this.#ringIfPublished();
      if (!this.backlogged) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      this.ring.parkWriterSync(this.#nextPendingSize(), left);
    }
  }

  /** Writes EndOfPartition, waits until everything is published, then closes. */
  async finish(): Promise<void> {
    this.writeControl({ kind: 'end-of-partition' });
    while (!this.flush()) await this.waitForCapacity();
    this.close();
  }

  /**
   * Closes the channel (idempotent). Drops the open batch and the pending frames, marks the ring
   * closed and wakes the consumer; frames already published stay readable by the consumer.
   */
  close(): void {
    if (this.#closedLocally) return;
    this.#closedLocally = true;
    this.#batch = [];
    this.#keyed = 0;
    this.#pending = [];
    this.#pendingHead = 0;
    this.#pendingBytes = 0;
    this.ring.close('writer');
    this.doorbell.ring();
  }

  get closed(): boolean {
    return this.#closedLocally || this.ring.closed;
  }

  // ---------- internals ----------

  #throwIfClosed(): void {
    if (this.#closedLocally || this.ring.closed) throw this.#closedError();
  }

  #closedError(): ChannelClosedError {
    if (this.#closedLocally) return new ChannelClosedError('channel closed by this writer');
    return (this.ring.closedBits & CLOSED_BY.reader) !== 0
      ? new ChannelClosedError('channel closed by its consumer')
      : new ChannelClosedError('channel closed');
  }

  /** Encodes the open batch into frames (structures first, then the records). */
  #sealBatch(): void {
    const records = this.#batch;
    if (records.length === 0) return;
    this.#batch = [];
    const keyed = this.#keyed === records.length;
    this.#keyed = 0;
    let bytes = this.#codec.encodeBatch(records);
    if (bytes.length > this.maxRecordBytes) {
      this.#checkRecordSizes(records);
      bytes = this.#codec.encodeBatch(records); // sizing reused the codec's scratch
    }
    this.#avgRecordBytes = Math.max(1, bytes.length / records.length);
    this.stats.batches++;
    // Published first: the batch may reference shapes learned while encoding it.
    const structures = this.#codec.takeStructureUpdate();
    if (structures !== null) this.#emit(FRAME_TAG.structures, copyBytes(structures));
    if (keyed) {
      const groups = this.#keyGroups!;
      this.#emit(
        FRAME_TAG['key-groups'],
        new Uint8Array(groups.buffer, groups.byteOffset, records.length * Uint16Array.BYTES_PER_ELEMENT),
      );
    }
    this.#emit(FRAME_TAG.records, bytes);
  }

  #allocateKeyGroups(): Uint16Array {
    this.#keyGroups = new Uint16Array(this.batchRecords);
    return this.#keyGroups;
  }

  /** Rare path: a batch above maxRecordBytes. Throws for the first single record above the limit. */
  #checkRecordSizes(records: readonly unknown[]): void {
    for (const record of records) {
      const size = this.#codec.encodedSize(record);
      if (size > this.maxRecordBytes)
        throw new RecordTooLargeError(size, this.maxRecordBytes, 'maxRecordBytes');
    }
  }

  /**
   * Publishes one logical frame, or queues it (copied) behind the pending ones. Payloads larger
   * than the ring's frame limit are cut into fragments. `payload` may be codec scratch: it is
   * copied into the ring or into the queue before returning.
   */
  #emit(word: number, payload: Uint8Array): void {
    const max = this.ring.maxPayloadBytes;
    if (payload.length <= max) {
      if (!this.backlogged && this.#publish(word, EMPTY, payload)) return;
      this.#enqueue({ word, head: EMPTY, body: copyBytes(payload) });
      return;
    }
    this.stats.fragmented++;
    const prefix = new Uint8Array(FRAGMENT_PREFIX_BYTES);
    new DataView(prefix.buffer).setUint32(0, payload.length, true);
    let owned: Uint8Array | null = null; // copy of the payload's unpublished rest, once we must queue
    let offset = 0;
    while (offset < payload.length) {
      const first = offset === 0;
      const room = max - (first ? FRAGMENT_PREFIX_BYTES : 0);
      const end = Math.min(payload.length, offset + room);
      const pieceWord = word | FRAME_FLAG.fragment | (end === payload.length ? FRAME_FLAG.fragmentFinal : 0);
      const head = first ? prefix : EMPTY;
      if (
        owned === null &&
        !this.backlogged &&
        this.#publish(pieceWord, head, payload.subarray(offset, end))
      ) {
        offset = end;
        continue;
      }
      if (owned === null) owned = copyBytes(payload.subarray(offset));
      const base = payload.length - owned.length;
      this.#enqueue({ word: pieceWord, head, body: owned.subarray(offset - base, end - base) });
      offset = end;
    }
  }

  #publish(word: number, head: Uint8Array, body: Uint8Array): boolean {
    if (this.ring.tryWrite(word, head, body) === 0) return false;
    this.stats.framesPublished++;
    this.stats.bytesPublished += head.length + body.length;
    this.#unrung = true;
    return true;
  }

  #enqueue(frame: PendingFrame): void {
    this.#pending.push(frame);
    this.#pendingBytes += frame.head.length + frame.body.length;
    this.stats.copiedToPending++;
  }

  /** Publishes pending frames in order until the ring is full. */
  #drain(): void {
    const pending = this.#pending;
    while (this.#pendingHead < pending.length) {
      const frame = pending[this.#pendingHead];
      if (!this.#publish(frame.word, frame.head, frame.body)) break;
      this.#pendingBytes -= frame.head.length + frame.body.length;
      this.#pendingHead++;
    }
    if (this.#pendingHead === pending.length) {
      this.#pending = [];
      this.#pendingHead = 0;
    } else if (this.#pendingHead > 1024) {
      this.#pending = pending.slice(this.#pendingHead);
      this.#pendingHead = 0;
    }
  }

  #nextPendingSize(): number {
    const frame = this.#pending[this.#pendingHead];
    return frame.head.length + frame.body.length;
  }

  #ringIfPublished(): void {
    if (!this.#unrung) return;
    this.#unrung = false;
    this.#deferredSince = -1;
    this.doorbell.ring();
  }

  /**
   * While full batches wait unrung: rings once `wakeDelayMs` passed, so that a producer slow per
   * record (whose next batch takes long to fill) still wakes its consumer in time. Called every
   * 8th record while something waits (a clock read per 8 records); free otherwise.
   */
  #ringIfOverdue(): void {
    if (this.#now() - this.#deferredSince < this.wakeDelayMs) return;
    if (this.ring.consumedUpTo(this.ring.writerIndex)) {
      // Everything left unrung was read (another producer of the consumer's gate woke it): there
      // is nothing to wake it for.
      this.#unrung = false;
      this.#deferredSince = -1;
      return;
    }
    this.#ringIfPublished();
  }

  /**
   * After a full batch was published: {@link ringIfPublished}, unless the consumer is parked and
   * `wakeDelayMs` lets the frames wait for more. No wake-up is lost: the frames are published (a
   * consumer that wakes for any reason reads them, and a consumer that loads the doorbell sequence
   * before checking its rings sees them), and every path on which this producer stops publishing
   * (flush when idle, control frames, ringDeferred before a wait, waits for capacity, close)
   * rings. Cost while deferring: four atomic loads and a clock read per batch. `from`: the
   * ring's write index before this batch was published.
   */
  #ringOrDefer(from: number): void {
    if (!this.#unrung) return;
    if (this.wakeDelayMs > 0 && this.doorbell.consumerParked) {
      const now = this.#now();
      // The clock times the oldest unrung frame the consumer has not read. When it has read
      // everything published before this batch (another producer of its gate woke it, the
      // norm at parallelism > 1), the clock restarts with this batch: without that, each of a
      // consumer's producers wakes it once per delay on its own clock.
      if (this.#deferredSince < 0 || this.ring.consumedUpTo(from)) this.#deferredSince = now;
      if (
        now - this.#deferredSince < this.wakeDelayMs &&
        this.ring.usedBytes < this.ring.inFlightLimit >>> 2
      ) {
        this.stats.deferredRings++;
        return;
      }
    }
    this.#ringIfPublished();
  }
}

function positiveInteger(option: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new InvalidOptionError(option, `must be a positive integer, got ${String(value)}`);
  }
  return value;
}
