/**
 * In-band barriers pulled ahead of the ring's frames (ChannelReader.pullBarrier, RingBuffer.scan):
 * what a checkpoint that switched to unaligned after its alignment timed out does with the
 * barriers it still waits for. The pulled barrier comes first, marked unaligned, carrying exactly
 * the records before it as overtaken; everything is still delivered once, in order.
 */
import { describe, expect, test } from 'vitest';
import { decodeBatches } from '../../../src/channels/encoded-batches.js';
import type { CheckpointBarrier } from '../../../src/channels/frame.js';
import type { GateFrame } from '../../../src/channels/input-gate.js';
import { channels, drain } from './helpers.js';

const barrier = (checkpointId: number): CheckpointBarrier => ({
  kind: 'barrier',
  checkpointId,
  timestamp: 1000 + checkpointId,
  checkpointType: 'checkpoint',
  unaligned: false,
});
const idIs = (id: number) => (b: CheckpointBarrier) => b.checkpointId === id;

const passed = (f: GateFrame | undefined): unknown[] | undefined =>
  f?.overtaken === undefined ? undefined : decodeBatches(f.overtaken).flat();

const records = (frames: readonly GateFrame[]): unknown[] =>
  frames.flatMap((f) => (f.frame.kind === 'records' ? [...f.frame.records] : []));

describe('pulled barriers', () => {
  test('an in-band barrier behind batches comes first, unaligned, with exactly the records before it', () => {
    const { writers, gate } = channels(1, 4096, { batchRecords: 2 });
    const w = writers[0];
    for (let i = 0; i < 6; i++) w.write(i);
    w.writeControl(barrier(3));
    for (let i = 6; i < 10; i++) w.write(i);
    w.flush();
    expect(gate.pullBarrier(0, idIs(3))).toBe(true);
    const got = drain(gate);
    expect(got[0].frame).toEqual({ ...barrier(3), unaligned: true });
    expect(passed(got[0])).toEqual([0, 1, 2, 3, 4, 5]);
    // Every record once, in order; no second barrier.
    expect(records(got.slice(1))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(got.filter((f) => f.frame.kind === 'barrier')).toHaveLength(1);
  });

  test('records read before the pull are not overtaken; no matching barrier: nothing changes', () => {
    const { writers, gate } = channels(1, 4096, { batchRecords: 1 });
    const w = writers[0];
    w.write('a');
    w.write('b');
    w.flush();
    expect(gate.pollNext()?.frame).toEqual({ kind: 'records', records: ['a'] });
    expect(gate.pullBarrier(0, idIs(1))).toBe(false); // not published yet
    w.writeControl(barrier(1));
    w.write('c');
    w.flush();
    expect(gate.pullBarrier(0, idIs(2))).toBe(false); // another checkpoint's
    expect(gate.pullBarrier(0, idIs(1))).toBe(true);
    const got = drain(gate);
    expect(got[0].frame).toEqual({ ...barrier(1), unaligned: true });
    expect(passed(got[0])).toEqual(['b']);
    expect(records(got.slice(1))).toEqual(['b', 'c']);
  });

  test('an older barrier ahead of it stays in band and in order; key groups and shapes survive', () => {
    const { writers, gate } = channels(1, 4096, { batchRecords: 2 });
    const w = writers[0];
    w.write({ k: 'a', v: 1 }, 7);
    w.write({ k: 'b', v: 2 }, 9);
    w.writeControl(barrier(1));
    w.write({ a: 1 });
    w.write({ b: [1, 2] });
    w.writeControl(barrier(2));
    w.write('after');
    w.flush();
    expect(gate.pullBarrier(0, idIs(2))).toBe(true);
    const got = drain(gate);
    expect(got[0].frame).toEqual({ ...barrier(2), unaligned: true });
    expect(passed(got[0])).toEqual([{ k: 'a', v: 1 }, { k: 'b', v: 2 }, { a: 1 }, { b: [1, 2] }]);
    const rest = got.slice(1).map((f) => f.frame);
    expect(rest.filter((f) => f.kind === 'barrier')).toEqual([barrier(1)]);
    expect(records(got.slice(1))).toEqual([
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
      { a: 1 },
      { b: [1, 2] },
      'after',
    ]);
    const first = rest[0];
    expect(first.kind === 'records' && [...(first.keyGroups ?? [])]).toEqual([7, 9]);
    // The older barrier comes after the records before it.
    expect(rest.findIndex((f) => f.kind === 'barrier')).toBe(1);
  });

  test('a full ring wrapped around: the scan follows the wrap and frees the ring for the writer', () => {
    const { writers, gate } = channels(1, 256, { batchRecords: 3 });
    const w = writers[0];
    let n = 0;
    // Wrap the ring a few times, then fill it with the barrier somewhere inside.
    for (let round = 0; round < 5; round++) {
      for (let k = 0; k < 6; k++) w.write(n++);
      w.flush();
      drain(gate);
    }
    const from = n;
    for (let k = 0; k < 3; k++) w.write(n++);
    w.writeControl(barrier(4));
    const before = n;
    while (!w.backlogged) w.write(n++);
    expect(gate.pullBarrier(0, idIs(4))).toBe(true);
    const got: GateFrame[] = [];
    for (let i = 0; i < 100 && (w.backlogged || got.length === 0 || gate.hasReady()); i++) {
      w.flush();
      got.push(...drain(gate));
    }
    expect(got[0].frame).toEqual({ ...barrier(4), unaligned: true });
    expect(passed(got[0])).toEqual(Array.from({ length: before - from }, (_, i) => from + i));
    expect(records(got.slice(1))).toEqual(Array.from({ length: n - from }, (_, i) => from + i));
  });
});
