/**
 * setCurrentKey's key group for every kind of key equals `assignToKeyGroup` (the partitioner's),
 * including the inline fast path for strings; a key another subtask owns is a typed error.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyGroupOutOfRangeError } from '../../../src/errors.js';
import { HeapKeyedStateBackend } from '../../../src/state/heap-keyed-state-backend.js';
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
});
