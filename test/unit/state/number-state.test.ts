/**
 * Declared-number keyed state (`{ type: 'number' }` on value and reducing state), both backends:
 * non-numbers are refused with a StateAccessError that leaves state (and live snapshots) as they
 * were; any number (-0, NaN, ±Infinity, fractions) round-trips exactly (`Object.is`) through full
 * and incremental snapshots, across backends, declared ↔ undeclared, and across rescaling; a
 * restored non-number is refused when the state is declared; TTL works as for undeclared state;
 * copy-on-write holds over many key groups while a releasing serialization runs between writes.
 *
 * Comparisons use `toEqual`/`toBe`, which compare numbers with `Object.is` (-0 ≠ 0, NaN = NaN);
 * the first test checks that, so a change of matcher semantics cannot make these tests vacuous.
 */

import { afterEach, describe, expect, it } from 'vitest';
import type { StateOptions } from '../../../src/api/functions.js';
import { StateAccessError } from '../../../src/errors.js';
import type { AbstractKeyedStateSnapshot } from '../../../src/state/abstract-keyed-state-snapshot.js';
import type { KeyGroupChunk } from '../../../src/state/key-group-chunk.js';
import { canonicalKey, keyGroupRangeFor, operatorIndexForKeyGroup } from '../../../src/state/key-groups.js';
import type { KeyedStateBackend } from '../../../src/state/keyed-state-backend.js';
import { closeBackends, keyGroupOf, syncBackendFactories } from './backend-factories.js';

// Until `type` is part of StateOptions this line is the one type error of the file.
const NUM: StateOptions = { type: 'number' };
const MAX_P = 128;
const RANGE = { start: 0, end: MAX_P - 1 };
const BACKENDS = Object.keys(syncBackendFactories);
const add = (a: number, b: number) => a + b;
const SPECIALS: readonly number[] = [
  -0,
  0,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  0.1,
  -2.5,
  1 / 3,
  Number.MIN_VALUE,
  -Number.MAX_VALUE,
  2 ** 53 + 2,
  -(2 ** 31) - 1,
];
const NON_NUMBERS: readonly unknown[] = ['x', '1', {}, [1], 1n, null, true, { valueOf: () => 1 }];

afterEach(closeBackends);

function make(kind: string, o: { range?: typeof RANGE; clock?: () => number; incremental?: boolean } = {}) {
  return syncBackendFactories[kind]({
    maxParallelism: MAX_P,
    keyGroupRange: o.range ?? RANGE,
    clock: o.clock,
    incremental: o.incremental,
  });
}

/** Registers the number states `n` (value) and `r` (reducing, sum), declared or not. */
function numberStates(b: KeyedStateBackend, declared: boolean, options: StateOptions = {}) {
  const opts = declared ? { ...NUM, ...options } : options;
  return { n: b.value<number>('n', opts), r: b.reducing<number>('r', add, opts) };
}

/** `n` and `r` of every key (declaring them first when `declared`), keyed by canonical key. */
function dumpNumbers(b: KeyedStateBackend, declared: boolean) {
  const { n, r } = numberStates(b, declared);
  const out: { n: Record<string, number | undefined>; r: Record<string, number | undefined> } = {
    n: {},
    r: {},
  };
  for (const k of [...b.keys('n')]) {
    b.setCurrentKey(k);
    out.n[canonicalKey(k)] = n.value();
  }
  for (const k of [...b.keys('r')]) {
    b.setCurrentKey(k);
    out.r[canonicalKey(k)] = r.get();
  }
  return out;
}

function restored(kind: string, chunks: Iterable<KeyGroupChunk>, declared: boolean, at?: number) {
  const r = make(kind, { clock: at === undefined ? undefined : () => at });
  r.restore(chunks);
  return dumpNumbers(r, declared);
}

/** The thrown error, or a failure if `f` does not throw. */
function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  expect.fail('expected a throw');
}

function expectTypeError(f: () => unknown, stateName: string): void {
  const err = thrown(f);
  expect(err).toBeInstanceOf(StateAccessError);
  expect(err.message).toContain(stateName);
  expect(err.message).toMatch(/type: ?['"]number['"]/);
}

it('the matchers used here compare numbers with Object.is', () => {
  expect({ a: -0 }).not.toEqual({ a: 0 });
  expect({ a: Number.NaN }).toEqual({ a: Number.NaN });
  expect(-0).not.toBe(0);
});

describe.each(BACKENDS)('%s: what is not a number is refused', (kind) => {
  it('value: update(non-number) throws StateAccessError naming the state; the value is unchanged', () => {
    const b = make(kind);
    const price = b.value<number>('price', NUM);
    b.setCurrentKey('k');
    price.update(1.5);
    for (const bad of NON_NUMBERS) {
      expectTypeError(() => price.update(bad as number), 'price');
      expect(price.value()).toBe(1.5);
    }
    // A key without a value stays without one.
    b.setCurrentKey('empty');
    for (const bad of NON_NUMBERS) expectTypeError(() => price.update(bad as number), 'price');
    expect(price.value()).toBeUndefined();
    expect([...b.keys('price')]).toEqual(['k']);
  });

  it('value: update(undefined) still clears, and every number is accepted', () => {
    const b = make(kind);
    const v = b.value<number>('v', NUM);
    b.setCurrentKey(1);
    for (const x of SPECIALS) {
      v.update(x);
      expect(v.value()).toBe(x);
    }
    v.update(undefined as unknown as number);
    expect(v.value()).toBeUndefined();
    expect([...b.keys('v')]).toEqual([]);
  });

  it('reducing: add(non-number) and a reduce function returning a non-number throw; the sum is unchanged', () => {
    const b = make(kind);
    const bad = (a: number, x: number) => (x === 13 ? ('oops' as unknown as number) : a + x);
    const total = b.reducing<number>('total', bad, NUM);
    b.setCurrentKey('k');
    // On an empty key add stores its argument without reducing: still checked.
    expectTypeError(() => total.add('x' as unknown as number), 'total');
    expect(total.get()).toBeUndefined();
    total.add(0.5);
    total.add(-0.25);
    for (const x of NON_NUMBERS) {
      expectTypeError(() => total.add(x as number), 'total');
      expect(total.get()).toBe(0.25);
    }
    expectTypeError(() => total.add(13), 'total');
    expect(total.get()).toBe(0.25);
    total.add(1);
    expect(total.get()).toBe(1.25);
  });

  it('a refused write while snapshots are live leaves the snapshots and the state as they were', async () => {
    const b = make(kind, { incremental: true });
    const { n, r } = numberStates(b, true);
    for (let k = 0; k < 300; k++) {
      b.setCurrentKey(k);
      n.update(k === 7 ? -0 : k + 0.5);
      r.add(k);
    }
    const before = dumpNumbers(b, true);
    const snap = b.snapshot(1);
    for (let k = 0; k < 300; k += 3) {
      b.setCurrentKey(k);
      expectTypeError(() => n.update(`${k}` as unknown as number), 'n');
      expectTypeError(() => r.add({ k } as unknown as number), 'r');
    }
    expect(dumpNumbers(b, true)).toEqual(before);
    const full = await snap.encode('full', { release: true });
    expect(restored(kind, full.chunks, true)).toEqual(before);
  });

  it.each([
    ['list state, type number', (b: KeyedStateBackend) => b.list('l1', NUM), 'l1'],
    ['map state, type number', (b: KeyedStateBackend) => b.map('m1', NUM), 'm1'],
    [
      'aggregating state, type number',
      (b: KeyedStateBackend) =>
        b.aggregating('a1', { createAccumulator: () => 0, add: add, getResult: (x: number) => x }, NUM),
      'a1',
    ],
    ['value state, type string', (b: KeyedStateBackend) => b.value('v1', { type: 'string' } as never), 'v1'],
    [
      'reducing state, type string',
      (b: KeyedStateBackend) => b.reducing('r1', add, { type: 'string' } as never),
      'r1',
    ],
    ['value state, type true', (b: KeyedStateBackend) => b.value('v2', { type: true } as never), 'v2'],
  ])('%s: RangeError at registration, naming the state', (_what, register, name) => {
    const b = make(kind);
    const err = thrown(() => register(b));
    expect(err).toBeInstanceOf(RangeError);
    expect(err.message).toContain(name);
  });
});

/** Writes every special number under its own key (and, summed in pairs, into `r`), keys over several key groups. */
function writeSpecials(b: KeyedStateBackend, declared: boolean) {
  const { n, r } = numberStates(b, declared);
  SPECIALS.forEach((x, i) => {
    b.setCurrentKey(`s${i}`);
    n.update(x);
    r.add(x);
    if (i % 2 === 1) r.add(SPECIALS[i - 1]);
  });
}

describe('special numbers round-trip through full and incremental snapshots', () => {
  const cases = BACKENDS.flatMap((from) =>
    [true, false].flatMap((fromDeclared) =>
      BACKENDS.flatMap((into) =>
        [true, false].map((intoDeclared) => ({ from, fromDeclared, into, intoDeclared })),
      ),
    ),
  ).filter((c) => c.fromDeclared || c.intoDeclared);
  it.each(cases)(
    '$from (declared: $fromDeclared) → $into (declared: $intoDeclared)',
    async ({ from, fromDeclared, into, intoDeclared }) => {
      const b = make(from, { incremental: true });
      writeSpecials(b, fromDeclared);
      const expected1 = dumpNumbers(b, fromDeclared);
      // Sanity: the dump holds what was written (so equality below is not between two empties).
      expect(Object.keys(expected1.n)).toHaveLength(SPECIALS.length);
      expect(expected1.n['s"s0"']).toBe(-0);
      expect(expected1.r['s"s1"']).toBe(0); // 0 + -0
      expect(expected1.r['s"s3"']).toBeNaN(); // Infinity + NaN
      expect(expected1.r['s"s5"']).toBe(Number.NEGATIVE_INFINITY); // 0.1 + -Infinity
      const s1 = b.snapshot(1);
      const full1 = await s1.encode('full', { release: true });
      b.notifyCheckpointComplete(1);

      // Checkpoint 2: every value becomes another special number, some keys go, one is new.
      const { n, r } = numberStates(b, fromDeclared);
      SPECIALS.forEach((_x, i) => {
        b.setCurrentKey(`s${i}`);
        if (i % 4 === 3) n.clear();
        else n.update(SPECIALS[(i + 5) % SPECIALS.length]);
        if (i % 3 === 0) r.clear();
        else r.add(SPECIALS[(i + 1) % SPECIALS.length]);
      });
      b.setCurrentKey('new');
      n.update(-0);
      r.add(Number.NaN);
      const expected2 = dumpNumbers(b, fromDeclared);
      const s2 = b.snapshot(2);
      expect(s2.baseCheckpointId).toBe(1);
      const delta2 = await s2.encode('delta');
      const full2 = await s2.encode('full', { release: true });
      expect(delta2.metadata.kind).toBe('delta');

      expect(restored(into, full1.chunks, intoDeclared)).toEqual(expected1);
      expect(restored(into, full2.chunks, intoDeclared)).toEqual(expected2);
      expect(restored(into, [...full1.chunks, ...delta2.chunks], intoDeclared)).toEqual(expected2);
    },
  );
});

describe.each(BACKENDS)('%s: restored non-numbers', (kind) => {
  it('are refused when the state is declared, naming it; the undeclared view still reads them', async () => {
    const src = make(kind);
    const mixed = src.value<unknown>('mixed');
    for (let k = 0; k < 200; k++) {
      src.setCurrentKey(k);
      mixed.update(k);
    }
    src.setCurrentKey(150); // one non-number among many numbers, in one key group
    mixed.update({ not: 'a number' });
    const s = src.snapshot(1);
    const { chunks } = await s.encode('full', { release: true });
    for (const into of BACKENDS) {
      const r = make(into);
      r.restore(chunks);
      if (into === 'heap') {
        // The heap backend moves the state into number slots at the declaration: refused there.
        expectTypeError(() => r.value<number>('mixed', NUM), 'mixed');
      } else {
        // lmdb (state may exceed memory: no scan at the declaration) refuses such a value when read.
        const declared = r.value<number>('mixed', NUM);
        r.setCurrentKey(149);
        expect(declared.value()).toBe(149);
        r.setCurrentKey(150);
        expectTypeError(() => declared.value(), 'mixed');
        // Overwriting it with a number is a valid write.
        declared.update(1);
        expect(declared.value()).toBe(1);
        continue;
      }
      const undeclared = r.value<unknown>('mixed');
      r.setCurrentKey(150);
      expect(undeclared.value()).toEqual({ not: 'a number' });
      r.setCurrentKey(149);
      expect(undeclared.value()).toBe(149);
      expect([...r.keys('mixed')]).toHaveLength(200);
    }
  });
});

describe.each(BACKENDS)('%s: TTL of declared number state', (kind) => {
  it('expires typed values and sums like undeclared ones, also in snapshots and after restore', async () => {
    const TTL = 10;
    let now = 0;
    const b = make(kind, { clock: () => now });
    const { n, r } = numberStates(b, true, { ttlMs: TTL });
    b.setCurrentKey('early');
    n.update(-0);
    r.add(Number.POSITIVE_INFINITY);
    now = 5;
    b.setCurrentKey('late');
    n.update(Number.NaN);
    r.add(0.1);
    r.add(0.2);
    now = 9;
    b.setCurrentKey('early');
    expect(n.value()).toBe(-0);
    now = 10;
    expect(n.value()).toBeUndefined();
    expect(r.get()).toBeUndefined();
    expect([...b.keys('n')]).toEqual(['late']);
    const snap = b.snapshot(1);
    const { chunks } = await snap.encode('full', { release: true });
    const late = { n: { 's"late"': Number.NaN }, r: { 's"late"': 0.1 + 0.2 } };
    for (const into of BACKENDS) {
      for (const declared of [true, false]) {
        expect(restored(into, chunks, declared, 10)).toEqual(late);
        expect(restored(into, chunks, declared, 14)).toEqual(late);
        expect(restored(into, chunks, declared, 15)).toEqual({ n: {}, r: {} });
      }
    }
    // A write refreshes the expiry, as for undeclared state.
    now = 14;
    b.setCurrentKey('late');
    n.update(2.5);
    now = 20;
    expect(n.value()).toBe(2.5);
    expect(r.get()).toBeUndefined();
  });
});

describe('rescaling restores declared number state', () => {
  const KEYS = 1500;
  const keyOf = (i: number) => (i % 2 === 0 ? `key-${i}` : i);
  const numberAt = (i: number) => SPECIALS[i % SPECIALS.length] + (i % 5 === 0 ? 0 : i / 7);

  function subtasks(kind: string, parallelism: number) {
    return Array.from({ length: parallelism }, (_, i) =>
      make(kind, { range: keyGroupRangeFor(MAX_P, parallelism, i) }),
    );
  }
  async function snapshotAll(backends: KeyedStateBackend[], checkpointId: number) {
    const chunks: KeyGroupChunk[] = [];
    for (const b of backends)
      chunks.push(...(await b.snapshot(checkpointId).encode('full', { release: true })).chunks);
    return chunks;
  }
  /** Every key held exactly once over `backends`, with its value. */
  function census(backends: KeyedStateBackend[], declared: boolean) {
    const all = { n: {} as Record<string, number | undefined>, r: {} as Record<string, number | undefined> };
    let count = 0;
    for (const b of backends) {
      const d = dumpNumbers(b, declared);
      count += Object.keys(d.n).length;
      Object.assign(all.n, d.n);
      Object.assign(all.r, d.r);
    }
    expect(count).toBe(Object.keys(all.n).length);
    return all;
  }

  it.each([
    { from: 'heap', mid: 'lmdb' },
    { from: 'lmdb', mid: 'heap' },
  ])('$from ×2 (declared) → $mid ×3 (undeclared) → $from ×1 (declared)', async ({ from, mid }) => {
    const two = subtasks(from, 2);
    const expected = { n: {} as Record<string, number>, r: {} as Record<string, number> };
    for (let i = 0; i < KEYS; i++) {
      const key = keyOf(i);
      const owner = two[operatorIndexForKeyGroup(MAX_P, 2, keyGroupOf(key, MAX_P))];
      owner.setCurrentKey(key);
      const { n, r } = numberStates(owner, true);
      n.update(numberAt(i));
      r.add(i / 4);
      r.add(-0.5);
      expected.n[canonicalKey(key)] = numberAt(i);
      expected.r[canonicalKey(key)] = i / 4 - 0.5;
    }
    const cp1 = await snapshotAll(two, 1);
    const three = subtasks(mid, 3);
    for (const b of three) b.restore(cp1);
    expect(census(three, false)).toEqual(expected);
    // The new owners change every value, then rescale to 1.
    for (const b of three) {
      const { n, r } = numberStates(b, false);
      for (const k of [...b.keys('n')]) {
        b.setCurrentKey(k);
        const ck = canonicalKey(k);
        n.update(-expected.n[ck]);
        r.add(1);
        expected.n[ck] = -expected.n[ck];
        expected.r[ck] += 1;
      }
    }
    const cp2 = await snapshotAll(three, 2);
    const [one] = subtasks(from, 1);
    one.restore(cp2);
    expect(census([one], true)).toEqual(expected);
  });
});

/**
 * Many keys over every key group: copy-on-write per key group, removals and re-insertions (space
 * reused) while two snapshots are live, and writes between the chunks of a releasing encoding.
 */
describe.each(BACKENDS)('%s: ~2 000 keys over all key groups', (kind) => {
  it('snapshots taken before overwrites, removals and re-insertions restore to their barrier state', async () => {
    const KEYS = 2000;
    const b = make(kind, { incremental: true });
    const { n, r } = numberStates(b, true);
    const keyOf = (i: number) => (i % 3 === 0 ? `k${i}` : i);
    const numberOf = (i: number, round: number) =>
      i % 11 === 0 ? SPECIALS[(i + round) % SPECIALS.length] : (i + round) / 8 - 100;
    const groups = new Set<number>();
    for (let i = 0; i < KEYS; i++) {
      b.setCurrentKey(keyOf(i));
      groups.add(b.currentKeyGroup);
      n.update(numberOf(i, 0));
      r.add(numberOf(i, 1));
    }
    expect(groups.size).toBe(MAX_P);
    const expected1 = dumpNumbers(b, true);
    const s1 = b.snapshot(1);

    // Overwrite half, remove a quarter, insert new keys (where removed ones were).
    for (let i = 0; i < KEYS; i++) {
      b.setCurrentKey(keyOf(i));
      if (i % 4 === 1) {
        n.clear();
        r.clear();
      } else if (i % 2 === 0) {
        n.update(numberOf(i, 2));
        r.add(numberOf(i, 3));
      }
    }
    for (let i = KEYS; i < KEYS + KEYS / 4; i++) {
      b.setCurrentKey(keyOf(i));
      n.update(numberOf(i, 4));
      r.add(numberOf(i, 5));
    }
    const expected2 = dumpNumbers(b, true);
    const s2 = b.snapshot(2);
    expect(expected2).not.toEqual(expected1);

    // Serialize s1, releasing as it goes, with writes between its chunks: overwrites, removals
    // of keys s1 holds, re-insertion of removed keys, and new keys.
    // `chunks` (streaming) is the snapshots' common implementation, not the interface.
    const streaming = s1 as unknown as AbstractKeyedStateSnapshot;
    const stream = streaming.chunks('full', { release: true });
    const chunks1: KeyGroupChunk[] = [];
    let round = 0;
    for await (const c of stream) {
      chunks1.push(c);
      round++;
      for (let i = round; i < KEYS + KEYS / 2; i += 37) {
        b.setCurrentKey(keyOf(i));
        if (i % 5 === 0) {
          n.clear();
          r.clear();
        } else {
          n.update(numberOf(i, round + 6));
          r.add(numberOf(i, round + 7));
        }
      }
    }
    expect(round).toBe(MAX_P);
    expect(streaming.released).toBe(true);
    b.notifyCheckpointComplete(1);
    const expected3 = dumpNumbers(b, true);
    const s3 = b.snapshot(3);
    expect(s3.baseCheckpointId).toBe(1);
    const delta3 = await s3.encode('delta', { release: true });
    expect(delta3.metadata.kind).toBe('delta');
    const full2 = await s2.encode('full', { release: true });
    expect(b.liveSnapshots).toBe(0);

    for (const into of BACKENDS) {
      expect(restored(into, chunks1, true)).toEqual(expected1);
      expect(restored(into, chunks1, false)).toEqual(expected1);
      expect(restored(into, full2.chunks, true)).toEqual(expected2);
      expect(restored(into, [...chunks1, ...delta3.chunks], true)).toEqual(expected3);
    }
    expect(dumpNumbers(b, true)).toEqual(expected3);
  });
});
