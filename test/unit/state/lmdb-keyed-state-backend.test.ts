/** What is particular to the lmdb backend: bounds, the MVCC snapshot, key limits, close. */

import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StateAccessError } from '../../../src/errors.js';
import { LmdbKeyedStateBackend } from '../../../src/state/lmdb/lmdb-keyed-state-backend.js';

const RANGE = { start: 0, end: 15 };
const parents: string[] = [];
const backends: LmdbKeyedStateBackend[] = [];
afterEach(async () => {
  await Promise.all(backends.splice(0).map((b) => b.close()));
  for (const p of parents.splice(0)) rmSync(p, { recursive: true, force: true });
});

function make(extra: Partial<ConstructorParameters<typeof LmdbKeyedStateBackend>[0]> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'weir-lmdb-test-'));
  parents.push(dir);
  const b = new LmdbKeyedStateBackend({ maxParallelism: 16, keyGroupRange: RANGE, dir, ...extra });
  backends.push(b);
  return b;
}

describe('lmdb keyed state backend', () => {
  it('bounds the write backlog and the cache between records', () => {
    const b = make({ maxPendingWrites: 10, maxCachedEntries: 50 });
    const v = b.value<number>('v');
    for (let k = 0; k < 500; k++) {
      b.setCurrentKey(k);
      expect(b.counters.pendingWrites).toBeLessThan(10);
      expect(b.counters.cachedEntries).toBeLessThan(50);
      v.update(k);
    }
    expect(b.counters.flushes).toBeGreaterThan(40);
    expect(b.counters.cacheDrops).toBeGreaterThan(5);
    for (let k = 0; k < 500; k++) {
      b.setCurrentKey(k);
      expect(v.value()).toBe(k);
    }
  });

  it('a snapshot is the state at the barrier although writes go on and are written back', async () => {
    const b = make({ maxPendingWrites: 3, maxCachedEntries: 8 });
    const v = b.value<{ n: number }>('v');
    for (let k = 0; k < 40; k++) {
      b.setCurrentKey(k);
      v.update({ n: k });
    }
    const snap = b.snapshot(1);
    for (let k = 0; k < 40; k++) {
      b.setCurrentKey(k);
      if (k % 2 === 0) v.clear();
      else v.value()!.n += 1000; // in-place mutation, written back later
    }
    b.setCurrentKey('late');
    v.update({ n: -1 });
    expect(b.counters.flushes).toBeGreaterThan(5);
    const { chunks, metadata } = await snap.encode('full');
    snap.release();
    expect(metadata.entries).toBe(40);
    const r = make();
    r.restore(chunks);
    const rv = r.value<{ n: number }>('v');
    for (let k = 0; k < 40; k++) {
      r.setCurrentKey(k);
      expect(rv.value()).toEqual({ n: k });
    }
    r.setCurrentKey('late');
    expect(rv.value()).toBeUndefined();
    // The live state has the later writes, including the in-place mutations.
    b.setCurrentKey(3);
    expect(v.value()).toEqual({ n: 1003 });
    expect([...b.keys('v')].length).toBe(21);
  });

  it('a live snapshot holds no LMDB read transaction: write-backs beside it reuse freed pages', async () => {
    // LMDB cannot reuse a page freed after its oldest live reader began: a snapshot holding one
    // read transaction made every write-back allocate fresh pages (issue 14, lmdbpin14).
    const b = make({ maxPendingWrites: 64, maxCachedEntries: 256 });
    const v = b.value<number>('v');
    const KEYS = 4000;
    for (let k = 0; k < KEYS; k++) {
      b.setCurrentKey(k);
      v.update(k);
    }
    b.setCurrentKey('flush'); // writes the backlog back
    const file = join(b.path, 'data.mdb');
    const before = statSync(file).size;
    const snap = b.snapshot(1);
    let seed = 7;
    for (let i = 0; i < 64 * 400; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      b.setCurrentKey(seed % KEYS);
      v.update(-i - 1);
    }
    expect(b.counters.flushes).toBeGreaterThan(350);
    // ~400 write-backs of 64 scattered keys: with a pinned view each allocated ~64 new pages
    // (the file grew 47 MiB); without one it keeps its size (LMDB reuses the freed pages).
    expect(statSync(file).size - before).toBeLessThan(2 * 2 ** 20);
    const { chunks, metadata } = await snap.encode('full', { release: true });
    expect(metadata.entries).toBe(KEYS);
    const r = make();
    r.restore(chunks);
    const rv = r.value<number>('v');
    for (let k = 0; k < KEYS; k++) {
      r.setCurrentKey(k);
      expect(rv.value()).toBe(k);
    }
  });

  it('a releasing delta is the state at the barrier although its dirty keys are written back between key groups', async () => {
    const b = make({ maxPendingWrites: 4, maxCachedEntries: 64, incremental: true });
    const v = b.value<number>('v');
    const KEYS = 400;
    for (let k = 0; k < KEYS; k++) {
      b.setCurrentKey(k);
      v.update(k);
    }
    const base = (await b.snapshot(1).encode('full', { release: true })).chunks;
    b.notifyCheckpointComplete(1);
    for (let k = 0; k < KEYS; k += 2) {
      b.setCurrentKey(k); // dirty in the delta's epoch
      v.update(k + 10_000);
    }
    const snap = b.snapshot(2);
    const chunks = [];
    let round = 0;
    // The checkpoint's (releasing) delta, with every key, dirty or not, written again (and
    // written back) after each key group: the delta's keys must keep their barrier values.
    for await (const c of snap.chunks('delta', { release: true })) {
      chunks.push(c);
      round++;
      for (let k = 0; k < KEYS; k++) {
        b.setCurrentKey(k);
        if (k % 3 === 0) v.clear();
        else v.update(-round);
      }
    }
    expect(chunks.length).toBeGreaterThan(3);
    const r = make();
    r.restore([...base, ...chunks]);
    const rv = r.value<number>('v');
    for (let k = 0; k < KEYS; k++) {
      r.setCurrentKey(k);
      expect(rv.value()).toBe(k % 2 === 0 ? k + 10_000 : k);
    }
  });

  it('the barrier writes nothing: pending writes, removes and new keys reach the snapshot from its image', async () => {
    const b = make({ maxPendingWrites: 1000, incremental: true });
    const v = b.value<{ n: number }>('v');
    for (let k = 0; k < 20; k++) {
      b.setCurrentKey(k);
      v.update({ n: k });
    }
    const base = (await b.snapshot(1).encode('full', { release: true })).chunks;
    b.notifyCheckpointComplete(1);
    b.setCurrentKey(0); // written back before the barrier: the view has its new value
    v.update({ n: 100 });
    for (let k = 0; k < 20; k++) b.setCurrentKey(k); // no write-back: the backlog stays under its bound
    const flushesBefore = b.counters.flushes;
    const pendingBefore = b.counters.pendingWrites;
    b.setCurrentKey(1);
    v.value()!.n = 101; // pending in-place mutation of a stored key
    b.setCurrentKey(2);
    v.clear(); // pending remove of a stored key
    b.setCurrentKey('new');
    v.update({ n: -1 }); // pending write of a key the view does not have
    const pendingAtBarrier = b.counters.pendingWrites;
    const snap = b.snapshot(2);
    expect(b.counters.flushes).toBe(flushesBefore);
    expect(b.counters.pendingWrites).toBe(pendingAtBarrier);
    expect(pendingAtBarrier).toBeGreaterThan(pendingBefore);
    // After the barrier: written back, mutated again; the snapshot must not see any of it.
    b.setCurrentKey(1);
    v.value()!.n = 999;
    b.setCurrentKey('new');
    v.clear();
    b.setCurrentKey(3);
    v.update({ n: 333 });
    b.setCurrentKey('later');
    v.update({ n: 7 });
    for (let k = 0; k < 2000; k++) {
      b.setCurrentKey(`x${k}`);
      v.update({ n: k });
    }
    expect(b.counters.flushes).toBeGreaterThan(flushesBefore);
    const expected = new Map<unknown, unknown>(Array.from({ length: 20 }, (_, k) => [k, { n: k }]));
    expected.set(0, { n: 100 });
    expected.set(1, { n: 101 });
    expected.delete(2);
    expected.set('new', { n: -1 });
    const delta = await snap.encode('delta');
    expect(delta.metadata.kind).toBe('delta');
    const full = await snap.encode('full');
    snap.release();
    for (const chunks of [full.chunks, [...base, ...delta.chunks]]) {
      const r = make();
      r.restore(chunks);
      const rv = r.value<{ n: number }>('v');
      const restored = new Map<unknown, unknown>();
      for (const k of r.keys('v')) {
        r.setCurrentKey(k);
        restored.set(k, rv.value());
      }
      expect(restored).toEqual(expected);
    }
  });

  it('rejects keys beyond the LMDB key limit with a StateAccessError naming the state', () => {
    const b = make();
    b.setCurrentKey('x'.repeat(5000));
    expect(() => b.value('big').update(1)).toThrow(StateAccessError);
    expect(() => b.value('big').update(1)).toThrow(/'big'.*key limit/);
  });

  it('close ends snapshots, removes its directory, and makes the backend unusable', async () => {
    const b = make();
    b.setCurrentKey('k');
    b.value<number>('v').update(1);
    const snap = b.snapshot(1);
    expect(existsSync(b.path)).toBe(true);
    expect(readdirSync(b.path).length).toBeGreaterThan(0);
    await b.close();
    await b.close(); // idempotent
    expect(existsSync(b.path)).toBe(false);
    expect(b.liveSnapshots).toBe(0);
    await expect(snap.encode()).rejects.toThrow(/released/);
    expect(() => b.setCurrentKey('k')).toThrow(StateAccessError);
    expect(() => b.snapshot(2)).toThrow(/closed/);
  });

  it('validates its options before creating anything', () => {
    const before = readdirSync(tmpdir()).filter((n) => n.startsWith('weir-state-')).length;
    expect(() => make({ maxPendingWrites: 0 })).toThrow(RangeError);
    expect(() => make({ maxParallelism: 0 })).toThrow(RangeError);
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith('weir-state-')).length).toBe(before);
  });
});
