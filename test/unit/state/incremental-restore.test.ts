import { describe, expect, it } from 'vitest';
import { StateAccessError } from '../../../src/errors.js';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-state-backend.js';
import { concatChunks, dumpBackend, type Schema } from './state-test-helpers.js';

const MAX_P = 32;
const RANGE = { start: 0, end: MAX_P - 1 };
const SCHEMA: Schema = { v: 'value', m: 'map' };

function restore(
  ...parts: { chunks: readonly import('../../../src/state/key-group-chunk.js').KeyGroupChunk[] }[]
) {
  const r = new HeapKeyedStateBackend({ maxParallelism: MAX_P, keyGroupRange: RANGE });
  r.restore(concatChunks(...parts));
  return dumpBackend(r, SCHEMA);
}

describe('incremental snapshots', () => {
  it('a chain of base + deltas restores to the same state as a full snapshot', async () => {
    const b = new HeapKeyedStateBackend({ maxParallelism: MAX_P, keyGroupRange: RANGE, incremental: true });
    const v = b.value<{ n: number }>('v');
    const m = b.map<string, number>('m');
    for (let k = 0; k < 1000; k++) {
      b.setCurrentKey(k);
      v.update({ n: k });
      m.put('a', k);
    }
    const s1 = b.snapshot(1);
    const base = await s1.encode('delta'); // no confirmed base yet: a full snapshot
    s1.release();
    expect(base.metadata.kind).toBe('full');
    b.notifyCheckpointComplete(1);
    const chain = [base];
    for (let cp = 2; cp <= 5; cp++) {
      for (let k = cp; k < 1000; k += 50) {
        b.setCurrentKey(k);
        if (k % 3 === 0) v.clear();
        else v.value()!.n += 1000;
        m.put(`c${cp}`, cp);
      }
      b.setCurrentKey(5000 + cp);
      v.update({ n: -cp });
      const s = b.snapshot(cp);
      const delta = await s.encode('delta');
      const full = await s.encode('full');
      s.release();
      b.notifyCheckpointComplete(cp);
      expect(delta.metadata).toMatchObject({ kind: 'delta', checkpointId: cp, baseCheckpointId: cp - 1 });
      expect(delta.metadata.entries + delta.metadata.tombstones).toBeLessThan(60);
      expect(delta.metadata.bytes).toBeLessThan(full.metadata.bytes / 5);
      chain.push(delta);
      expect(restore(...chain)).toEqual(restore(full));
    }
    expect(restore(...chain)).toEqual(dumpBackend(b, SCHEMA));
  });

  it('a delta spans aborted checkpoints: it is relative to the last confirmed one', async () => {
    const b = new HeapKeyedStateBackend({ maxParallelism: MAX_P, keyGroupRange: RANGE, incremental: true });
    const v = b.value<number>('v');
    b.setCurrentKey('a');
    v.update(1);
    const s1 = b.snapshot(1);
    const base = await s1.encode();
    s1.release();
    b.notifyCheckpointComplete(1);
    b.setCurrentKey('b');
    v.update(2);
    b.snapshot(2).release(); // checkpoint 2 aborted
    b.setCurrentKey('c');
    v.update(3);
    const s3 = b.snapshot(3);
    const d3 = await s3.encode('delta');
    s3.release();
    expect(d3.metadata.baseCheckpointId).toBe(1);
    expect(restore(base, d3)).toEqual({ v: { 's"a"': 1, 's"b"': 2, 's"c"': 3 } });
  });

  it('restore continues the chain: the next delta is relative to the restored checkpoint', async () => {
    const b = new HeapKeyedStateBackend({ maxParallelism: MAX_P, keyGroupRange: RANGE, incremental: true });
    const v = b.value<number>('v');
    b.setCurrentKey('a');
    v.update(1);
    const s1 = b.snapshot(7);
    const base = await s1.encode();
    s1.release();
    const r = new HeapKeyedStateBackend({ maxParallelism: MAX_P, keyGroupRange: RANGE, incremental: true });
    expect(r.restore(base.chunks).checkpointId).toBe(7);
    r.setCurrentKey('a');
    r.value<number>('v').update(2);
    const s8 = r.snapshot(8);
    const d8 = await s8.encode('delta');
    s8.release();
    expect(d8.metadata).toMatchObject({ kind: 'delta', baseCheckpointId: 7, entries: 1 });
    expect(restore(base, d8)).toEqual({ v: { 's"a"': 2 } });
  });

  it('chunks of one key group out of checkpoint order are rejected', async () => {
    const b = new HeapKeyedStateBackend({ maxParallelism: MAX_P, keyGroupRange: RANGE, incremental: true });
    const v = b.value<number>('v');
    b.setCurrentKey('a');
    v.update(1);
    const s1 = b.snapshot(1);
    const full1 = await s1.encode();
    s1.release();
    b.notifyCheckpointComplete(1);
    v.update(2);
    const s2 = b.snapshot(2);
    const d2 = await s2.encode('delta');
    s2.release();
    const r = new HeapKeyedStateBackend({ maxParallelism: MAX_P, keyGroupRange: RANGE });
    expect(() => r.restore(concatChunks(d2, full1))).toThrow(StateAccessError);
  });
});
