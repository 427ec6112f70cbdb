import { describe, expect, test } from 'vitest';
import type { Frame } from '../../../src/channels/frame.js';
import { RING_DATA_OFFSET } from '../../../src/channels/layout.js';
import { channels, drain, normalize } from './helpers.js';

const frames: Frame[] = [
  {
    kind: 'records',
    records: [{ key: 'k1', value: 2 }, 'text', 42, 1.5, null, true, [1, [2]], new Uint8Array([9, 8])],
  },
  {
    kind: 'barrier',
    checkpointId: 1,
    timestamp: 1_700_000_000_123,
    checkpointType: 'checkpoint',
    unaligned: false,
  },
  { kind: 'barrier', checkpointId: 2 ** 40, timestamp: 0, checkpointType: 'savepoint', unaligned: true },
  { kind: 'cancel-checkpoint', checkpointId: 7 },
  { kind: 'watermark', timestamp: 123.5 },
  { kind: 'watermark', timestamp: Number.NEGATIVE_INFINITY },
  { kind: 'watermark', timestamp: Number.POSITIVE_INFINITY },
  { kind: 'records', records: [new Map([['a', 1]]), { nested: { deep: ['x'] } }] },
  { kind: 'end-of-partition' },
];

describe('every frame kind round-trips through a channel', () => {
  test.each(frames.map((frame) => [frame.kind, frame] as const))('%s', (_kind, frame) => {
    const { writers, gate } = channels(1);
    if (frame.kind === 'records') for (const record of frame.records) writers[0].write(record);
    else writers[0].writeControl(frame);
    expect(writers[0].flush()).toBe(true);
    const got = drain(gate);
    expect(got).toHaveLength(1);
    expect(got[0].channelIndex).toBe(0);
    expect(normalize(got[0].frame)).toEqual(normalize(frame));
  });

  test('all kinds in one stream, in order', () => {
    const { writers, gate } = channels(1);
    for (const frame of frames) {
      if (frame.kind === 'records') {
        for (const record of frame.records) writers[0].write(record);
        writers[0].flush();
      } else writers[0].writeControl(frame);
    }
    expect(normalize(drain(gate).map((f) => f.frame))).toEqual(normalize(frames));
    expect(gate.allEnded).toBe(true);
  });

  test('decoded binary values do not alias the ring', () => {
    const { rings, writers, gate } = channels(1, 256);
    writers[0].write(new Uint8Array([1, 2, 3]));
    writers[0].flush();
    const [got] = drain(gate);
    new Uint8Array(rings[0]).fill(0, RING_DATA_OFFSET, RING_DATA_OFFSET + 256); // scribble over the data region
    expect(got.frame.kind === 'records' && Uint8Array.from(got.frame.records[0] as Uint8Array)).toEqual(
      new Uint8Array([1, 2, 3]),
    );
  });
});
