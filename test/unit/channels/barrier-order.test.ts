import { describe, expect, test } from 'vitest';
import type { ControlFrame } from '../../../src/channels/frame.js';
import { channels, drain, flatten } from './helpers.js';

const barrier = (checkpointId: number): ControlFrame => ({
  kind: 'barrier',
  checkpointId,
  timestamp: checkpointId,
  checkpointType: 'checkpoint',
  unaligned: false,
});

describe('barriers never overtake records', () => {
  test('a barrier written after records is read after them, even from a half-full batch', () => {
    const { writers, gate } = channels(1, 4096, { batchRecords: 256 });
    writers[0].write('r1');
    writers[0].write('r2');
    writers[0].writeControl(barrier(1));
    writers[0].write('r3');
    writers[0].writeControl({ kind: 'watermark', timestamp: 5 });
    writers[0].flush();
    expect(flatten(drain(gate).map((f) => f.frame))).toEqual([
      { record: 'r1' },
      { record: 'r2' },
      { control: barrier(1) },
      { record: 'r3' },
      { control: { kind: 'watermark', timestamp: 5 } },
    ]);
  });

  test('while backlogged, control frames queue behind the pending batches', () => {
    const { writers, gate } = channels(1, 256, { batchRecords: 3 });
    const w = writers[0];
    const expected: unknown[] = [];
    for (let i = 0; i < 60; i++) {
      w.write(i);
      expected.push({ record: i });
      if (i % 7 === 6) {
        w.writeControl(barrier(i));
        expected.push({ control: barrier(i) });
      }
    }
    expect(w.backlogged).toBe(true);
    const got: unknown[] = [];
    do got.push(...flatten(drain(gate).map((f) => f.frame)));
    while (!w.flush() || gate.hasReady());
    got.push(...flatten(drain(gate).map((f) => f.frame)));
    expect(got).toEqual(expected);
  });
});
