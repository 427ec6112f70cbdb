/**
 * The heap backend's change tracking for incremental snapshots (per-group lists of changed
 * entries, removed entries as their own tombstones, one write per entry across pending epochs):
 * seeded random puts, in-place mutations, removes and re-inserts of a few keys, across several
 * overlapping snapshots that are serialized late (after later writes), confirmed or abandoned.
 * Every snapshot's delta chain, restored into a heap and an lmdb backend, equals the state at
 * its barrier. And the strategy writes a full snapshot when most live entries changed.
 */

import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-state-backend.js';
import { IncrementalChain } from '../../../src/state/incremental-chain.js';
import type { KeyGroupChunk } from '../../../src/state/key-group-chunk.js';
import type { KeyedStateSnapshot, SerializedKeyedState } from '../../../src/state/keyed-state-backend.js';
import { closeBackends, syncBackendFactories } from './backend-factories.js';
import { dumpBackend, type Schema } from './state-test-helpers.js';

const MAX_P = 8;
const RANGE = { start: 0, end: MAX_P - 1 };
const SCHEMA: Schema = { o: 'value', n: 'value' };
const KEYS = 10;

type Op =
  | { op: 'put' | 'mut' | 'remove' | 'nput' | 'nremove'; key: number; n: number }
  | { op: 'snap' | 'encode' | 'confirm' | 'abandon'; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      op: fc.constantFrom('put', 'mut', 'remove', 'nput', 'nremove') as fc.Arbitrary<
        'put' | 'mut' | 'remove' | 'nput' | 'nremove'
      >,
      key: fc.integer({ min: 0, max: KEYS - 1 }),
      n: fc.integer({ min: -5, max: 5 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constantFrom('snap', 'encode', 'confirm', 'abandon') as fc.Arbitrary<
        'snap' | 'encode' | 'confirm' | 'abandon'
      >,
      pick: fc.nat(),
    }),
  },
);

interface Taken {
  readonly snap: KeyedStateSnapshot;
  /** The state at the barrier, as `dumpBackend` shows it. */
  readonly expected: Record<string, Record<string, unknown>>;
  encoded?: SerializedKeyedState;
}

function chainOf(t: Taken, byId: Map<number, Taken>): KeyGroupChunk[] {
  const e = t.encoded!;
  if (e.metadata.kind === 'full') return [...e.chunks];
  return [...chainOf(byId.get(e.metadata.baseCheckpointId!)!, byId), ...e.chunks];
}

afterEach(closeBackends);

describe('heap change tracking for incremental snapshots', () => {
  it('delta chains restore to the state at each barrier (seeded random puts, removes, re-inserts)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 150, size: 'max' }), async (ops) => {
        const b = new HeapKeyedStateBackend({
          maxParallelism: MAX_P,
          keyGroupRange: RANGE,
          incremental: true,
        });
        const o = b.value<{ n: number }>('o');
        const n = b.value<number>('n');
        const byId = new Map<number, Taken>();
        const unencoded: Taken[] = [];
        const encoded: Taken[] = [];
        let nextId = 1;
        const encodeOne = async (t: Taken) => {
          t.encoded = await t.snap.encode('delta', { release: true });
        };
        for (const op of ops) {
          switch (op.op) {
            case 'put':
              b.setCurrentKey(op.key);
              o.update({ n: op.n });
              break;
            case 'mut': {
              b.setCurrentKey(op.key);
              const v = o.value();
              if (v !== undefined) v.n += op.n; // in place, no update(): a touch by the read
              break;
            }
            case 'remove':
              b.setCurrentKey(op.key);
              o.clear();
              break;
            case 'nput':
              b.setCurrentKey(op.key);
              n.update(op.n);
              break;
            case 'nremove':
              b.setCurrentKey(op.key);
              n.clear();
              break;
            case 'snap': {
              const id = nextId++;
              const t: Taken = { snap: b.snapshot(id), expected: dumpBackend(b, SCHEMA) };
              byId.set(id, t);
              unencoded.push(t);
              break;
            }
            case 'encode':
              if (unencoded.length > 0) {
                const [t] = unencoded.splice(op.pick % unencoded.length, 1);
                await encodeOne(t);
                encoded.push(t);
              }
              break;
            case 'confirm':
              if (encoded.length > 0)
                b.notifyCheckpointComplete(encoded[op.pick % encoded.length].snap.checkpointId);
              break;
            case 'abandon':
              if (unencoded.length > 0) {
                // Aborted before serialization: released, never confirmed, never restored.
                const [t] = unencoded.splice(op.pick % unencoded.length, 1);
                t.snap.release();
                byId.delete(t.snap.checkpointId);
              }
              break;
          }
        }
        for (const t of unencoded) {
          await encodeOne(t);
          encoded.push(t);
        }
        for (const t of encoded) {
          const chain = chainOf(t, byId);
          for (const kind of ['heap', 'lmdb']) {
            const r = syncBackendFactories[kind]({ maxParallelism: MAX_P, keyGroupRange: RANGE });
            r.restore(chain);
            expect(dumpBackend(r, SCHEMA), `${kind} restore of checkpoint ${t.snap.checkpointId}`).toEqual(
              t.expected,
            );
          }
        }
        await b.close();
      }),
      { seed: 1403, numRuns: 150 },
    );
  });

  it('writes a full snapshot instead of a delta when more than 3/4 of the live entries changed', async () => {
    const b = new HeapKeyedStateBackend({ maxParallelism: MAX_P, keyGroupRange: RANGE, incremental: true });
    const n = b.value<number>('n');
    const touch = (from: number, to: number, v: number) => {
      for (let k = from; k < to; k++) {
        b.setCurrentKey(k);
        n.update(v);
      }
    };
    const checkpoint = async (id: number) => {
      const s = b.snapshot(id);
      const mode = s.mode;
      const chunks = await s.serialize();
      s.persisted(
        chunks.map((c) => ({
          chunkId: `${id}-${c.name}`,
          checkpointId: id,
          name: c.name,
          size: c.bytes.length,
          checksum: '',
          keyGroup: c.keyGroup,
        })),
      );
      b.notifyCheckpointComplete(id);
      return mode;
    };
    touch(0, 10_000, 1);
    expect(await checkpoint(1)).toBe('full'); // no base yet
    touch(0, 4_000, 2); // 40 % of the live entries changed
    expect(await checkpoint(2)).toBe('delta');
    touch(0, 6_000, 3); // 60 %
    expect(await checkpoint(3)).toBe('delta');
    touch(0, 8_000, 3); // 80 %
    expect(await checkpoint(4)).toBe('full');
    touch(9_000, 10_000, 4); // 10 %, over the new full base
    expect(await checkpoint(5)).toBe('delta');
    await b.close();
  });

  it('IncrementalChain.decide: full above maxDeltaFraction of the live entries, from 4096 live entries', () => {
    const c = new IncrementalChain(10, 0.5);
    c.persisted(1, c.decide(undefined), []);
    c.confirm(1);
    expect(c.decide(1, { dirty: 5000, live: 10_000 }).mode).toBe('delta');
    expect(c.decide(1, { dirty: 5001, live: 10_000 }).mode).toBe('full');
    expect(c.decide(1, { dirty: 4000, live: 4000 }).mode).toBe('delta'); // small state: always a delta
    expect(c.decide(1).mode).toBe('delta'); // the backend does not say (lmdb)
    expect(() => new IncrementalChain(10, Number.NaN)).toThrow(RangeError);
  });
});
