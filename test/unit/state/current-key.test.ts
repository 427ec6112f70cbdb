/**
 * setCurrentKey's key group for every kind of key equals `assignToKeyGroup` (the partitioner's),
 * including the inline fast path for strings; a key another subtask owns is a typed error.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyGroupOutOfRangeError } from '../../../src/errors.js';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-state-backend.js';
import { assignToKeyGroup, keyGroupRangeFor } from '../../../src/state/key-groups.js';

describe('HeapKeyedStateBackend.setCurrentKey', () => {
  it('puts every key in the key group the partitioner computes (property)', () => {
    const backend = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: { start: 0, end: 127 } });
    const key = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.string().map((s) => `\u0000${s}`),
      fc.constant(''),
      fc.integer(),
      fc.double({ noNaN: true }),
      fc.array(fc.integer(), { maxLength: 3 }),
    );
    fc.assert(
      fc.property(key, (k) => {
        backend.setCurrentKey(k);
        expect(backend.currentKeyGroup).toBe(assignToKeyGroup(k, 128));
        expect(backend.currentKey).toBe(k);
      }),
      { seed: 17, numRuns: 500 },
    );
  });

  it('a string key another subtask owns throws KeyGroupOutOfRangeError and leaves no key set', () => {
    const range = keyGroupRangeFor(128, 4, 1);
    const backend = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: range });
    let foreign = 'k0';
    for (
      let i = 0;
      assignToKeyGroup(foreign, 128) >= range.start && assignToKeyGroup(foreign, 128) <= range.end;
      i++
    ) {
      foreign = `k${i}`;
    }
    expect(() => backend.setCurrentKey(foreign)).toThrow(KeyGroupOutOfRangeError);
    expect(() => backend.value<number>('v').value()).toThrow(/no current key/);
  });

  it('takes a known key group (the producer partitioner’s) for string and number keys instead of hashing', () => {
    const range = keyGroupRangeFor(128, 2, 0); // 0..63
    const backend = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: range });
    // A group other than the hash's proves the known one is used (equal in real use).
    const other = (k: unknown) => (assignToKeyGroup(k, 128) + 1) % 64;
    for (const k of ['k1', 'k2', '', 7, -0, 2.5]) {
      backend.setCurrentKey(k, other(k));
      expect(backend.currentKeyGroup).toBe(other(k));
      expect(backend.currentKey).toBe(k);
    }
    backend.setCurrentKey('k1', 5);
    backend.value<number>('v').update(1);
    expect(backend.currentKeyGroup).toBe(5);
  });

  it('ignores a known key group for composite and escaped keys, and one outside the range', () => {
    const range = keyGroupRangeFor(128, 2, 0);
    const backend = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: range });
    let owned = 'k0';
    for (let i = 0; assignToKeyGroup(owned, 128) > range.end; i++) owned = `k${i}`;
    const keys: unknown[] = [['a', 1], { a: 1 }, '\u0000x', owned];
    for (const k of keys) {
      const group = assignToKeyGroup(k, 128);
      if (group > range.end) continue;
      backend.setCurrentKey(k, group === 0 ? 1 : 0);
      expect(backend.currentKeyGroup).toBe(k === owned ? (group === 0 ? 1 : 0) : group);
    }
    // Outside the range: the hash decides (and throws if this subtask does not own the key).
    backend.setCurrentKey(1);
    backend.setCurrentKey(owned, 100);
    expect(backend.currentKeyGroup).toBe(assignToKeyGroup(owned, 128));
  });

  it('a known key group in a range that does not start at 0 selects that group and its own state', () => {
    const range = keyGroupRangeFor(128, 2, 1); // 64..127: the group index is group - 64
    const backend = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: range });
    const owned: string[] = [];
    for (let i = 0; owned.length < 3; i++)
      if (assignToKeyGroup(`k${i}`, 128) >= range.start) owned.push(`k${i}`);
    // Keys one after the other and back: each key switch must reach that key's own entry.
    for (const [round, k] of [...owned, ...owned].entries()) {
      backend.setCurrentKey(k, assignToKeyGroup(k, 128));
      expect(backend.currentKeyGroup).toBe(assignToKeyGroup(k, 128));
      const v = backend.value<number>('v');
      v.update((v.value() ?? 0) + round + 1);
    }
    const sums = new Map<string, number>();
    for (const k of owned) {
      backend.setCurrentKey(k, assignToKeyGroup(k, 128));
      sums.set(k, backend.value<number>('v').value() ?? -1);
    }
    expect([...sums.values()]).toEqual([1 + 4, 2 + 5, 3 + 6]);
    expect([...backend.keys('v')].sort()).toEqual([...owned].sort());
  });
});
