/**
 * Pre-encoded upserts (`raw-upserts.ts`) and the msgpack skipping the lmdb snapshot uses to splice
 * stored entries into a chunk: a raw section decodes exactly as the same entries packed again.
 */

import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { encodeValue, msgpackValueOptions } from '../../../src/channels/msgpack-values.js';
import { StateAccessError } from '../../../src/errors.js';
import { decodeKeyGroupChunk, encodeKeyGroupChunk } from '../../../src/state/key-group-chunk.js';
import { readMsgpackNumber, skipMsgpack } from '../../../src/state/msgpack-skip.js';
import { RawUpserts } from '../../../src/state/raw-upserts.js';

// The state backends' Packr options (abstract-keyed-state-backend.ts).
const packr = new Packr({
  useRecords: false,
  useBigIntExtension: true,
  ...msgpackValueOptions('a state value'),
});
const pack = (v: unknown): Buffer => Buffer.from(packr.pack(encodeValue(v, true)));

/** Values msgpackr writes with every header family: fix/8/16/32 sizes, ext types, -0, Maps. */
const SPECIAL: unknown[] = [
  -0,
  0,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  -1.5,
  2 ** 40,
  -(2 ** 31) - 1,
  255,
  65535,
  -129,
  2n ** 70n,
  -5n,
  null,
  true,
  false,
  '',
  'é\u0000x',
  'x'.repeat(40),
  'y'.repeat(300),
  'z'.repeat(70000),
  new Date(1_700_000_000_123),
  new Map<unknown, unknown>([
    [-0, new Map([['in', -0]])],
    ['k', [1, -0]],
  ]),
  new Set([1, 'a', -0]),
  { a: -0, b: [new Map([[1, 2]])], c: { d: 'e' } },
  Array.from({ length: 20 }, (_, i) => i),
  Array.from({ length: 70000 }, (_, i) => i & 7),
  Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, i])),
  new Uint8Array([1, 2, 3]),
  new Uint8Array(300),
];

describe('skipMsgpack', () => {
  it('ends exactly where each special value ends, also between neighbours', () => {
    for (const v of SPECIAL) {
      const b = pack(v);
      expect(skipMsgpack(b, 0)).toBe(b.length);
      const framed = Buffer.concat([Buffer.from([0x07]), b, pack('after')]);
      expect(skipMsgpack(framed, 1)).toBe(1 + b.length);
    }
  });

  it('ends where msgpackr ends for arbitrary values (seeded)', () => {
    fc.assert(
      fc.property(
        fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true }),
        (v) => {
          const b = pack(v);
          expect(skipMsgpack(b, 0)).toBe(b.length);
        },
      ),
      { seed: 1414, numRuns: 500 },
    );
  });

  it('throws a StateAccessError on truncated bytes and on the reserved byte', () => {
    const b = pack(['abc', 'y'.repeat(300)]);
    expect(() => skipMsgpack(b.subarray(0, b.length - 1), 0)).toThrow(StateAccessError);
    expect(() => skipMsgpack(b.subarray(0, 3), 0)).toThrow(StateAccessError);
    expect(() => skipMsgpack(Buffer.from([0xc1]), 0)).toThrow(StateAccessError);
  });
});

describe('readMsgpackNumber', () => {
  it('reads every number form msgpackr writes, and rejects non-numbers', () => {
    for (const n of [
      0,
      1,
      127,
      128,
      255,
      256,
      65536,
      2 ** 32,
      1.7e12 + 0.5,
      -1,
      -32,
      -33,
      -200,
      -40000,
      -(2 ** 33),
      0.1,
    ]) {
      expect(readMsgpackNumber(pack(n), 0)).toBe(n);
    }
    expect(readMsgpackNumber(Buffer.from([0xcf, 0, 0, 0, 1, 0, 0, 0, 0]), 0)).toBe(2 ** 32);
    expect(readMsgpackNumber(Buffer.from([0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]), 0)).toBe(
      -2,
    );
    expect(() => readMsgpackNumber(pack('1'), 0)).toThrow(StateAccessError);
  });
});

describe('RawUpserts', () => {
  it('a chunk of spliced stored entries decodes to what packing the decoded entries gives', () => {
    const triples = SPECIAL.map((v, i) => [
      i % 2 === 0 ? `k${i}` : SPECIAL[i],
      v,
      i % 3 === 0 ? 0 : 1.7e12 + i,
    ]);
    const raw = new RawUpserts(16); // small: the buffer grows while entries are added
    const plain: unknown[] = [];
    for (const t of triples) {
      const stored = pack(t); // as the lmdb write-back stores it
      expect(stored[0]).toBe(0x93);
      raw.add(stored, 1, stored.length);
      plain.push(...(packr.unpack(stored) as unknown[]));
    }
    const tombstones = ['gone', -0, 3n];
    const viaRaw = encodeKeyGroupChunk(packr, 5, 'delta', 9, 8, [
      ['a', 'value', [1, 2, 0], []],
      ['s', 'map', raw, tombstones],
    ]);
    const viaPlain = encodeKeyGroupChunk(packr, 5, 'delta', 9, 8, [
      ['a', 'value', [1, 2, 0], []],
      ['s', 'map', plain, tombstones],
    ]);
    const decoded = decodeKeyGroupChunk(packr, viaRaw);
    expect(decoded).toEqual(decodeKeyGroupChunk(packr, viaPlain));
    expect(raw.entries).toBe(triples.length);
    // toEqual tells -0 from 0; check the -0s did not become 0 on either side.
    const upserts = decoded.sections[1][2];
    expect(Object.is(upserts[1], -0)).toBe(true);
    expect(Object.is(decoded.sections[1][3][1], -0)).toBe(true);
    expect(upserts).toEqual(triples.flat());
  });
});
