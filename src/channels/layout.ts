/**
 * Every shared-memory layout constant of the data plane, in one place.
 *
 * Roles
 * - A ring (one per producer subtask → consumer subtask pair) has exactly one writer thread
 *   (the producer) and one reader thread (the consumer). Either side may close it.
 * - A doorbell (one per consumer task) is rung by every producer that feeds the consumer,
 *   and by anyone who wants the consumer to look up (`wake()`, close). Only the consumer
 *   parks on it.
 *
 * Ring layout (one SharedArrayBuffer; offsets in bytes; every header word on its own
 * 64-byte line so the writer's and the reader's hot words never share a cache line):
 *
 * ```
 *   0   write index     int32, written by the writer only (free-running byte counter, mod 2^32)
 *  64   read index      int32, written by the reader only (free-running byte counter, mod 2^32)
 * 128   writer waiting  int32, 1 = the writer is parked on this word (futex word of the writer)
 * 192   closed          int32, bit set of CLOSED_BY_* (set by either side, never cleared)
 * 256   in-flight limit int32, written by the reader only: bytes the writer may keep published and
 *                       unread (buffer debloating); 0 = no limit but the capacity
 * 320   priority slot   an unaligned barrier that overtakes the frames in the ring (see below)
 * 384   guard line      64 bytes of CANARY_BYTE (never written after allocation)
 * 448   data            `capacity` bytes (a power of two), frames at 8-byte aligned positions
 * 448+capacity          guard line, 64 bytes of CANARY_BYTE
 * ```
 *
 * Priority slot (one line; the writer fills it only while its state is FREE, the reader empties it):
 *
 * ```
 * +0   state          int32: 0 free, 1 posted (writer: Atomics.store after the fields), 2 taken
 *                     (reader: collecting the overtaken frames), back to 0 by the reader when done
 * +4   write index    int32: the writer's write index when it posted (frames before it are overtaken)
 * +8   pending frames int32: frames the writer had queued locally (not yet in the ring) when it
 *                     posted; they are overtaken too: the first `pending` frames after `write index`
 * +12  type           int32: 0 checkpoint, 1 savepoint
 * +16  checkpoint id  f64
 * +24  timestamp      f64
 * ```
 *
 * Frame (in the data region, never straddling its end):
 *
 * ```
 *   +0  payload length  uint32 (WRAP_MARKER = "skip to the start of the region")
 *   +4  frame word      low byte = FrameTag, higher bits = FRAME_FLAGS
 *   +8  payload         `length` bytes, then zero to 7 bytes of padding to the next 8-byte boundary
 * ```
 *
 * Publish order: the writer copies header and payload with plain stores, then publishes with ONE
 * `Atomics.store` of the write index; the reader copies/decodes, then releases the space with ONE
 * `Atomics.store` of the read index. Sequentially consistent atomics order the plain accesses.
 *
 * Staleness: each side's view of the other side's index is a snapshot that can only lag, so the
 * writer can only under-estimate free space and the reader can only under-estimate available
 * bytes; neither can over-estimate. `closed` can be observed late, never early.
 *
 * Doorbell layout (one SharedArrayBuffer, int32 words, each on its own line):
 *
 * ```
 *   0   sequence   bumped (Atomics.add) by anyone after publishing something for the consumer
 *  64   sleeping   futex word of the consumer: set to 1 by the consumer before it parks; cleared by
 *                  the consumer after, or by the first ringer that sees it (that ringer notifies)
 * 128   closed     1 once the doorbell is closed (task cancelled / gate closed); never cleared
 * ```
 */

/** Cache-line size we pad to. 64 bytes on x86-64 and most arm64 cores. */
export const CACHE_LINE_BYTES = 64;
const WORDS_PER_LINE = CACHE_LINE_BYTES / Int32Array.BYTES_PER_ELEMENT;

// ---------- ring header (indices into an Int32Array over the whole SAB) ----------

/** Write index word. Writer: store. Reader: load. */
export const RING_WRITE_INDEX = 0 * WORDS_PER_LINE;
/** Read index word. Reader: store. Writer: load. */
export const RING_READ_INDEX = 1 * WORDS_PER_LINE;
/** Writer-waiting flag, also the writer's futex word. Writer: store 1; reader/closer: exchange to 0 + notify. */
export const RING_WRITER_WAITING = 2 * WORDS_PER_LINE;
/** Closed bit set (CLOSED_BY_*). Either side: Atomics.or. */
export const RING_CLOSED = 3 * WORDS_PER_LINE;
/**
 * In-flight limit word (buffer debloating, input-gate.ts). Reader: store. Writer: load before
 * each write. 0 = the capacity is the only limit. A stale value only delays the change by a frame.
 */
export const RING_IN_FLIGHT_LIMIT = 4 * WORDS_PER_LINE;
/**
 * Priority slot (unaligned barriers that overtake the ring's frames; ring-buffer.ts
 * `postPriorityBarrier` / `takePriorityBarrier`). Word indices into the header's Int32Array;
 * the f64 fields are at byte offsets. State: writer stores POSTED (after the fields) only when
 * FREE; reader stores TAKEN, then FREE once it collected the overtaken frames.
 */
export const RING_PRIORITY_STATE = 5 * WORDS_PER_LINE;
export const RING_PRIORITY_WRITE_INDEX = RING_PRIORITY_STATE + 1;
export const RING_PRIORITY_PENDING = RING_PRIORITY_STATE + 2;
export const RING_PRIORITY_TYPE = RING_PRIORITY_STATE + 3;
export const RING_PRIORITY_ID_BYTE = RING_PRIORITY_STATE * 4 + 16;
export const RING_PRIORITY_TIMESTAMP_BYTE = RING_PRIORITY_STATE * 4 + 24;
export const PRIORITY_FREE = 0;
export const PRIORITY_POSTED = 1;
export const PRIORITY_TAKEN = 2;
export const RING_HEADER_BYTES = 6 * CACHE_LINE_BYTES;

/** One guard line before and one after the data region; filled with CANARY_BYTE at allocation. */
export const RING_GUARD_BYTES = CACHE_LINE_BYTES;
export const CANARY_BYTE = 0xa5;
/** Byte offset of the data region in the ring's SAB. */
export const RING_DATA_OFFSET = RING_HEADER_BYTES + RING_GUARD_BYTES;
/** Bytes of the SAB besides the data region. */
export const RING_OVERHEAD_BYTES = RING_HEADER_BYTES + 2 * RING_GUARD_BYTES;

/** Smallest allowed data region: must hold the largest control frame twice over. */
export const RING_MIN_CAPACITY = 256;
/** Largest allowed data region (indices are 32-bit free-running counters). */
export const RING_MAX_CAPACITY = 2 ** 30;

// ---------- frames ----------

export const FRAME_HEADER_BYTES = 8;
export const FRAME_ALIGN = 8;
/** Payload-length value that means "the rest of the region is unused, continue at offset 0". */
export const WRAP_MARKER = 0xffffffff;
/** The frame tag is the low byte of the frame word. */
export const FRAME_TAG_MASK = 0xff;

/**
 * Frame tags, built from one list (tag = position + 1; 0 is never a valid tag, so a zeroed
 * region cannot be mistaken for a frame). Internal tags (`structures`, `key-groups`) never surface
 * as a Frame. `key-groups`: one uint16 per record (platform byte order: both ends are threads of
 * one process), the key group of each record of the `records` frame that follows it.
 */
const FRAME_TAG_NAMES = [
  'records',
  'barrier',
  'cancel-checkpoint',
  'watermark',
  'end-of-partition',
  'structures',
  'key-groups',
] as const;
export type FrameTagName = (typeof FRAME_TAG_NAMES)[number];
export const FRAME_TAG: Readonly<Record<FrameTagName, number>> = Object.freeze(
  Object.fromEntries(FRAME_TAG_NAMES.map((name, i) => [name, i + 1])) as Record<FrameTagName, number>,
);

/**
 * Frame flags (bits above the tag byte), built from one list.
 * - `fragment`: this frame carries one piece of a payload too large for one frame. The first piece
 *   starts with an 8-byte prefix (uint32 total length, uint32 zero).
 * - `fragmentFinal`: the last piece of a fragmented payload.
 */
const FRAME_FLAG_NAMES = ['fragment', 'fragmentFinal'] as const;
export type FrameFlagName = (typeof FRAME_FLAG_NAMES)[number];
export const FRAME_FLAG: Readonly<Record<FrameFlagName, number>> = Object.freeze(
  Object.fromEntries(FRAME_FLAG_NAMES.map((name, i) => [name, 1 << (8 + i)])) as Record<
    FrameFlagName,
    number
  >,
);
/** Prefix of the first fragment: uint32 total payload length + 4 zero bytes (keeps the body 8-aligned). */
export const FRAGMENT_PREFIX_BYTES = 8;

/** Who closed a ring: bits of the RING_CLOSED word, built from one list. */
const CLOSED_BY_NAMES = ['writer', 'reader'] as const;
export type ClosedBy = (typeof CLOSED_BY_NAMES)[number];
export const CLOSED_BY: Readonly<Record<ClosedBy, number>> = Object.freeze(
  Object.fromEntries(CLOSED_BY_NAMES.map((name, i) => [name, 1 << i])) as Record<ClosedBy, number>,
);

// ---------- control frame payloads (fixed binary layout, little-endian, 8-aligned) ----------

/** barrier: f64 checkpointId | f64 timestamp | u8 checkpointType (0 checkpoint, 1 savepoint) | u8 unaligned */
export const BARRIER_CHECKPOINT_ID = 0;
export const BARRIER_TIMESTAMP = 8;
export const BARRIER_TYPE = 16;
export const BARRIER_UNALIGNED = 17;
export const BARRIER_PAYLOAD_BYTES = 18;
/** cancel-checkpoint: f64 checkpointId */
export const CANCEL_CHECKPOINT_ID = 0;
export const CANCEL_PAYLOAD_BYTES = 8;
/** watermark: f64 timestamp (±Infinity allowed) */
export const WATERMARK_TIMESTAMP = 0;
export const WATERMARK_PAYLOAD_BYTES = 8;
/** Largest control payload; scratch buffers are this big. */
export const MAX_CONTROL_PAYLOAD_BYTES = 24;

// ---------- doorbell (indices into an Int32Array over the doorbell SAB) ----------

export const DOORBELL_SEQUENCE = 0 * WORDS_PER_LINE;
export const DOORBELL_SLEEPING = 1 * WORDS_PER_LINE;
export const DOORBELL_CLOSED = 2 * WORDS_PER_LINE;
/**
 * 1 once the main thread posted a control message to the task and not yet taken by the task:
 * a task parked with `Atomics.wait` (which blocks its event loop) must let the loop deliver it.
 */
export const DOORBELL_CONTROL = 3 * WORDS_PER_LINE;
export const DOORBELL_BYTES = 4 * CACHE_LINE_BYTES;

// ---------- load-time checks ----------

function assertUniqueBits(what: string, values: readonly number[], reserved = 0): void {
  let seen = reserved;
  for (const v of values) {
    if (v === 0 || (v & (v - 1)) !== 0) throw new Error(`${what}: ${v} is not a single bit`);
    if ((seen & v) !== 0) throw new Error(`${what}: bit ${v} is used twice`);
    seen |= v;
  }
}
function assertUnique(what: string, values: readonly number[]): void {
  if (new Set(values).size !== values.length) throw new Error(`${what}: duplicate value`);
}

assertUnique('frame tags', Object.values(FRAME_TAG));
if (Math.max(...Object.values(FRAME_TAG)) > FRAME_TAG_MASK)
  throw new Error('frame tags overflow the tag byte');
assertUniqueBits('frame flags', Object.values(FRAME_FLAG), FRAME_TAG_MASK);
assertUniqueBits('closed-by bits', Object.values(CLOSED_BY));
assertUnique('ring header words', [
  RING_WRITE_INDEX,
  RING_READ_INDEX,
  RING_WRITER_WAITING,
  RING_CLOSED,
  RING_IN_FLIGHT_LIMIT,
  RING_PRIORITY_STATE,
]);
if (RING_PRIORITY_TIMESTAMP_BYTE + 8 > RING_HEADER_BYTES)
  throw new Error('ring header words overflow the header');
assertUnique('doorbell words', [DOORBELL_SEQUENCE, DOORBELL_SLEEPING, DOORBELL_CLOSED, DOORBELL_CONTROL]);
if (MAX_CONTROL_PAYLOAD_BYTES < BARRIER_PAYLOAD_BYTES) throw new Error('control scratch too small');
if (RING_MIN_CAPACITY < 2 * (FRAME_HEADER_BYTES + MAX_CONTROL_PAYLOAD_BYTES)) {
  throw new Error('RING_MIN_CAPACITY cannot hold two control frames');
}

// ---------- busy slots (stuck-task watchdog: worker/busy-marker.ts, coordinator/stuck-task-watchdog.ts)
//
// One SharedArrayBuffer per execution, one slot of BUSY_SLOT_INTS int32 words per task, each slot
// on its own cache line (a task's per-batch stores never contend with another task's). The task
// thread is the only writer of its slot; the main thread only reads.
//   +0  BUSY_SEQUENCE  odd while the task is in a batch of user code, even between batches;
//                      incremented at both edges (a value the main thread sees twice, odd, has
//                      been busy the whole time in between)
//   +1  BUSY_OPERATOR  index in the chain of the operator the task is in (written at every
//                      chained hop; read only once the sequence says "stuck")
// Staleness: the main thread may read an older sequence value; it then judges a task stuck later,
// never earlier.
export const BUSY_SEQUENCE = 0;
export const BUSY_OPERATOR = 1;
/** Words per task slot: a whole cache line. */
export const BUSY_SLOT_INTS = CACHE_LINE_BYTES / 4;
