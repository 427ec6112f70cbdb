/**
 * The heap backend caches the current key's entry per state (one Map lookup per record and state):
 * every way an entry can appear or disappear while its key stays current must be seen by the next
 * access — insert, clear, TTL expiry, a key switch and back, and a restore that replaces the tables.
 */
import { describe, expect, it } from 'vitest';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-state-backend.js';

const range = { start: 0, end: 127 };

describe('heap backend: cached current-key entry', () => {
  it('sees inserts, clears and overwrites made through any handle of the same state', () => {
    const b = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: range });
    b.setCurrentKey('a');
    const v1 = b.value<number>('v');
    expect(v1.value()).toBeUndefined(); // caches "no entry"
    v1.update(1); // insert must refresh the cache
    expect(b.value<number>('v').value()).toBe(1);
    v1.clear(); // remove must drop it
    expect(v1.value()).toBeUndefined();
    v1.update(2);
    b.setCurrentKey('b');
    expect(v1.value()).toBeUndefined();
    v1.update(3);
    b.setCurrentKey('a');
    expect(v1.value()).toBe(2);
    b.setCurrentKey('a'); // same key: no switch, cache stays valid
    v1.update(5);
    expect(v1.value()).toBe(5);
    b.setCurrentKey('b');
    expect(v1.value()).toBe(3);
  });

  it('an entry cached before its TTL passed is not returned after', () => {
    let now = 0;
    const b = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: range, clock: () => now });
    b.setCurrentKey(7);
    const t = b.value<number>('t', { ttlMs: 10 });
    t.update(1);
    expect(t.value()).toBe(1);
    now = 10;
    expect(t.value()).toBeUndefined();
    t.update(2);
    expect(t.value()).toBe(2);
  });

  it('a restore replaces what the current key had cached', async () => {
    const b = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: range });
    b.setCurrentKey('k');
    b.value<number>('v').update(1);
    const snapshot = b.snapshot(1);
    const chunks = (await snapshot.encode()).chunks;
    snapshot.release();
    b.value<number>('v').update(99);
    expect(b.value<number>('v').value()).toBe(99);
    b.restore(chunks, { checkpointId: 1 });
    expect(b.value<number>('v').value()).toBe(1);
  });
});
