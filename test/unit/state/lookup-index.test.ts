/**
 * The heap backend looks entries up in one map per state over all key groups (`StateTable.index`)
 * while snapshots and restore walk the per-group maps (`StateTable.groups`). The two must hold
 * the same entries after every insert, clear, TTL expiry and restore — including a restore into a
 * subtask that owns only part of the key groups, and a restore over existing state.
 */
import { describe, expect, it } from 'vitest';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-state-backend.js';
import type { StateTable } from '../../../src/state/state-table.js';

const full = { start: 0, end: 127 };

function tables(b: HeapKeyedStateBackend): Map<string, StateTable> {
  return (b as unknown as { core: { tables: Map<string, StateTable> } }).core.tables;
}

/** Every table's index holds exactly the entries (same objects) of its per-group maps. */
function expectIndexMatchesGroups(b: HeapKeyedStateBackend): number {
  let entries = 0;
  for (const t of tables(b).values()) {
    const fromGroups = new Map<unknown, unknown>();
    for (const m of t.groups) if (m !== undefined) for (const [k, e] of m) fromGroups.set(k, e);
    expect(t.index.size).toBe(fromGroups.size);
    for (const [k, e] of fromGroups) expect(t.index.get(k)).toBe(e);
    entries += fromGroups.size;
  }
  return entries;
}

describe('heap backend: the all-groups lookup index', () => {
  it('follows inserts, clears and TTL expiry', () => {
    let now = 0;
    const b = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: full, clock: () => now });
    for (let i = 0; i < 500; i++) {
      b.setCurrentKey(`k${i}`);
      b.value<number>('v').update(i);
      if (i % 3 === 0) b.value<number>('t', { ttlMs: 10 }).update(i);
    }
    expect(expectIndexMatchesGroups(b)).toBe(500 + 167);
    for (let i = 0; i < 500; i += 2) {
      b.setCurrentKey(`k${i}`);
      b.value<number>('v').clear();
    }
    now = 10;
    for (let i = 0; i < 500; i += 3) {
      b.setCurrentKey(`k${i}`);
      expect(b.value<number>('t').value()).toBeUndefined(); // expired: removed on read
    }
    expect(expectIndexMatchesGroups(b)).toBe(250);
  });

  it('is rebuilt by a restore, over existing state and into a part of the key groups', async () => {
    const source = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: full });
    for (let i = 0; i < 300; i++) {
      source.setCurrentKey(`k${i}`);
      source.value<number>('v').update(i);
    }
    const snapshot = source.snapshot(1);
    const chunks = (await snapshot.encode()).chunks;
    snapshot.release();

    const target = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: { start: 0, end: 63 } });
    const owned = [...source.keys('v')].filter((k) => keyGroupOf(source, k) <= 63);
    expect(owned.length).toBeGreaterThan(0);
    target.setCurrentKey(owned[0]);
    target.value<number>('v').update(-1); // replaced by the restore (its group's chunk is full)
    target.restore(chunks, { checkpointId: 1 });
    expect(expectIndexMatchesGroups(target)).toBe(owned.length);
    for (const k of owned) {
      target.setCurrentKey(k);
      expect(target.value<number>('v').value()).toBe(Number((k as string).slice(1)));
    }
  });
});

function keyGroupOf(b: HeapKeyedStateBackend, key: unknown): number {
  b.setCurrentKey(key);
  return b.currentKeyGroup;
}
