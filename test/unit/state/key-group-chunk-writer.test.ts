import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { msgpackValueOptions } from '../../../src/channels/msgpack-values.js';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-state-backend.js';
import {
  type ChunkSection,
  decodeKeyGroupChunk,
  encodeKeyGroupChunk,
  type KeyGroupChunk,
} from '../../../src/state/key-group-chunk.js';
import { KeyGroupChunkWriter } from '../../../src/state/key-group-chunk-writer.js';

/** The backends' codec (abstract-keyed-state-backend.ts). */
const newPackr = () =>
  new Packr({ useRecords: false, useBigIntExtension: true, ...msgpackValueOptions('a state value') });

/** Tiny seeded PRNG (mulberry32): the same cases every run. */
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

const EDGE_NUMBERS = [
  0,
  -0,
  Number.NaN,
  1,
  -1,
  31,
  32,
  127,
  128,
  255,
  256,
  65535,
  65536,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32 - 1,
  2 ** 32,
  -32,
  -33,
  -128,
  -129,
  -32768,
  -32769,
  -(2 ** 31),
  -(2 ** 31) - 1,
  2 ** 53,
  -(2 ** 53),
  Number.MAX_SAFE_INTEGER,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  0.5,
  -1.25,
  1e21,
  1733234567890,
];
const UNITS = ['a', 'é', 'ß', '€', '中', '😀', '\ud800', '\udfff', '\u0000', ' ', 'z'];
const WELL_FORMED_UNITS = UNITS.filter((u) => !/^[\ud800-\udfff]$/.test(u)); // no lone surrogate
const pick = <T>(xs: readonly T[], next: () => number): T => xs[Math.floor(next() * xs.length)];

/** A key a keyed operator may have (no NaN) that reads back as itself (well-formed UTF-16). */
function randomBackendKey(next: () => number): string | number {
  if (next() < 0.5) return randomString(next, true);
  const n = randomNumber(next);
  return Number.isNaN(n) ? 1.5 : n;
}

function randomString(next: () => number, wellFormed = false): string {
  const r = next();
  // Lengths around msgpack's header limits (31/32, 255/256) and msgpackr's 64-char switch.
  const len =
    r < 0.1
      ? 0
      : r < 0.6
        ? Math.floor(next() * 40)
        : r < 0.8
          ? 60 + Math.floor(next() * 10)
          : Math.floor(next() * 300);
  const ascii = next() < 0.5;
  let s = '';
  for (let i = 0; i < len; i++)
    s += ascii
      ? String.fromCharCode(97 + Math.floor(next() * 26))
      : pick(wellFormed ? WELL_FORMED_UNITS : UNITS, next);
  return s;
}

function randomNumber(next: () => number): number {
  const r = next();
  if (r < 0.3) return EDGE_NUMBERS[Math.floor(next() * EDGE_NUMBERS.length)];
  if (r < 0.6) return Math.floor((next() - 0.5) * 2 ** (1 + Math.floor(next() * 40)));
  return (next() - 0.5) * 10 ** Math.floor(next() * 20);
}

function randomKey(next: () => number): string | number {
  return next() < 0.5 ? randomString(next) : randomNumber(next);
}

function randomValue(next: () => number, wellFormed = false): unknown {
  const r = next();
  if (r < 0.45) return randomNumber(next);
  if (r < 0.8) return randomString(next, wellFormed);
  if (r < 0.9) return next() < 0.5;
  return null;
}

function randomSections(next: () => number): ChunkSection[] {
  const sections: ChunkSection[] = [];
  const count = 1 + Math.floor(next() * 3);
  for (let s = 0; s < count; s++) {
    const upserts: unknown[] = [];
    const r = next();
    const entries =
      r < 0.3
        ? Math.floor(next() * 5)
        : r < 0.9
          ? Math.floor(next() * 40)
          : 5000 + Math.floor(next() * 20000);
    for (let i = 0; i < entries; i++) {
      upserts.push(
        randomKey(next),
        randomValue(next),
        next() < 0.7 ? 0 : 1733234567890 + Math.floor(next() * 1e6),
      );
    }
    sections.push([
      s === 0 ? 'v' : randomString(next) || 'x',
      next() < 0.5 ? 'value' : 'reducing',
      upserts,
      [],
    ]);
  }
  return sections;
}

/** Writes `sections` with the writer; a section with no upserts is left out, as a full encoding does. */
function write(w: KeyGroupChunkWriter, keyGroup: number, checkpointId: number, sections: ChunkSection[]) {
  w.begin();
  for (const [name, kind, upserts] of sections) {
    w.beginSection(name, kind);
    for (let i = 0; i < upserts.length; i += 3) {
      expect(w.entry(upserts[i], upserts[i + 1], upserts[i + 2] as number)).toBe(true);
    }
    w.endSection();
  }
  return w.finish(keyGroup, checkpointId);
}

/** Deep equality that tells -0 from 0 and NaN from everything else, for decoded sections. */
function expectSameSections(actual: readonly ChunkSection[], expected: readonly ChunkSection[]) {
  expect(actual.length).toBe(expected.length);
  for (let s = 0; s < expected.length; s++) {
    const [a, e] = [actual[s], expected[s]];
    expect([a[0], a[1], a[3]]).toEqual([e[0], e[1], e[3]]);
    expect(a[2].length).toBe(e[2].length);
    for (let i = 0; i < e[2].length; i++) {
      if (!Object.is(a[2][i], e[2][i]))
        expect.fail(`section ${s} field ${i}: ${String(a[2][i])} ≠ ${String(e[2][i])}`);
    }
  }
}

describe('KeyGroupChunkWriter (full chunks of the common entry shapes)', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`seed ${seed}: the bytes are encodeKeyGroupChunk's for the same sections, and decode to them`, () => {
      const next = rng(seed);
      const packr = newPackr();
      const w = new KeyGroupChunkWriter(); // reused across chunks, as a snapshot does
      for (let c = 0; c < 12; c++) {
        const sections = randomSections(next);
        const keyGroup = Math.floor(next() * 32768);
        const checkpointId = 1 + Math.floor(next() * 1e6);
        const bytes = write(w, keyGroup, checkpointId, sections);
        const nonEmpty = sections.filter((s) => s[2].length > 0);
        if (nonEmpty.length === 0) {
          expect(bytes).toBeUndefined();
          continue;
        }
        const expected = encodeKeyGroupChunk(packr, keyGroup, 'full', checkpointId, undefined, nonEmpty);
        expect(Buffer.from(bytes!).equals(Buffer.from(expected.bytes))).toBe(true);
        const decoded = decodeKeyGroupChunk(packr, { keyGroup, bytes: bytes! });
        expect(decoded.kind).toBe('full');
        expect(decoded.checkpointId).toBe(checkpointId);
        expect(decoded.baseCheckpointId).toBeUndefined();
        // Today's decode of today's bytes (a lone surrogate reads back as U+FFFD on both paths).
        expectSameSections(decoded.sections, decodeKeyGroupChunk(packr, expected).sections);
      }
    });
  }

  it('each edge number and string unit as key and value, one at a time', () => {
    const packr = newPackr();
    const w = new KeyGroupChunkWriter();
    const fields: unknown[] = [
      ...EDGE_NUMBERS,
      ...UNITS,
      '',
      'x'.repeat(31),
      'x'.repeat(32),
      'é'.repeat(16),
      true,
      false,
      null,
    ];
    for (const f of fields) {
      const cases: ChunkSection[][] = [[['s', 'value', [1, f, 0], []]]];
      if (typeof f === 'string' || typeof f === 'number') cases.push([['s', 'value', [f, 1, 0], []]]);
      for (const sections of cases) {
        const bytes = write(w, 7, 3, sections)!;
        const expected = encodeKeyGroupChunk(packr, 7, 'full', 3, undefined, sections).bytes;
        expect(Buffer.from(bytes).toString('hex')).toBe(Buffer.from(expected).toString('hex'));
        expectSameSections(
          decodeKeyGroupChunk(packr, { keyGroup: 7, bytes }).sections,
          decodeKeyGroupChunk(packr, { keyGroup: 7, bytes: expected }).sections,
        );
      }
    }
  });

  it('refuses other shapes: the caller encodes the group the general way', () => {
    const w = new KeyGroupChunkWriter();
    w.begin();
    w.beginSection('s', 'value');
    for (const v of [undefined, {}, [1], new Map(), new Set(), 1n, new Date(0), new Uint8Array(1), () => 1]) {
      expect(w.entry('k', v, 0)).toBe(false);
    }
    for (const k of [undefined, null, true, 1n, ['a'], { a: 1 }]) expect(w.entry(k, 1, 0)).toBe(false);
  });
});

describe('heap full snapshot through the writer', () => {
  const RANGE = { start: 0, end: 31 };
  const newBackend = (clock?: () => number) =>
    new HeapKeyedStateBackend({ maxParallelism: 32, keyGroupRange: RANGE, clock });

  /** Every chunk is what encodeKeyGroupChunk writes for the sections it decodes to. */
  function expectGeneralBytes(chunks: readonly KeyGroupChunk[]) {
    const packr = newPackr();
    for (const c of chunks) {
      const d = decodeKeyGroupChunk(packr, c);
      const again = encodeKeyGroupChunk(packr, c.keyGroup, 'full', d.checkpointId, undefined, [
        ...d.sections,
      ]);
      expect(Buffer.from(c.bytes).equals(Buffer.from(again.bytes))).toBe(true);
    }
  }

  for (const seed of [11, 12, 13]) {
    it(`seed ${seed}: common shapes, objects in some keys, a list state, TTL: restores equal`, async () => {
      const next = rng(seed);
      let now = 1_000_000;
      const b = newBackend(() => now);
      const v = b.value<unknown>('v');
      const t = b.value<unknown>('t', { ttlMs: 1000 });
      const model = new Map<unknown, unknown>();
      const live = new Map<unknown, unknown>(); // t: keys written late enough to outlive the barrier
      for (let i = 0; i < 3000; i++) {
        const key = randomBackendKey(next);
        b.setCurrentKey(key);
        // One key in ~300 holds an object: its key group takes the general path.
        const value =
          next() < 0.003 ? { o: randomNumber(next), m: new Map([[1, -0]]) } : randomValue(next, true);
        v.update(value);
        model.set(Object.is(key, -0) ? 0 : key, value);
        if (next() < 0.3) {
          t.update(randomValue(next, true));
          if (i >= 2000) live.set(Object.is(key, -0) ? 0 : key, t.value());
        }
        if (i === 1999) now += 2000; // earlier t entries expire at the barrier
      }
      const snap = b.snapshot(1);
      const { chunks, metadata } = await snap.encode('full');
      snap.release();
      expect(metadata.entries).toBe(model.size + live.size);
      expectGeneralBytes(chunks.filter((c) => !hasObject(c)));
      const r = newBackend(() => now);
      r.restore(chunks);
      const rv = r.value<unknown>('v');
      const rt = r.value<unknown>('t', { ttlMs: 1000 });
      expect([...r.keys('v')].length).toBe(model.size);
      for (const [key, value] of model) {
        r.setCurrentKey(key);
        expect(rv.value()).toEqual(value);
        if (typeof value === 'number' && !Object.is(rv.value(), value))
          expect.fail(`${String(key)}: ${rv.value()} ≠ ${value}`);
        expect(rt.value()).toEqual(live.get(key));
      }
    });
  }

  function hasObject(c: KeyGroupChunk): boolean {
    const d = decodeKeyGroupChunk(newPackr(), c);
    return d.sections.some((s) => s[2].some((x) => typeof x === 'object' && x !== null));
  }

  it('a list or map state takes the general path and restores alike', async () => {
    const b = newBackend();
    const v = b.value<number>('v');
    const l = b.list<number>('l');
    const m = b.map<string, number>('m');
    for (let k = 0; k < 200; k++) {
      b.setCurrentKey(`k${k}`);
      v.update(k === 5 ? -0 : k * 1.5);
      if (k % 3 === 0) l.add(k);
      if (k % 5 === 0) m.put('x', -0);
    }
    const snap = b.snapshot(1);
    const { chunks, metadata } = await snap.encode('full');
    snap.release();
    expect(metadata.entries).toBe(200 + 67 + 40);
    const r = newBackend();
    r.restore(chunks);
    for (let k = 0; k < 200; k++) {
      r.setCurrentKey(`k${k}`);
      expect(Object.is(r.value<number>('v').value(), k === 5 ? -0 : k * 1.5)).toBe(true);
      expect(r.list<number>('l').get()).toEqual(k % 3 === 0 ? [k] : []);
      expect(Object.is(r.map<string, number>('m').get('x'), k % 5 === 0 ? -0 : undefined)).toBe(true);
    }
  });
});
