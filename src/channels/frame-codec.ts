/**
 * The binary layout of frames in a ring: the frame word (tag | flags) and the fixed layout of
 * control frames. Record batches are encoded by RecordCodec; this file only tags them.
 *
 * Control payloads (little-endian, see layout.ts for offsets): barrier 18 bytes, cancel-checkpoint
 * 8 bytes, watermark 8 bytes, end-of-partition 0 bytes. Checkpoint ids and timestamps are f64 so
 * any JS number (including the final watermark, +Infinity) round-trips exactly.
 */
import { ChannelProtocolError } from '../errors.js';
import { assertNever } from '../util/assert-never.js';
import type { ControlFrame } from './frame.js';
import {
  BARRIER_CHECKPOINT_ID,
  BARRIER_PAYLOAD_BYTES,
  BARRIER_TIMESTAMP,
  BARRIER_TYPE,
  BARRIER_UNALIGNED,
  CANCEL_CHECKPOINT_ID,
  CANCEL_PAYLOAD_BYTES,
  FRAME_FLAG,
  FRAME_TAG,
  FRAME_TAG_MASK,
  MAX_CONTROL_PAYLOAD_BYTES,
  WATERMARK_PAYLOAD_BYTES,
  WATERMARK_TIMESTAMP,
} from './layout.js';

const LITTLE_ENDIAN = true;
const CHECKPOINT_TYPE_CODE = { checkpoint: 0, savepoint: 1 } as const;

export function frameTag(word: number): number {
  return word & FRAME_TAG_MASK;
}

export function isFragment(word: number): boolean {
  return (word & FRAME_FLAG.fragment) !== 0;
}

export function isFinalFragment(word: number): boolean {
  return (word & FRAME_FLAG.fragmentFinal) !== 0;
}

/** Scratch space for one control payload; each writer owns one. */
export function createControlScratch(): Uint8Array {
  return new Uint8Array(MAX_CONTROL_PAYLOAD_BYTES);
}

/**
 * Encodes `frame`'s payload into `scratch` (from {@link createControlScratch}); returns the frame
 * word and the payload (a view of `scratch`, valid until the next call).
 */
export function encodeControlFrame(
  frame: ControlFrame,
  scratch: Uint8Array,
): { word: number; payload: Uint8Array } {
  const view = new DataView(scratch.buffer, scratch.byteOffset, scratch.byteLength);
  switch (frame.kind) {
    case 'barrier':
      view.setFloat64(BARRIER_CHECKPOINT_ID, frame.checkpointId, LITTLE_ENDIAN);
      view.setFloat64(BARRIER_TIMESTAMP, frame.timestamp, LITTLE_ENDIAN);
      view.setUint8(BARRIER_TYPE, CHECKPOINT_TYPE_CODE[frame.checkpointType]);
      view.setUint8(BARRIER_UNALIGNED, frame.unaligned ? 1 : 0);
      return { word: FRAME_TAG.barrier, payload: scratch.subarray(0, BARRIER_PAYLOAD_BYTES) };
    case 'cancel-checkpoint':
      view.setFloat64(CANCEL_CHECKPOINT_ID, frame.checkpointId, LITTLE_ENDIAN);
      return { word: FRAME_TAG['cancel-checkpoint'], payload: scratch.subarray(0, CANCEL_PAYLOAD_BYTES) };
    case 'watermark':
      view.setFloat64(WATERMARK_TIMESTAMP, frame.timestamp, LITTLE_ENDIAN);
      return { word: FRAME_TAG.watermark, payload: scratch.subarray(0, WATERMARK_PAYLOAD_BYTES) };
    case 'end-of-partition':
      return { word: FRAME_TAG['end-of-partition'], payload: scratch.subarray(0, 0) };
    default:
      return assertNever(frame, 'control frame');
  }
}

/** Whether `tag` is one of the control frame tags. */
export function isControlTag(tag: number): boolean {
  return (
    tag === FRAME_TAG.barrier ||
    tag === FRAME_TAG['cancel-checkpoint'] ||
    tag === FRAME_TAG.watermark ||
    tag === FRAME_TAG['end-of-partition']
  );
}

/** Decodes a control payload (may be a view into shared memory: nothing of it is retained). */
export function decodeControlFrame(tag: number, payload: Uint8Array): ControlFrame {
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  switch (tag) {
    case FRAME_TAG.barrier: {
      expectLength(tag, payload, BARRIER_PAYLOAD_BYTES);
      const type = view.getUint8(BARRIER_TYPE);
      if (type !== CHECKPOINT_TYPE_CODE.checkpoint && type !== CHECKPOINT_TYPE_CODE.savepoint) {
        throw new ChannelProtocolError(`barrier frame with unknown checkpoint type ${type}`);
      }
      return {
        kind: 'barrier',
        checkpointId: view.getFloat64(BARRIER_CHECKPOINT_ID, LITTLE_ENDIAN),
        timestamp: view.getFloat64(BARRIER_TIMESTAMP, LITTLE_ENDIAN),
        checkpointType: type === CHECKPOINT_TYPE_CODE.savepoint ? 'savepoint' : 'checkpoint',
        unaligned: view.getUint8(BARRIER_UNALIGNED) !== 0,
      };
    }
    case FRAME_TAG['cancel-checkpoint']:
      expectLength(tag, payload, CANCEL_PAYLOAD_BYTES);
      return {
        kind: 'cancel-checkpoint',
        checkpointId: view.getFloat64(CANCEL_CHECKPOINT_ID, LITTLE_ENDIAN),
      };
    case FRAME_TAG.watermark:
      expectLength(tag, payload, WATERMARK_PAYLOAD_BYTES);
      return { kind: 'watermark', timestamp: view.getFloat64(WATERMARK_TIMESTAMP, LITTLE_ENDIAN) };
    case FRAME_TAG['end-of-partition']:
      expectLength(tag, payload, 0);
      return { kind: 'end-of-partition' };
    default:
      throw new ChannelProtocolError(`unknown control frame tag ${tag}`);
  }
}

function expectLength(tag: number, payload: Uint8Array, expected: number): void {
  if (payload.length !== expected) {
    throw new ChannelProtocolError(
      `control frame tag ${tag} has ${payload.length} payload bytes, expected ${expected}`,
    );
  }
}
