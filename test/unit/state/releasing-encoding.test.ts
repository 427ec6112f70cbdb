/**
 * A snapshot's releasing encoding (a checkpoint's serialization, its last use) is exclusive: a
 * second encoding started while it runs is refused with a StateAccessError, and the refusal leaves
 * the running one, and the snapshot it reads, intact. Both backends (the shared mechanism in
 * `abstract-keyed-state-snapshot.ts`).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StateAccessError } from '../../../src/errors.js';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-state-backend.js';
import type { KeyGroupChunk } from '../../../src/state/key-group-chunk.js';
import { LmdbKeyedStateBackend } from '../../../src/state/lmdb/lmdb-keyed-state-backend.js';

const RANGE = { start: 0, end: 15 };
const KEYS = 200;
const dirs: string[] = [];
const lmdbs: LmdbKeyedStateBackend[] = [];
afterEach(async () => {
  await Promise.all(lmdbs.splice(0).map((b) => b.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const backends = {
  heap: () => new HeapKeyedStateBackend({ maxParallelism: 16, keyGroupRange: RANGE }),
  lmdb: () => {
    const dir = mkdtempSync(join(tmpdir(), 'weir-releasing-'));
    dirs.push(dir);
    const b = new LmdbKeyedStateBackend({
      maxParallelism: 16,
      keyGroupRange: RANGE,
      dir,
      maxPendingWrites: 8,
    });
    lmdbs.push(b);
    return b;
  },
};

describe.each(Object.entries(backends))('%s: a releasing encoding is exclusive', (_name, make) => {
  it('a second encoding during it is refused, and the first still yields the state at the barrier', async () => {
    const b = make();
    const v = b.value<number>('v');
    for (let k = 0; k < KEYS; k++) {
      b.setCurrentKey(`k${k}`);
      v.update(k);
    }
    const snap = b.snapshot(1);
    const first = snap.chunks('full', { release: true })[Symbol.asyncIterator]();
    const chunks: KeyGroupChunk[] = [];
    const head = await first.next();
    expect(head.done).toBe(false);
    chunks.push(head.value as KeyGroupChunk);

    await expect(snap.encode('full', { release: true })).rejects.toThrow(StateAccessError);
    await expect(snap.encode('full')).rejects.toThrow(/being released by its last serialization/);

    // Writes after the barrier, written back (lmdb) while the first encoding is half done.
    for (let k = 0; k < KEYS; k++) {
      b.setCurrentKey(`k${k}`);
      v.update(-k);
    }
    for (let r = await first.next(); !r.done; r = await first.next()) chunks.push(r.value);
    expect(snap.released).toBe(true);

    const restored = make();
    restored.restore(chunks);
    const rv = restored.value<number>('v');
    for (let k = 0; k < KEYS; k++) {
      restored.setCurrentKey(`k${k}`);
      expect(rv.value()).toBe(k);
    }
  });
});
