/**
 * RingBuffer: a single-producer single-consumer ring of length-prefixed frames over one
 * SharedArrayBuffer.
 *
 * Roles: exactly one writer thread calls the writer methods (`tryWrite`, `parkWriter*`,
 * `freeBytes`); exactly one reader thread calls the reader methods (`tryRead`, `hasData`,
 * `availableBytes`). `close()` and the status getters may be called from either side.
 * Layout: see layout.ts (4 header lines, guard line, data region of `capacity` bytes, guard line).
 * Publish order: the writer stores the frame header and payload with plain stores, then publishes
 * with ONE `Atomics.store` of the write index. The reader decodes the frame in place, then releases
 * it with ONE `Atomics.store` of the read index, then wakes the writer if it flagged that it sleeps.
 * Staleness: the writer's idea of the read index, and the reader's idea of the write index, can
 * only lag; so `freeBytes` (writer) and `availableBytes` (reader) can only under-estimate, and
 * read from the other side they can be stale in either direction.
 *
 * One file (over 400 lines): the writer side, the reader side and the priority slot of an
 * overtaking barrier share the header words and their memory order; they are read together or
 * not at all.
 */
import { ChannelProtocolError } from '../errors.js';
import {
  CANARY_BYTE,
  CLOSED_BY,
  type ClosedBy,
  FRAME_ALIGN,
  FRAME_HEADER_BYTES,
  PRIORITY_FREE,
  PRIORITY_POSTED,
  PRIORITY_TAKEN,
  RING_CLOSED,
  RING_DATA_OFFSET,
  RING_GUARD_BYTES,
  RING_HEADER_BYTES,
  RING_IN_FLIGHT_LIMIT,
  RING_MAX_CAPACITY,
  RING_MIN_CAPACITY,
  RING_OVERHEAD_BYTES,
  RING_PRIORITY_ID_BYTE,
  RING_PRIORITY_PENDING,
  RING_PRIORITY_STATE,
  RING_PRIORITY_TIMESTAMP_BYTE,
  RING_PRIORITY_TYPE,
  RING_PRIORITY_WRITE_INDEX,
  RING_READ_INDEX,
  RING_WRITE_INDEX,
  RING_WRITER_WAITING,
  WRAP_MARKER,
} from './layout.js';
import { type ParkOutcome, parkAsync, parkSync } from './park.js';

/**
 * Receives one frame: its frame word (tag | flags) and a view of its payload IN the shared
 * memory. The view is valid only during the call: copy or decode it before returning.
 */
export type FrameVisitor = (word: number, payload: Uint8Array) => void;

/**
 * A barrier posted in the ring's priority slot: it overtakes every frame published before
 * `writeIndex`, and the `pendingFrames` frames the writer publishes next (queued locally when it
 * posted). The reader treats it as arrived now and those frames as in flight (channel state).
 */
export interface PriorityBarrier {
  readonly checkpointId: number;
  readonly timestamp: number;
  /** 0 checkpoint, 1 savepoint. */
  readonly type: number;
  readonly writeIndex: number;
  readonly pendingFrames: number;
}

const ALIGN_MASK = FRAME_ALIGN - 1;

/** Bytes of ring a frame with `payloadBytes` of payload occupies (header + payload + padding). */
export function frameBytes(payloadBytes: number): number {
  return (FRAME_HEADER_BYTES + payloadBytes + ALIGN_MASK) & ~ALIGN_MASK;
}

/**
 * SPSC byte ring carrying frames.
 *
 * Contract (ringbuf.js style):
 * - The write index is stored only by the writer thread; the read index only by the reader thread.
 *   Both are free-running 32-bit byte counters; a position in the data region is `index & (capacity - 1)`.
 * - Free space seen by the writer can only be UNDER-estimated (its copy of the read index lags);
 *   available bytes seen by the reader can only be UNDER-estimated (its copy of the write index lags).
 * - A frame never straddles the end of the region: if it does not fit before the end, the writer
 *   writes a wrap marker and the frame starts at offset 0 (marker and frame are published together).
 * - A frame's payload is at most `maxPayloadBytes` (half the capacity minus the frame header), so
 *   that a frame always fits into an empty ring, whatever the wrap position. Larger payloads are
 *   fragmented by the caller (ChannelWriter).
 * - `tryWrite` and `tryRead` never block and never throw on the hot path: they return the number
 *   of ring bytes they moved, `0` meaning full (write) or empty (read).
 * - Closing is sticky and does not discard data: frames published before `close()` stay readable.
 * - In-flight limit (buffer debloating): the reader may cap the bytes published and not yet read
 *   below the capacity ({@link setInFlightLimit}); `tryWrite` then refuses a frame that would
 *   take the ring past the limit, except into an EMPTY ring (so any limit lets a frame through and
 *   the writer never waits on a reader that has nothing to read). Lowering the limit never
 *   discards published frames; it only stops new ones until the reader got below it.
 */
export class RingBuffer {
  /** A zeroed ring SAB with `capacityBytes` of data region (a power of two) and canary guard lines. */
  static allocate(capacityBytes: number): SharedArrayBuffer {
    checkCapacity(capacityBytes);
    const buffer = new SharedArrayBuffer(RING_OVERHEAD_BYTES + capacityBytes);
    const bytes = new Uint8Array(buffer);
    bytes.fill(CANARY_BYTE, RING_HEADER_BYTES, RING_DATA_OFFSET);
    bytes.fill(CANARY_BYTE, RING_DATA_OFFSET + capacityBytes);
    return buffer;
  }

  /** True when both guard lines around the data region still hold their canary bytes. For tests. */
  static canariesIntact(buffer: SharedArrayBuffer): boolean {
    const bytes = new Uint8Array(buffer);
    const end = buffer.byteLength - RING_GUARD_BYTES;
    for (let i = RING_HEADER_BYTES; i < RING_DATA_OFFSET; i++) if (bytes[i] !== CANARY_BYTE) return false;
    for (let i = end; i < buffer.byteLength; i++) if (bytes[i] !== CANARY_BYTE) return false;
    return true;
  }

  readonly buffer: SharedArrayBuffer;
  /** Bytes in the data region (a power of two). */
  readonly capacity: number;
  /** Largest payload a single frame may carry. */
  readonly maxPayloadBytes: number;
  /** Counters of this endpoint only: writer parks, notifies the reader issued to wake the writer. */
  readonly stats = { writerParks: 0, writerNotifies: 0 };

  readonly #header: Int32Array;
  /** The header's f64 fields (priority slot). */
  readonly #headerView: DataView;
  readonly #bytes: Uint8Array;
  /** Same memory as #bytes; frame headers are 8-aligned so their words are read as int32. */
  readonly #words: Int32Array;
  readonly #mask: number;
  /** Writer side: own write index (authoritative). Reader side: unused. */
  #writeIndex: number;
  /** Writer side: last read index seen (lags the truth). */
  #cachedReadIndex: number;
  /** Reader side: own read index (authoritative). */
  #readIndex: number;
  /** Reader side: last write index seen (lags the truth). */
  #cachedWriteIndex: number;

  constructor(buffer: SharedArrayBuffer) {
    if (!(buffer instanceof SharedArrayBuffer)) throw new TypeError('a ring needs a SharedArrayBuffer');
    const capacity = buffer.byteLength - RING_OVERHEAD_BYTES;
    checkCapacity(capacity);
    this.buffer = buffer;
    this.capacity = capacity;
    this.maxPayloadBytes = capacity / 2 - FRAME_HEADER_BYTES;
    this.#mask = capacity - 1;
    this.#header = new Int32Array(buffer, 0, RING_HEADER_BYTES / 4);
    this.#headerView = new DataView(buffer, 0, RING_HEADER_BYTES);
    this.#bytes = new Uint8Array(buffer, RING_DATA_OFFSET, capacity);
    this.#words = new Int32Array(buffer, RING_DATA_OFFSET, capacity / 4);
    this.#writeIndex = this.#cachedWriteIndex = Atomics.load(this.#header, RING_WRITE_INDEX) >>> 0;
    this.#readIndex = this.#cachedReadIndex = Atomics.load(this.#header, RING_READ_INDEX) >>> 0;
  }

  // ---------- writer side ----------

  /**
   * Writer only. Copies `head` then `body` (optional) as the payload of one frame and publishes it.
   * Returns the ring bytes used (> 0), or 0 when there is not enough free space (nothing written).
   * A payload larger than `maxPayloadBytes` is a caller bug and throws RangeError.
   * Cost: one memcpy of the payload, one atomic store; one atomic load of the read index only when
   * the cached value says the ring is too full.
   */
  tryWrite(word: number, head: Uint8Array, body?: Uint8Array): number {
    const length = head.length + (body === undefined ? 0 : body.length);
    if (length > this.maxPayloadBytes) {
      throw new RangeError(
        `frame payload of ${length} bytes exceeds the ring's maximum of ${this.maxPayloadBytes}`,
      );
    }
    const total = frameBytes(length);
    let w = this.#writeIndex;
    let pos = w & this.#mask;
    const contiguous = this.capacity - pos;
    const needed = contiguous < total ? contiguous + total : total;
    if (this.#room(w) < needed) {
      this.#cachedReadIndex = Atomics.load(this.#header, RING_READ_INDEX) >>> 0;
      if (this.#room(w) < needed) return 0;
    }
    if (contiguous < total) {
      // Positions are 8-aligned, so at least 8 bytes remain: room for the marker word.
      this.#words[pos >> 2] = WRAP_MARKER | 0;
      w = (w + contiguous) >>> 0;
      pos = 0;
    }
    const at = pos >> 2;
    this.#words[at] = length;
    this.#words[at + 1] = word;
    this.#bytes.set(head, pos + FRAME_HEADER_BYTES);
    if (body !== undefined) this.#bytes.set(body, pos + FRAME_HEADER_BYTES + head.length);
    w = (w + total) >>> 0;
    this.#writeIndex = w;
    // The one publishing store: everything above becomes visible to the reader with it.
    Atomics.store(this.#header, RING_WRITE_INDEX, w | 0);
    return needed;
  }

  /**
   * Writer only: posts a barrier into the priority slot, overtaking every frame published so far
   * and the next `pendingFrames` frames (which the caller has queued and will publish first).
   * Returns false (nothing posted) while the reader still holds an earlier one, or once closed:
   * the caller then writes the barrier in band. Never blocks, whatever the ring's fill. The slot's
   * fields are plain stores published by the one `Atomics.store` of its state; the caller rings
   * the doorbell.
   */
  postPriorityBarrier(checkpointId: number, timestamp: number, type: number, pendingFrames: number): boolean {
    if (this.closedBits !== 0) return false;
    if (Atomics.load(this.#header, RING_PRIORITY_STATE) !== PRIORITY_FREE) return false;
    this.#header[RING_PRIORITY_WRITE_INDEX] = this.#writeIndex | 0;
    this.#header[RING_PRIORITY_PENDING] = pendingFrames;
    this.#header[RING_PRIORITY_TYPE] = type;
    this.#headerView.setFloat64(RING_PRIORITY_ID_BYTE, checkpointId, true);
    this.#headerView.setFloat64(RING_PRIORITY_TIMESTAMP_BYTE, timestamp, true);
    Atomics.store(this.#header, RING_PRIORITY_STATE, PRIORITY_POSTED);
    return true;
  }

  /** Writer only: whether a frame with `payloadBytes` would fit now (refreshes the read index). */
  canWrite(payloadBytes: number): boolean {
    const total = frameBytes(payloadBytes);
    const w = this.#writeIndex;
    const contiguous = this.capacity - (w & this.#mask);
    const needed = contiguous < total ? contiguous + total : total;
    this.#cachedReadIndex = Atomics.load(this.#header, RING_READ_INDEX) >>> 0;
    return this.#room(w) >= needed;
  }

  /**
   * Writer only: bytes a frame may take now given the cached read index — the free space, cut to
   * what the in-flight limit leaves unless the ring is empty. Cost: one atomic load (the limit).
   */
  #room(w: number): number {
    const used = (w - this.#cachedReadIndex) >>> 0;
    const free = this.capacity - used;
    if (used === 0) return free;
    const limit = Atomics.load(this.#header, RING_IN_FLIGHT_LIMIT);
    return limit > 0 && limit < this.capacity ? Math.min(free, limit - used) : free;
  }

  /** Writer only: free bytes (an under-estimate: the reader may have released more since). */
  freeBytes(): number {
    this.#cachedReadIndex = Atomics.load(this.#header, RING_READ_INDEX) >>> 0;
    return this.capacity - ((this.#writeIndex - this.#cachedReadIndex) >>> 0);
  }

  /**
   * Writer only. Blocks until the reader released space, the ring was closed, or the timeout.
   * Returns at once ('not-equal') if a frame of `payloadBytes` already fits or the ring is closed.
   *
   * Protocol (why the order matters): set the writer-waiting flag, THEN re-check space and closed,
   * THEN wait on the flag word while it is 1. The reader releases space, THEN exchanges the flag
   * to 0 and notifies if it was 1; a closer sets `closed`, THEN does the same. With SC atomics
   * either our re-check sees the released space/closed, or the waker sees our flag — and since it
   * clears the very word we wait on, its notify cannot be lost even if it comes before our wait.
   */
  parkWriterSync(payloadBytes: number, timeoutMs = Infinity): ParkOutcome {
    if (this.#prepareWriterPark(payloadBytes)) return 'not-equal';
    try {
      return parkSync(this.#header, RING_WRITER_WAITING, 1, timeoutMs);
    } finally {
      Atomics.store(this.#header, RING_WRITER_WAITING, 0);
    }
  }

  /** Writer only. Like {@link parkWriterSync} without blocking the event loop. */
  async parkWriterAsync(payloadBytes: number, timeoutMs = Infinity): Promise<ParkOutcome> {
    if (this.#prepareWriterPark(payloadBytes)) return 'not-equal';
    try {
      return await parkAsync(this.#header, RING_WRITER_WAITING, 1, timeoutMs);
    } finally {
      Atomics.store(this.#header, RING_WRITER_WAITING, 0);
    }
  }

  /** Sets the flag and re-checks; true means "don't park" (flag already cleared again). */
  #prepareWriterPark(payloadBytes: number): boolean {
    Atomics.store(this.#header, RING_WRITER_WAITING, 1);
    if (this.canWrite(payloadBytes) || this.closedBits !== 0) {
      Atomics.store(this.#header, RING_WRITER_WAITING, 0);
      return true;
    }
    this.stats.writerParks++;
    return false;
  }

  // ---------- reader side ----------

  /**
   * Reader only. Hands the next frame to `visit`, then releases its space and wakes a parked
   * writer. Returns the ring bytes released (> 0), or 0 when the ring is empty.
   * If `visit` throws, the frame is NOT released and the error propagates.
   * Cost: one atomic store of the read index; one atomic load of the write index only when the
   * cached value says the ring is empty; one atomic load of the writer flag.
   */
  tryRead(visit: FrameVisitor): number {
    let r = this.#readIndex;
    let available = (this.#cachedWriteIndex - r) >>> 0;
    if (available === 0) {
      this.#cachedWriteIndex = Atomics.load(this.#header, RING_WRITE_INDEX) >>> 0;
      available = (this.#cachedWriteIndex - r) >>> 0;
      if (available === 0) return 0;
    }
    // A posted priority barrier stops reading until the reader took it: checked after every
    // refresh of the write index and before every frame, so no frame published after the post
    // is read before the barrier is seen (then the posted write index is never behind us).
    if (Atomics.load(this.#header, RING_PRIORITY_STATE) === PRIORITY_POSTED) return 0;
    let pos = r & this.#mask;
    let length = this.#words[pos >> 2] >>> 0;
    let released = 0;
    if (length === WRAP_MARKER) {
      released = this.capacity - pos;
      r = (r + released) >>> 0;
      pos = 0;
      length = this.#words[0] >>> 0;
    }
    const total = frameBytes(length);
    if (length > this.maxPayloadBytes || released + total > available) {
      throw new ChannelProtocolError(
        `ring frame at position ${pos} claims ${length} payload bytes with ${available} bytes published`,
      );
    }
    visit(
      this.#words[(pos >> 2) + 1],
      this.#bytes.subarray(pos + FRAME_HEADER_BYTES, pos + FRAME_HEADER_BYTES + length),
    );
    r = (r + total) >>> 0;
    this.#readIndex = r;
    // The one releasing store; then wake the writer if it flagged that it sleeps — under an
    // in-flight limit only once the ring is down to half of it, so that a woken writer publishes
    // several frames per wake-up instead of one (the ring always drains to that point: the reader
    // only stops reading a channel it blocked, and then it wakes nobody either way). Without a
    // limit it wakes the writer per frame: waking at half free too was measured slower under
    // load (bench/README.md "pipeline", "Tried and not kept").
    Atomics.store(this.#header, RING_READ_INDEX, r | 0);
    if (
      Atomics.load(this.#header, RING_WRITER_WAITING) !== 0 &&
      this.#belowWakeMark(r) &&
      Atomics.exchange(this.#header, RING_WRITER_WAITING, 0) !== 0
    ) {
      Atomics.notify(this.#header, RING_WRITER_WAITING);
      this.stats.writerNotifies++;
    }
    return released + total;
  }

  /** Reader only: whether a priority barrier is posted and not yet taken. One atomic load. */
  priorityPosted(): boolean {
    return Atomics.load(this.#header, RING_PRIORITY_STATE) === PRIORITY_POSTED;
  }

  /**
   * Reader only: takes the posted priority barrier (the slot stays held, TAKEN, so the writer
   * posts no other until {@link releasePriority}), or null when none is posted.
   */
  takePriorityBarrier(): PriorityBarrier | null {
    if (Atomics.load(this.#header, RING_PRIORITY_STATE) !== PRIORITY_POSTED) return null;
    const barrier: PriorityBarrier = {
      checkpointId: this.#headerView.getFloat64(RING_PRIORITY_ID_BYTE, true),
      timestamp: this.#headerView.getFloat64(RING_PRIORITY_TIMESTAMP_BYTE, true),
      type: this.#header[RING_PRIORITY_TYPE],
      writeIndex: this.#header[RING_PRIORITY_WRITE_INDEX] >>> 0,
      pendingFrames: this.#header[RING_PRIORITY_PENDING],
    };
    if ((barrier.writeIndex - this.#readIndex) >>> 0 > this.capacity) {
      throw new ChannelProtocolError(
        `priority barrier ${barrier.checkpointId} posted at write index ${barrier.writeIndex}, behind the read index ${this.#readIndex}`,
      );
    }
    Atomics.store(this.#header, RING_PRIORITY_STATE, PRIORITY_TAKEN);
    return barrier;
  }

  /**
   * Reader only: looks through the published frames without reading them (nothing is released),
   * oldest first, calling `visit` with each frame's word and a view of its payload (valid only
   * during the call) until it returns true. Returns the read index just past that frame, or -1
   * when none matched (or a priority barrier is posted: its frames are the overtake's). Used to
   * find an in-band barrier a late alignment pulls ahead of the frames before it. Cost: two word
   * reads per frame published (~one per batch), plus the visitor's.
   */
  scan(visit: (word: number, payload: Uint8Array) => boolean): number {
    if (Atomics.load(this.#header, RING_PRIORITY_STATE) === PRIORITY_POSTED) return -1;
    this.#cachedWriteIndex = Atomics.load(this.#header, RING_WRITE_INDEX) >>> 0;
    let r = this.#readIndex;
    let available = (this.#cachedWriteIndex - r) >>> 0;
    while (available > 0) {
      let pos = r & this.#mask;
      let length = this.#words[pos >> 2] >>> 0;
      if (length === WRAP_MARKER) {
        const skipped = this.capacity - pos;
        r = (r + skipped) >>> 0;
        available -= skipped;
        pos = 0;
        length = this.#words[0] >>> 0;
      }
      const total = frameBytes(length);
      if (length > this.maxPayloadBytes || total > available) {
        throw new ChannelProtocolError(
          `ring frame at position ${pos} claims ${length} payload bytes with ${available} bytes published`,
        );
      }
      r = (r + total) >>> 0;
      available -= total;
      if (
        visit(
          this.#words[(pos >> 2) + 1],
          this.#bytes.subarray(pos + FRAME_HEADER_BYTES, pos + FRAME_HEADER_BYTES + length),
        )
      )
        return r;
    }
    return -1;
  }

  /** Reader only: frees the priority slot once the overtaken frames are collected. */
  releasePriority(): void {
    Atomics.store(this.#header, RING_PRIORITY_STATE, PRIORITY_FREE);
  }

  /** Writer only: the write index (free-running byte counter) after the last published frame. */
  get writerIndex(): number {
    return this.#writeIndex;
  }

  /**
   * Writer only: whether the reader has released everything published before `index` (a
   * {@link writerIndex} taken earlier). One atomic load; stale, so it can only answer false late.
   */
  consumedUpTo(index: number): boolean {
    return ((Atomics.load(this.#header, RING_READ_INDEX) - index) | 0) >= 0;
  }

  /** Reader only: the read index (free-running byte counter). */
  get readIndex(): number {
    return this.#readIndex;
  }

  /** Reader only: whether a parked writer is worth waking once the read index is `r`. */
  #belowWakeMark(r: number): boolean {
    const limit = Atomics.load(this.#header, RING_IN_FLIGHT_LIMIT);
    // The cached write index lags, so `used` is under-estimated: we can only wake early.
    return limit === 0 || (this.#cachedWriteIndex - r) >>> 0 <= limit >>> 1;
  }

  /** Reader only: whether a frame is published (refreshes the write index when the cache says empty). */
  hasData(): boolean {
    if (this.#cachedWriteIndex !== this.#readIndex) return true;
    this.#cachedWriteIndex = Atomics.load(this.#header, RING_WRITE_INDEX) >>> 0;
    return this.#cachedWriteIndex !== this.#readIndex;
  }

  /**
   * Reader only: caps the bytes the writer may keep published and unread at `bytes` (buffer
   * debloating; 0 or ≥ capacity = no cap). Raising it wakes a parked writer, which re-checks.
   * Lowering it takes effect at the writer's next frame; frames already published stay.
   */
  setInFlightLimit(bytes: number): void {
    const limit = bytes >= this.capacity ? 0 : Math.max(0, Math.floor(bytes));
    const previous = Atomics.exchange(this.#header, RING_IN_FLIGHT_LIMIT, limit);
    const raised = limit === 0 ? previous !== 0 : previous !== 0 && limit > previous;
    if (raised && Atomics.exchange(this.#header, RING_WRITER_WAITING, 0) !== 0) {
      Atomics.notify(this.#header, RING_WRITER_WAITING);
      this.stats.writerNotifies++;
    }
  }

  /** The in-flight limit in bytes (the capacity when there is none). Either side; stale either way. */
  get inFlightLimit(): number {
    const limit = Atomics.load(this.#header, RING_IN_FLIGHT_LIMIT);
    return limit === 0 ? this.capacity : limit;
  }

  /** Bytes published and not yet released. Exact-or-under from the reader; stale either way from the writer. */
  availableBytes(): number {
    const w = Atomics.load(this.#header, RING_WRITE_INDEX) >>> 0;
    const r = Atomics.load(this.#header, RING_READ_INDEX) >>> 0;
    return (w - r) >>> 0;
  }

  /**
   * Writer only: wakes this writer's own pending {@link parkWriterAsync} (its thread has something
   * else to do, e.g. serve a cancel while the consumer no longer reads); the waiter re-checks.
   */
  interruptWriterPark(): void {
    if (Atomics.exchange(this.#header, RING_WRITER_WAITING, 0) !== 0) {
      Atomics.notify(this.#header, RING_WRITER_WAITING);
    }
  }

  // ---------- either side ----------

  /**
   * Either side, any time; idempotent. Marks the ring closed (by whom, for error messages) and
   * wakes a parked writer. It does NOT wake a parked reader: the ring does not know its doorbell;
   * ChannelWriter.close() rings it. Published frames stay readable.
   */
  close(by: ClosedBy): void {
    Atomics.or(this.#header, RING_CLOSED, CLOSED_BY[by]);
    if (Atomics.exchange(this.#header, RING_WRITER_WAITING, 0) !== 0) {
      Atomics.notify(this.#header, RING_WRITER_WAITING);
    }
  }

  /** Bit set of CLOSED_BY; 0 while open. Can be observed late, never early. */
  get closedBits(): number {
    return Atomics.load(this.#header, RING_CLOSED);
  }

  get closed(): boolean {
    return this.closedBits !== 0;
  }

  /**
   * Bytes published and not yet released, from either side (two atomic loads; stale in either
   * direction when read by the other side's thread). For metrics: the ring's fill.
   */
  get usedBytes(): number {
    const w = Atomics.load(this.#header, RING_WRITE_INDEX) >>> 0;
    const r = Atomics.load(this.#header, RING_READ_INDEX) >>> 0;
    return Math.min(this.capacity, (w - r) >>> 0);
  }

  /** Whether the writer has flagged that it sleeps (stale either way; for tests and metrics). */
  get writerParked(): boolean {
    return Atomics.load(this.#header, RING_WRITER_WAITING) !== 0;
  }
}

function checkCapacity(capacity: number): void {
  if (!Number.isInteger(capacity) || capacity < RING_MIN_CAPACITY || capacity > RING_MAX_CAPACITY) {
    throw new RangeError(
      `ring capacity must be an integer in [${RING_MIN_CAPACITY}, ${RING_MAX_CAPACITY}] bytes, got ${capacity}`,
    );
  }
  if ((capacity & (capacity - 1)) !== 0) {
    throw new RangeError(`ring capacity must be a power of two, got ${capacity}`);
  }
}
