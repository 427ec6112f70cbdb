import { describe, expect, it } from 'vitest';
import { StateAccessError } from '../../../src/errors.js';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-state-backend.js';
import type { HeapKeyedStateSnapshot } from '../../../src/state/heap/heap-keyed-state-snapshot.js';
import { countSum, dumpBackend, reduceSum, type Schema } from './state-test-helpers.js';

const RANGE = { start: 0, end: 31 };
const newBackend = () => new HeapKeyedStateBackend({ maxParallelism: 32, keyGroupRange: RANGE });

async function restored(snap: HeapKeyedStateSnapshot, schema: Schema) {
  const { chunks } = await snap.encode();
  const b = newBackend();
  b.restore(chunks);
  return dumpBackend(b, schema);
}

describe('copy-on-write snapshot: the state at the barrier', () => {
  it('mutating an object read from state after the barrier, without update, does not leak into the snapshot', async () => {
    const b = newBackend();
    const s = b.value<{ count: number }>('s');
    b.setCurrentKey('k');
    s.update({ count: 1 });
    const snap = b.snapshot(1);
    const o = s.value()!;
    o.count++; // no update()
    expect(s.value()).toEqual({ count: 2 });
    expect(await restored(snap, { s: 'value' })).toEqual({ s: { 's"k"': { count: 1 } } });
    expect(s.value()).toEqual({ count: 2 });
  });

  it('mutate + update(sameObject), overwrite, clear and re-insert after the barrier', async () => {
    const b = newBackend();
    const s = b.value<{ n: number }>('s');
    for (const k of ['a', 'b', 'c', 'd']) {
      b.setCurrentKey(k);
      s.update({ n: 1 });
    }
    const snap = b.snapshot(1);
    b.setCurrentKey('a');
    const o = s.value()!;
    o.n = 10;
    s.update(o);
    b.setCurrentKey('b');
    s.update({ n: 20 });
    b.setCurrentKey('c');
    s.clear();
    b.setCurrentKey('d');
    s.clear();
    s.update({ n: 40 });
    b.setCurrentKey('e');
    s.update({ n: 50 });
    expect(await restored(snap, { s: 'value' })).toEqual({
      s: { 's"a"': { n: 1 }, 's"b"': { n: 1 }, 's"c"': { n: 1 }, 's"d"': { n: 1 } },
    });
    snap.release();
    expect(dumpBackend(b, { s: 'value' })).toEqual({
      s: { 's"a"': { n: 10 }, 's"b"': { n: 20 }, 's"d"': { n: 40 }, 's"e"': { n: 50 } },
    });
  });

  it('list elements, map values, reduce and aggregate accumulators mutated in place after the barrier', async () => {
    const b = newBackend();
    const l = b.list<{ x: number }>('l');
    const m = b.map<string, { x: number }>('m');
    const r = b.reducing('r', reduceSum);
    const a = b.aggregating('a', countSum);
    b.setCurrentKey(1);
    l.add({ x: 1 });
    m.put('p', { x: 1 });
    r.add({ s: 1 });
    a.add(1);
    const snap = b.snapshot(1);
    l.get()[0].x = 99;
    l.add({ x: 2 });
    m.get('p')!.x = 99;
    m.put('q', { x: 3 });
    r.add({ s: 5 }); // reduceSum mutates the stored accumulator
    a.get()!.c = 99; // getResult returns the accumulator itself
    a.add(7);
    const schema: Schema = { l: 'list', m: 'map', r: 'reducing', a: 'aggregating' };
    expect(await restored(snap, schema)).toEqual({
      l: { n1: [{ x: 1 }] },
      m: { n1: [['p', { x: 1 }]] },
      r: { n1: { s: 1 } },
      a: { n1: { c: 1, s: 1 } },
    });
  });

  it('several live snapshots each see their own barrier; touches after both preserve once for both', async () => {
    const b = newBackend();
    const s = b.value<{ n: number }>('s');
    b.setCurrentKey('k');
    s.update({ n: 1 });
    b.setCurrentKey('j');
    s.update({ n: 100 });
    const s1 = b.snapshot(1);
    b.setCurrentKey('k');
    s.value()!.n = 2;
    const s2 = b.snapshot(2);
    s.value()!.n = 3;
    b.setCurrentKey('j');
    s.value()!.n = 101; // untouched since before s1: one preimage shared by s1 and s2
    const s3 = b.snapshot(3);
    expect(b.liveSnapshots).toBe(3);
    const schema: Schema = { s: 'value' };
    expect(await restored(s2, schema)).toEqual({ s: { 's"k"': { n: 2 }, 's"j"': { n: 100 } } });
    s2.release();
    b.setCurrentKey('k');
    s.clear();
    expect(await restored(s1, schema)).toEqual({ s: { 's"k"': { n: 1 }, 's"j"': { n: 100 } } });
    expect(await restored(s3, schema)).toEqual({ s: { 's"k"': { n: 3 }, 's"j"': { n: 101 } } });
  });

  it('a released snapshot cannot be serialized, and releasing stops copy-on-write', async () => {
    const b = newBackend();
    const s = b.value<{ n: number }>('s');
    b.setCurrentKey('k');
    s.update({ n: 1 });
    const snap = b.snapshot(1);
    snap.release();
    snap.release();
    expect(b.liveSnapshots).toBe(0);
    const before = b.counters.valuesCopied;
    s.value()!.n++;
    expect(b.counters.valuesCopied).toBe(before);
    await expect(snap.encode()).rejects.toThrow(StateAccessError);
  });

  it('serialization interleaved with writes still yields the barrier state', async () => {
    const b = newBackend();
    const s = b.value<{ n: number }>('s');
    for (let k = 0; k < 5000; k++) {
      b.setCurrentKey(k);
      s.update({ n: k });
    }
    const snap = b.snapshot(1);
    const chunks = [];
    let i = 0;
    for await (const c of snap.chunks()) {
      chunks.push(c);
      // Between chunks the task keeps processing: mutate, delete and insert keys everywhere.
      for (let j = 0; j < 200; j++, i++) {
        b.setCurrentKey(i % 5000);
        if (i % 3 === 0) s.clear();
        else {
          const o = s.value();
          if (o) o.n = -1;
          else s.update({ n: -3 });
        }
        b.setCurrentKey(10_000 + i);
        s.update({ n: -2 });
      }
    }
    const r = newBackend();
    r.restore(chunks);
    const dump = dumpBackend(r, { s: 'value' });
    expect(Object.keys(dump.s)).toHaveLength(5000);
    for (let k = 0; k < 5000; k++) expect(dump.s[`n${k}`]).toEqual({ n: k });
  });
});

describe('copy-on-write costs (counted work, not time)', () => {
  function filled(keys: number) {
    const b = newBackend();
    const s = b.value<{ n: number }>('s');
    const l = b.list<number>('l');
    for (let k = 0; k < keys; k++) {
      b.setCurrentKey(k);
      s.update({ n: k });
      if (k % 10 === 0) l.add(k);
    }
    return { b, s };
  }

  it('the synchronous part does the same work for 10 and for 100 000 keys', () => {
    const work: number[] = [];
    for (const n of [10, 100_000]) {
      const { b } = filled(n);
      const before = { ...b.counters };
      b.snapshot(1);
      expect(b.counters.preimages).toBe(before.preimages);
      expect(b.counters.valuesCopied).toBe(before.valuesCopied);
      expect(b.counters.entriesSerialized).toBe(before.entriesSerialized);
      work.push(b.counters.snapshotSyncWork - before.snapshotSyncWork);
    }
    expect(work[0]).toBe(work[1]);
  });

  it('same with incremental tracking on: the dirty sets are handed over, not visited', () => {
    const work: number[] = [];
    for (const n of [10, 100_000]) {
      const b = new HeapKeyedStateBackend({ maxParallelism: 32, keyGroupRange: RANGE, incremental: true });
      const s = b.value<number>('s');
      for (let k = 0; k < n; k++) {
        b.setCurrentKey(k);
        s.update(k);
      }
      const before = b.counters.snapshotSyncWork;
      b.snapshot(1);
      work.push(b.counters.snapshotSyncWork - before);
    }
    expect(work[0]).toBe(work[1]);
  });

  it('copies are paid only for entries touched after the barrier, once per key', () => {
    const { b, s } = filled(50_000);
    const snap = b.snapshot(1);
    const before = b.counters.valuesCopied;
    for (let round = 0; round < 3; round++) {
      for (let k = 0; k < 100; k++) {
        b.setCurrentKey(k);
        s.value()!.n++;
      }
    }
    expect(b.counters.valuesCopied - before).toBe(100);
    snap.release();
  });

  it('primitive reads never copy; no copies at all without a live snapshot', () => {
    const b = newBackend();
    const v = b.value<number>('v');
    const o = b.value<{ n: number }>('o');
    b.setCurrentKey(1);
    v.update(1);
    o.update({ n: 1 });
    b.snapshot(1).release();
    o.value()!.n++;
    const snap = b.snapshot(2);
    for (let i = 0; i < 10; i++) v.value();
    expect(b.counters.preimages).toBe(0);
    snap.release();
  });
});

describe('a releasing serialization (the checkpoint path)', () => {
  /** Tiny seeded PRNG (mulberry32): the same sequence of operations every run. */
  function rng(seed: number) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  const schema: Schema = { s: 'value', l: 'list' };
  const KEYS = 3000;

  /** Random writes, reads-with-mutation, clears and list appends on keys 0..KEYS+500. */
  function mutate(b: HeapKeyedStateBackend, next: () => number, count: number) {
    const s = b.value<{ n: number }>('s');
    const l = b.list<number>('l');
    for (let i = 0; i < count; i++) {
      b.setCurrentKey(Math.floor(next() * (KEYS + 500)));
      const r = next();
      if (r < 0.1) s.clear();
      else if (r < 0.4) {
        const o = s.value();
        if (o) o.n += 1000; // in place, no update()
      } else if (r < 0.7) s.update({ n: Math.floor(next() * 1e6) });
      else l.add(i);
    }
  }

  for (const seed of [1, 2, 3, 4, 5]) {
    it(`seed ${seed}: interleaved with random writes, full and delta each equal the barrier state`, async () => {
      const next = rng(seed);
      const b = new HeapKeyedStateBackend({ maxParallelism: 32, keyGroupRange: RANGE, incremental: true });
      mutate(b, next, 4 * KEYS);
      // An older snapshot stays live throughout (released normally): it still needs preimages
      // for every group, whatever the releasing one skips.
      // Dumps are taken before the barrier: reading objects touches them (makes preimages).
      const olderState = dumpBackend(b, schema);
      const older = b.snapshot(1);
      const olderFull = await older.encode('full');
      b.notifyCheckpointComplete(1);
      mutate(b, next, KEYS);
      const atBarrier = dumpBackend(b, schema);
      const snap = b.snapshot(2);
      const mode = seed % 2 === 0 ? 'full' : 'delta';
      const chunks = [];
      for await (const c of snap.chunks(mode, { release: true })) {
        chunks.push(c);
        mutate(b, next, 300);
      }
      expect(snap.released).toBe(true);
      await expect(snap.encode()).rejects.toThrow(StateAccessError);
      const restored = newBackend();
      restored.restore(mode === 'full' ? chunks : [...olderFull.chunks, ...chunks]);
      expect(dumpBackend(restored, schema)).toEqual(atBarrier);
      // The older snapshot, still live, is unaffected.
      const olderRestored = newBackend();
      olderRestored.restore((await older.encode('full')).chunks);
      expect(dumpBackend(olderRestored, schema)).toEqual(olderState);
      older.release();
      expect(b.liveSnapshots).toBe(0);
    });
  }

  it('makes no preimage for a group once it is encoded, and none for groups a delta does not visit', async () => {
    const b = new HeapKeyedStateBackend({ maxParallelism: 32, keyGroupRange: RANGE, incremental: true });
    const s = b.value<{ n: number }>('s');
    for (let k = 0; k < 1000; k++) {
      b.setCurrentKey(k);
      s.update({ n: k });
    }
    const first = b.snapshot(1);
    await first.encode('full', { release: true });
    b.notifyCheckpointComplete(1);
    b.setCurrentKey(7); // one dirty key: the delta visits one group
    s.update({ n: -7 });
    const snap = b.snapshot(2);
    b.setCurrentKey(7);
    const groupOf7 = b.currentKeyGroup;
    const before = b.counters.preimages;
    // The generator starts at the first next(): it encodes key 7's group before yielding.
    const gen = snap.chunks('delta', { release: true });
    const pending = gen.next();
    for (let k = 0; k < 1000; k++) {
      b.setCurrentKey(k);
      s.value()!.n++;
    }
    expect(b.counters.preimages).toBe(before); // groups not visited, or encoded already
    expect((await pending).value?.keyGroup).toBe(groupOf7);
    expect((await gen.next()).done).toBe(true);
    expect(b.liveSnapshots).toBe(0);

    // Without release, the same touches make preimages.
    const third = b.snapshot(3);
    const mark = b.counters.preimages;
    b.setCurrentKey(1);
    s.value()!.n++;
    expect(b.counters.preimages).toBe(mark + 1);
    third.release();
  });
});
