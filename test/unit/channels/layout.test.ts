import { describe, expect, test } from 'vitest';
import {
  CACHE_LINE_BYTES,
  CLOSED_BY,
  DOORBELL_CLOSED,
  DOORBELL_SEQUENCE,
  DOORBELL_SLEEPING,
  FRAME_FLAG,
  FRAME_TAG,
  FRAME_TAG_MASK,
  RING_CLOSED,
  RING_READ_INDEX,
  RING_WRITE_INDEX,
  RING_WRITER_WAITING,
} from '../../../src/channels/layout.js';

const line = (word: number) => Math.floor((word * 4) / CACHE_LINE_BYTES);

describe('layout', () => {
  test('every ring header word and every doorbell word sits on its own cache line', () => {
    const ring = [RING_WRITE_INDEX, RING_READ_INDEX, RING_WRITER_WAITING, RING_CLOSED].map(line);
    expect(new Set(ring).size).toBe(4);
    const bell = [DOORBELL_SEQUENCE, DOORBELL_SLEEPING, DOORBELL_CLOSED].map(line);
    expect(new Set(bell).size).toBe(3);
  });

  test('frame tags are distinct, non-zero and fit the tag byte; flags are single bits above it', () => {
    const tags = Object.values(FRAME_TAG);
    expect(new Set(tags).size).toBe(tags.length);
    for (const tag of tags) expect(tag > 0 && tag <= FRAME_TAG_MASK).toBe(true);
    let seen = 0;
    for (const flag of Object.values(FRAME_FLAG)) {
      expect(flag & FRAME_TAG_MASK).toBe(0);
      expect(flag & (flag - 1)).toBe(0);
      expect(seen & flag).toBe(0);
      seen |= flag;
    }
    expect(CLOSED_BY.writer & CLOSED_BY.reader).toBe(0);
  });
});
