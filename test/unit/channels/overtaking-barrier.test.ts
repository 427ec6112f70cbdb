/**
 * Unaligned barriers that overtake the ring (ring-buffer.ts priority slot, ChannelWriter
 * `writeOvertakingBarrier`, ChannelReader): the reader sees the barrier before the frames already
 * in the ring and records exactly those frames (and the writer's queued ones) as overtaken.
 */
import { describe, expect, test } from 'vitest';
import { ChannelWriter } from '../../../src/channels/channel-writer.js';
import { Doorbell } from '../../../src/channels/doorbell.js';
import { decodeBatches } from '../../../src/channels/encoded-batches.js';
import type { CheckpointBarrier, Frame } from '../../../src/channels/frame.js';
import { type GateFrame, InputGate } from '../../../src/channels/input-gate.js';
import { RingBuffer } from '../../../src/channels/ring-buffer.js';
import { prng } from '../../fixtures/channels/stress-sequence.js';
import { channels, drain } from './helpers.js';

const barrier = (checkpointId: number, checkpointType: 'checkpoint' | 'savepoint' = 'checkpoint') =>
  ({
    kind: 'barrier',
    checkpointId,
    timestamp: 1000 + checkpointId,
    checkpointType,
    unaligned: true,
  }) as const;

/** The records an overtaking barrier passed (kept encoded by the reader), one array per batch. */
const passed = (f: GateFrame | undefined): unknown[][] | undefined =>
  f?.overtaken === undefined ? undefined : decodeBatches(f.overtaken);

const records = (frames: readonly GateFrame[]): unknown[] =>
  frames.flatMap((f) => (f.frame.kind === 'records' ? [...f.frame.records] : []));

describe('overtaking barriers', () => {
  test('the barrier comes first and carries exactly the records already in the ring', () => {
    const { writers, gate } = channels(1, 4096, { batchRecords: 2 });
    const w = writers[0];
    for (let i = 0; i < 6; i++) w.write(i); // three batches in the ring
    w.write(6); // open batch: sealed by the barrier, overtaken too
    expect(w.writeOvertakingBarrier(barrier(1))).toBe(true);
    w.write(7);
    w.write(8);
    w.flush();
    const got = drain(gate);
    expect(got[0].frame).toEqual(barrier(1));
    expect(passed(got[0])?.flat()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    // The overtaken frames are still delivered, in order, then what came after the barrier.
    expect(records(got.slice(1))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(got.filter((f) => f.frame.kind === 'barrier')).toHaveLength(1);
  });

  test('records read before the barrier was posted are not overtaken; a savepoint keeps its type', () => {
    const { writers, gate } = channels(1, 4096, { batchRecords: 1 });
    const w = writers[0];
    w.write('a');
    expect(gate.pollNext()?.frame).toEqual({ kind: 'records', records: ['a'] });
    w.write('b');
    w.writeOvertakingBarrier(barrier(2, 'savepoint'));
    w.write('c');
    const got = drain(gate);
    expect(got[0].frame).toEqual(barrier(2, 'savepoint'));
    expect(passed(got[0])).toEqual([['b']]);
    expect(records(got.slice(1))).toEqual(['b', 'c']);
  });

  test('posted while the ring is full and the writer backlogged: the queued frames are overtaken too', () => {
    const { writers, gate } = channels(1, 256, { batchRecords: 3 });
    const w = writers[0];
    let n = 0;
    while (!w.backlogged) for (let k = 0; k < 3; k++) w.write(n++);
    for (let k = 0; k < 9; k++) w.write(n++); // more queued frames
    const before = n;
    expect(w.writeOvertakingBarrier(barrier(1))).toBe(true);
    w.write(n++);
    // The reader takes what the ring holds, but the barrier waits for the writer's queued frames.
    expect(gate.pollNext()).toBeNull();
    const got: GateFrame[] = [];
    for (let i = 0; i < 100 && (w.backlogged || got.length === 0 || gate.hasReady()); i++) {
      w.flush();
      got.push(...drain(gate));
    }
    expect(got[0].frame).toEqual(barrier(1));
    expect(passed(got[0])?.flat()).toEqual(Array.from({ length: before }, (_, i) => i));
    expect(records(got.slice(1))).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  test('kept encoded until delivered: key groups, msgpack shapes and fragmented records come through intact', () => {
    const { writers, gate } = channels(1, 4096, { batchRecords: 2 });
    const w = writers[0];
    const big = { blob: 'z'.repeat(5000) }; // larger than the ring's frame limit: fragmented
    w.write({ k: 'a', v: 1 }, 7);
    w.write({ k: 'b', v: 2 }, 9); // a shape batch with a key-groups frame before it
    w.write({ a: 1 });
    w.write({ b: [1, 2] }); // mixed shapes: msgpack, with a structures frame before it
    w.write(big);
    expect(w.writeOvertakingBarrier(barrier(5))).toBe(true);
    const got: GateFrame[] = [];
    for (let i = 0; i < 100 && (w.backlogged || got.length === 0 || gate.hasReady()); i++) {
      w.flush();
      got.push(...drain(gate));
    }
    expect(got[0].frame).toEqual(barrier(5));
    const sent = [{ k: 'a', v: 1 }, { k: 'b', v: 2 }, { a: 1 }, { b: [1, 2] }, big];
    expect(passed(got[0])?.flat()).toEqual(sent);
    expect(records(got.slice(1))).toEqual(sent);
    const first = got[1].frame;
    expect(first.kind === 'records' && [...(first.keyGroups ?? [])]).toEqual([7, 9]);
  });

  test('while the reader holds a barrier, the next one is written in band', () => {
    const { writers, gate } = channels(1, 256, { batchRecords: 2 });
    const w = writers[0];
    let n = 0;
    while (!w.backlogged) for (let k = 0; k < 2; k++) w.write(n++);
    expect(w.writeOvertakingBarrier(barrier(1))).toBe(true);
    expect(gate.pollNext()).toBeNull(); // collecting: the slot stays held
    w.write(n++);
    expect(w.writeOvertakingBarrier(barrier(2))).toBe(false);
    const got: GateFrame[] = [];
    for (let i = 0; i < 100 && (w.backlogged || gate.hasReady() || got.length === 0); i++) {
      w.flush();
      got.push(...drain(gate));
    }
    const barriers = got.filter((f) => f.frame.kind === 'barrier');
    expect(barriers.map((f) => [f.frame, f.overtaken === undefined])).toEqual([
      [barrier(1), false],
      [barrier(2), true],
    ]);
    // In band: barrier 2 comes right after every record written before it.
    const at = got.findIndex((f) => f.frame.kind === 'barrier' && f.frame.checkpointId === 2);
    expect(records(got.slice(1, at))).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  test('a frame published after the post is never read before the barrier (reader cache empty)', () => {
    const buffer = RingBuffer.allocate(1024);
    const doorbell = Doorbell.allocate();
    const w = new ChannelWriter(buffer, doorbell, { batchRecords: 1 });
    const gate = new InputGate([buffer], doorbell);
    w.write('x');
    expect(records([gate.pollNext()!])).toEqual(['x']);
    w.writeOvertakingBarrier(barrier(3));
    w.write('y');
    const first = gate.pollNext()!;
    expect(first.frame).toEqual(barrier(3));
    expect(passed(first)).toEqual([]);
    expect(records(drain(gate))).toEqual(['y']);
  });

  test('the ring refuses to read past a posted barrier until the reader took it', () => {
    const ring = new RingBuffer(RingBuffer.allocate(1024));
    ring.tryWrite(1, new Uint8Array([1]));
    expect(ring.postPriorityBarrier(5, 6, 0, 0)).toBe(true);
    expect(ring.postPriorityBarrier(6, 7, 0, 0)).toBe(false); // slot held
    expect(ring.tryRead(() => {})).toBe(0);
    const p = ring.takePriorityBarrier();
    expect(p).toEqual({ checkpointId: 5, timestamp: 6, type: 0, writeIndex: 16, pendingFrames: 0 });
    expect(ring.postPriorityBarrier(6, 7, 0, 0)).toBe(false); // still held while collecting
    expect(ring.tryRead(() => {})).toBe(16);
    ring.releasePriority();
    expect(ring.postPriorityBarrier(6, 7, 0, 0)).toBe(true);
  });

  test('seeded interleavings: each barrier overtakes exactly the undelivered records written before it', () => {
    /** Paths the seeds took, so that the test cannot pass by never taking one. */
    const paths = { inBand: 0, overtaking: 0, overtookInBand: 0, nonEmpty: 0 };
    for (let seed = 1; seed <= 300; seed++) {
      const random = prng(seed);
      const capacity = random() < 0.5 ? 256 : 1024;
      const { writers, gate } = channels(1, capacity, { batchRecords: 1 + Math.floor(random() * 4) });
      const w = writers[0];
      /** Logical stream written: records (numbers) and barriers. */
      const written: (number | CheckpointBarrier)[] = [];
      const delivered: Frame[] = [];
      /** Barrier id → records delivered before it and its overtaken records. */
      const seen = new Map<number, { deliveredBefore: number; overtaken: unknown[] | null }>();
      const writtenInBand = new Set<number>();
      let recordsDelivered = 0;
      let next = 0;
      let id = 0;
      const poll = (): void => {
        for (let f = gate.pollNext(); f !== null; f = gate.pollNext()) {
          delivered.push(f.frame);
          if (f.frame.kind === 'records') recordsDelivered += f.frame.records.length;
          if (f.frame.kind === 'barrier') {
            seen.set(f.frame.checkpointId, {
              deliveredBefore: recordsDelivered,
              overtaken: passed(f)?.flat() ?? null,
            });
          }
          if (random() < 0.3) return;
        }
      };
      for (let step = 0; step < 200; step++) {
        const roll = random();
        if (roll < 0.6) {
          // Mostly small records, now and then one larger than a ring frame (fragments).
          const big = random() < 0.02;
          w.write(big ? next + 0.5 : next);
          written.push(big ? next + 0.5 : next);
          next++;
        } else if (roll < 0.68) {
          const b = barrier(++id);
          if (!w.writeOvertakingBarrier(b)) writtenInBand.add(id);
          written.push(b);
        } else if (roll < 0.75) w.flush();
        else poll();
      }
      for (let i = 0; i < 1000 && (w.backlogged || gate.hasReady() || w.bufferedRecords > 0); i++) {
        w.flush();
        poll();
      }
      const writtenRecords = written.filter((x): x is number => typeof x === 'number');
      const got = records(delivered.map((frame) => ({ channelIndex: 0, frame })));
      expect(got, `seed ${seed}`).toEqual(writtenRecords);
      expect([...seen.keys()], `seed ${seed}`).toEqual(Array.from({ length: id }, (_, i) => i + 1));
      let before = 0;
      for (const x of written) {
        if (typeof x === 'number') {
          before++;
          continue;
        }
        const s = seen.get(x.checkpointId)!;
        if (!writtenInBand.has(x.checkpointId)) paths.overtaking++;
        else if (s.overtaken === null) paths.inBand++;
        else paths.overtookInBand++;
        if (s.overtaken !== null && s.overtaken.length > 0) paths.nonEmpty++;
        if (s.overtaken === null) {
          // In band: delivered right after every record written before it.
          expect(s.deliveredBefore, `seed ${seed} barrier ${x.checkpointId}`).toBe(before);
        } else {
          expect(s.deliveredBefore + s.overtaken.length, `seed ${seed}`).toBe(before);
          expect(s.overtaken, `seed ${seed}`).toEqual(writtenRecords.slice(s.deliveredBefore, before));
        }
      }
    }
    for (const [path, count] of Object.entries(paths)) expect(count, path).toBeGreaterThan(10);
  });
});
