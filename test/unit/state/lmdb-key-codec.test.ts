import { describe, expect, it } from 'vitest';
import { StateAccessError } from '../../../src/errors.js';
import { internalKeyOf } from '../../../src/state/internal-key.js';
import {
  encodeStateKey,
  groupPrefix,
  stateIdOf,
  statePrefix,
} from '../../../src/state/lmdb/lmdb-key-codec.js';

const enc = (key: unknown, kg = 3, id = 2) => encodeStateKey(kg, id, internalKeyOf(key), 1978, 's');

describe('lmdb state keys', () => {
  it('are injective over internal keys of different types and equal for -0 and 0', () => {
    const keys = [1, '1', 1n, true, 'true', 0, '', '\u0000x', { a: 1 }, [1], 1.5, -1, 'é'];
    const encoded = keys.map((k) => enc(k).toString('hex'));
    expect(new Set(encoded).size).toBe(keys.length);
    expect(enc(-0).equals(enc(0))).toBe(true);
    expect(enc({ b: 2, a: 1 }).equals(enc({ a: 1, b: 2 }))).toBe(true);
  });

  it('sort by key group, then state, and fall inside their prefix ranges', () => {
    const k = enc('x', 7, 5);
    expect(stateIdOf(k)).toBe(5);
    expect(Buffer.compare(groupPrefix(7), k)).toBeLessThan(0);
    expect(Buffer.compare(k, groupPrefix(8))).toBeLessThan(0);
    expect(Buffer.compare(statePrefix(7, 5), k)).toBeLessThan(0);
    expect(Buffer.compare(k, statePrefix(7, 6))).toBeLessThan(0);
    expect(Buffer.compare(enc('zzz', 6, 9), enc('a', 7, 0))).toBeLessThan(0);
    expect(Buffer.compare(groupPrefix(32767), groupPrefix(32768))).toBeLessThan(0);
  });

  it('rejects keys over the size limit, naming the state', () => {
    expect(() => encodeStateKey(0, 0, 'x'.repeat(2000), 1978, 'big')).toThrow(StateAccessError);
    expect(() => encodeStateKey(0, 0, 'x'.repeat(2000), 1978, 'big')).toThrow(/'big'/);
    expect(encodeStateKey(0, 0, 'x'.repeat(1973), 1978, 'ok').length).toBe(1978);
  });
});
