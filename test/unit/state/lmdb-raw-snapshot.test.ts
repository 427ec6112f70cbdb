/**
 * The lmdb snapshot splices stored entry bytes into its chunks (`raw-upserts.ts`): its chunks must
 * decode to exactly the heap backend's for the same operations — special values, TTL'd entries,
 * entries expired at the barrier (skipped), keys written after the barrier (their barrier bytes),
 * full and delta.
 */

import { Packr } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeValue, msgpackValueOptions } from '../../../src/channels/msgpack-values.js';
import { decodeKeyGroupChunk, type KeyGroupChunk } from '../../../src/state/key-group-chunk.js';
import type { KeyedStateBackend } from '../../../src/state/keyed-state-backend.js';
import { closeBackends, syncBackendFactories } from './backend-factories.js';

const packr = new Packr({
  useRecords: false,
  useBigIntExtension: true,
  ...msgpackValueOptions('a state value'),
});
afterEach(closeBackends);

const VALUES: unknown[] = [
  -0,
  Number.NaN,
  Number.NEGATIVE_INFINITY,
  0.1,
  2 ** 53,
  2n ** 80n,
  7n,
  null,
  'ü'.repeat(50),
  new Date(1_700_000_000_000),
  new Map<unknown, unknown>([[-0, new Map([['x', -0]])]]),
  new Set(['a', -0, 2]),
  { n: -0, list: [1, -0, { m: new Map([[1, new Set([3])]]) }] },
  Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? -0 : i)),
];
const KEYS: unknown[] = ['plain', '\u0000escaped', 42, -0, 1.5, 12n, true, ['composite', 1], { k: 'obj' }];

type Sections = Record<string, { rows: unknown[]; tombstones: string[] }>;

/** Per key group: state → sorted `[key bytes (hex), value, expiresAt]` and sorted tombstone bytes. */
function canonical(chunks: readonly KeyGroupChunk[]): unknown {
  const out: Record<string, unknown> = {};
  for (const c of chunks) {
    const d = decodeKeyGroupChunk(packr, c);
    for (const [name, kind, upserts, tombstones] of d.sections) {
      const rows: [string, unknown, unknown][] = [];
      for (let i = 0; i < upserts.length; i += 3)
        rows.push([hex(upserts[i]), upserts[i + 1], upserts[i + 2]]);
      rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      out[`${d.kind} ${c.keyGroup} ${name} ${kind}`] = { rows, tombstones: tombstones.map(hex).sort() };
    }
  }
  return out;
}

function hex(v: unknown): string {
  return Buffer.from(packr.pack(encodeValue(v, true))).toString('hex');
}

/** The same script on either backend; returns its full chunks, then its delta's. */
async function script(backend: KeyedStateBackend, clock: { now: number }) {
  const v = backend.value<unknown>('v');
  const t = backend.value<unknown>('t', { ttlMs: 100 });
  const m = backend.map<string, unknown>('m');
  for (let i = 0; i < KEYS.length * 3; i++) {
    clock.now = i * 10;
    backend.setCurrentKey(KEYS[i % KEYS.length]);
    const value = VALUES[i % VALUES.length];
    if (i < KEYS.length) v.update(value);
    else if (i < 2 * KEYS.length)
      t.update(value); // written at 90..170: some expire by 200
    else m.put(`e${i}`, value);
  }
  const first = backend.snapshot(1);
  await first.encode('full');
  first.release();
  backend.notifyCheckpointComplete(1);
  // The clock only moves forward (heap serialization removes expired entries for good; lmdb's
  // stay stored, invisible). At 300 every TTL'd entry from above has expired.
  clock.now = 300;
  for (let i = 0; i < KEYS.length; i += 2) {
    backend.setCurrentKey(KEYS[i]);
    v.update(VALUES[(i + 5) % VALUES.length]);
    if (i % 4 === 0) t.clear();
    else t.update(VALUES[(i + 7) % VALUES.length]); // expires at 400
  }
  clock.now = 350;
  const snap = backend.snapshot(2);
  // Written after the barrier (written back, so the lmdb snapshot reads barrier bytes).
  for (let i = 0; i < KEYS.length; i++) {
    backend.setCurrentKey(KEYS[i]);
    v.update('after');
    m.clear();
  }
  backend.setCurrentKey('new-after-barrier');
  v.update(1);
  const full = await snap.encode('full');
  const delta = await snap.encode('delta');
  snap.release();
  return { full, delta };
}

describe('lmdb snapshot from stored bytes', () => {
  for (const incremental of [false, true]) {
    it(`chunks decode exactly as the heap backend's (${incremental ? 'incremental' : 'full only'})`, async () => {
      const results = [];
      for (const name of ['heap', 'lmdb']) {
        const clock = { now: 0 };
        const b = syncBackendFactories[name]({
          maxParallelism: 8,
          keyGroupRange: { start: 0, end: 7 },
          incremental,
          clock: () => clock.now,
        });
        results.push(await script(b, clock));
      }
      const [heap, lmdb] = results;
      expect(lmdb.full.metadata.entries).toBe(heap.full.metadata.entries);
      // v for every key, one map per key (m), t for the 2 keys written at 300; the 9 TTL'd at 90..170 expired.
      expect(lmdb.full.metadata.entries).toBe(KEYS.length + KEYS.length + 2);
      expect(canonical(lmdb.full.chunks)).toEqual(canonical(heap.full.chunks));
      expect(lmdb.delta.metadata.kind).toBe(heap.delta.metadata.kind);
      // Upserts equal; heap's serialization also removes expired entries for good (a tombstone
      // each in the delta, as it marks them dirty), lmdb's leaves them stored: its tombstones are
      // a subset of the heap's, and restore gives the same visible state.
      const [h, l] = [heap.delta.chunks, lmdb.delta.chunks].map((c) => canonical(c) as Sections);
      for (const [section, { rows, tombstones }] of Object.entries(l)) {
        expect(rows).toEqual(h[section]?.rows ?? []);
        for (const t of tombstones) expect(h[section].tombstones).toContain(t);
      }
      for (const [section, { rows }] of Object.entries(h)) expect(l[section]?.rows ?? []).toEqual(rows);
    });
  }
});
