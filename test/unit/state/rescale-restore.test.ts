import { describe, expect, it } from 'vitest';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-state-backend.js';
import type { KeyGroupChunk } from '../../../src/state/key-group-chunk.js';
import {
  assignToKeyGroup,
  canonicalKey,
  keyGroupRangeFor,
  operatorIndexForKeyGroup,
} from '../../../src/state/key-groups.js';

const MAX_P = 128;
const KEYS = 3000;

function subtasks(parallelism: number) {
  return Array.from(
    { length: parallelism },
    (_, i) =>
      new HeapKeyedStateBackend({
        maxParallelism: MAX_P,
        keyGroupRange: keyGroupRangeFor(MAX_P, parallelism, i),
      }),
  );
}

async function snapshotAll(
  backends: HeapKeyedStateBackend[],
  checkpointId: number,
): Promise<KeyGroupChunk[]> {
  const chunks: KeyGroupChunk[] = [];
  for (const b of backends) {
    const s = b.snapshot(checkpointId);
    chunks.push(...(await s.encode()).chunks);
    s.release();
  }
  return chunks;
}

/** canonical key → (number of subtasks holding it, its values) */
function census(backends: HeapKeyedStateBackend[]) {
  const seen = new Map<string, { count: number; value: unknown; list: unknown }>();
  backends.forEach((b) => {
    const keys = new Map<string, unknown>();
    for (const k of [...b.keys('v'), ...b.keys('l')]) keys.set(canonicalKey(k), k);
    for (const [ck, k] of keys) {
      b.setCurrentKey(k);
      const c = seen.get(ck) ?? { count: 0, value: undefined, list: undefined };
      c.count++;
      c.value = b.value('v').value();
      c.list = b.list('l').get();
      seen.set(ck, c);
    }
  });
  return seen;
}

describe('rescaling restores every key exactly once', () => {
  it('2 → 3 → 1', async () => {
    const two = subtasks(2);
    const keyOf = (i: number) => (i % 3 === 0 ? `key-${i}` : i % 3 === 1 ? i : [i, 'c']);
    for (let i = 0; i < KEYS; i++) {
      const key = keyOf(i);
      const owner = two[operatorIndexForKeyGroup(MAX_P, 2, assignToKeyGroup(key, MAX_P))];
      owner.setCurrentKey(key);
      owner.value<{ i: number }>('v').update({ i });
      if (i % 2 === 0) owner.list<number>('l').addAll([i, i + 1]);
    }
    const cp1 = await snapshotAll(two, 1);

    const three = subtasks(3);
    for (const b of three) {
      const summary = b.restore(cp1);
      expect(summary.appliedChunks + summary.skippedChunks).toBe(cp1.length);
    }
    const c3 = census(three);
    expect(c3.size).toBe(KEYS);
    for (let i = 0; i < KEYS; i++) {
      const c = c3.get(canonicalKey(keyOf(i)));
      expect(c?.count).toBe(1);
      expect(c?.value).toEqual({ i });
      expect(c?.list).toEqual(i % 2 === 0 ? [i, i + 1] : []);
    }
    // The new owners keep working, then rescale again to 1.
    for (const b of three) {
      for (const k of [...b.keys('v')]) {
        b.setCurrentKey(k);
        b.value<{ i: number }>('v').value()!.i += 1_000_000;
      }
    }
    const cp2 = await snapshotAll(three, 2);
    const [one] = subtasks(1);
    const summary = one.restore(cp2);
    expect(summary.skippedChunks).toBe(0);
    const c1 = census([one]);
    expect(c1.size).toBe(KEYS);
    let total = 0;
    for (const c of c1.values()) {
      expect(c.count).toBe(1);
      total += (c.value as { i: number }).i - 1_000_000;
    }
    expect(total).toBe((KEYS * (KEYS - 1)) / 2);
  });
});
