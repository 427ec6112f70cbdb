/**
 * Property: a heap state declared `{ type: 'number' }` (number slots, copy-on-write per key
 * group, direct chunk writer) behaves exactly like the same state undeclared (entry objects), for
 * random operation sequences over many keys and every key group: every read agrees, and every
 * snapshot — full and incremental, serialized chunk by chunk with writes between chunks
 * (a releasing encoding, the checkpoint path) — restores to the same state (Object.is on every
 * value, so −0 and NaN count). Incremental chains restore through the other backend (lmdb).
 */

import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { StateOptions } from '../../../src/api/functions.js';
import type { KeyGroupChunk } from '../../../src/state/key-group-chunk.js';
import { canonicalKey } from '../../../src/state/key-groups.js';
import type { KeyedStateBackend, KeyedStateSnapshot } from '../../../src/state/keyed-state-backend.js';
import { closeBackends, syncBackendFactories } from './backend-factories.js';

const MAX_P = 8;
const RANGE = { start: 0, end: MAX_P - 1 };
const TTL = 10;
const add = (a: number, b: number) => a + b;

type Op =
  | { op: 'set' | 'tset' | 'radd'; key: number; v: number }
  | { op: 'clear' | 'tclear' | 'rclear'; key: number }
  | { op: 'tick'; ms: number }
  | { op: 'snapshot' }
  | { op: 'serialize'; pick: number; confirm: boolean; delta: boolean; writesBetween: number }
  | { op: 'release'; pick: number };

const special = fc.constantFrom(
  -0,
  0,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  2 ** 40,
  -(2 ** 33),
  1.5,
  -7,
);
const value = fc.oneof(fc.integer({ min: -300, max: 70_000 }), fc.double({ noNaN: false }), special);
const key = fc.integer({ min: 0, max: 199 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constantFrom('set', 'tset', 'radd'), key, v: value }), weight: 14 },
  { arbitrary: fc.record({ op: fc.constantFrom('clear', 'tclear', 'rclear'), key }), weight: 5 },
  { arbitrary: fc.record({ op: fc.constant('tick'), ms: fc.integer({ min: 0, max: 6 }) }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('snapshot') }), weight: 2 },
  {
    arbitrary: fc.record({
      op: fc.constant('serialize'),
      pick: fc.nat(),
      confirm: fc.boolean(),
      delta: fc.boolean(),
      writesBetween: fc.integer({ min: 0, max: 6 }),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ op: fc.constant('release'), pick: fc.nat() }), weight: 1 },
) as fc.Arbitrary<Op>;

/** Keys: strings for even numbers, numbers for odd ones (both key paths of the writer). */
const userKey = (k: number): unknown => (k % 2 === 0 ? `k${k}` : k);

function show(v: unknown): string {
  return typeof v === 'number' && Object.is(v, -0) ? '-0' : String(v);
}

function applyWrite(b: KeyedStateBackend, typed: boolean, o: Op & { key: number }): number | undefined {
  const options: StateOptions = typed ? { type: 'number' } : {};
  b.setCurrentKey(userKey(o.key));
  const v = b.value<number>('v', options);
  const t = b.value<number>('t', { ttlMs: TTL, ...options });
  const r = b.reducing<number>('r', add, options);
  switch (o.op) {
    case 'set':
      v.update((o as { v: number }).v);
      return v.value();
    case 'tset':
      t.update((o as { v: number }).v);
      return t.value();
    case 'radd':
      r.add((o as { v: number }).v);
      return r.get();
    case 'clear':
      v.clear();
      return v.value();
    case 'tclear':
      t.clear();
      return t.value();
    case 'rclear':
      r.clear();
      return r.get();
  }
  return undefined;
}

/** Restores `chunks` into a fresh (undeclared) backend of kind `into` and dumps it, Object.is-exact. */
async function restoreDump(into: string, chunks: KeyGroupChunk[], at: number): Promise<string[]> {
  const r = syncBackendFactories[into]({ maxParallelism: MAX_P, keyGroupRange: RANGE, clock: () => at });
  try {
    r.restore(chunks);
    const out: string[] = [];
    for (const name of ['v', 't', 'r']) {
      for (const k of r.keys(name)) {
        r.setCurrentKey(k);
        const v =
          name === 'r'
            ? r.reducing<number>('r', add).get()
            : r.value<number>(name, name === 't' ? { ttlMs: TTL } : {}).value();
        out.push(`${name}/${canonicalKey(k)}=${show(v)}`);
      }
    }
    return out.sort();
  } finally {
    await r.close();
  }
}

interface Side {
  b: KeyedStateBackend;
  typed: boolean;
  snaps: Map<number, KeyedStateSnapshot>;
  serialized: Map<number, { kind: string; base: number | undefined; chunks: KeyGroupChunk[] }>;
}

function chainOf(side: Side, id: number): KeyGroupChunk[] {
  const s = side.serialized.get(id)!;
  if (s.kind === 'full') return s.chunks;
  return [...chainOf(side, s.base!), ...s.chunks];
}

/** The heap snapshot's chunk stream (`AbstractKeyedStateSnapshot.chunks`). */
interface Streamed {
  chunks(mode: 'full' | 'delta', options: { release: boolean }): AsyncGenerator<KeyGroupChunk, void>;
}

afterEach(closeBackends);

describe('number slots against entry objects (heap)', () => {
  it('agree on every read and restore every snapshot to the same state', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 300, size: 'max' }), async (ops) => {
        let now = 0;
        const sides: Side[] = [false, true].map((typed) => ({
          b: syncBackendFactories.heap({
            maxParallelism: MAX_P,
            keyGroupRange: RANGE,
            clock: () => now,
            incremental: true,
          }),
          typed,
          snaps: new Map(),
          serialized: new Map(),
        }));
        const live: number[] = [];
        let nextId = 1;
        let writeCursor = 0;
        const writes = ops.filter((o): o is Op & { key: number } => 'key' in o);
        const write = (o: Op & { key: number }) => {
          const [a, b] = sides.map((s) => applyWrite(s.b, s.typed, o));
          expect(show(b)).toBe(show(a));
        };
        for (const o of ops) {
          switch (o.op) {
            case 'tick':
              now += o.ms;
              break;
            case 'snapshot': {
              const id = nextId++;
              for (const s of sides) s.snaps.set(id, s.b.snapshot(id));
              live.push(id);
              break;
            }
            case 'release': {
              if (live.length === 0) break;
              const [id] = live.splice(o.pick % live.length, 1);
              for (const s of sides) s.snaps.get(id)!.release();
              break;
            }
            case 'serialize': {
              if (live.length === 0) break;
              const [id] = live.splice(o.pick % live.length, 1);
              const streams = sides.map((s) =>
                (s.snaps.get(id)! as unknown as Streamed).chunks(o.delta ? 'delta' : 'full', {
                  release: true,
                }),
              );
              const got: KeyGroupChunk[][] = [[], []];
              for (;;) {
                const [x, y] = await Promise.all(streams.map((st) => st.next()));
                if (!x.done) got[0].push(x.value);
                if (!y.done) got[1].push(y.value);
                if (x.done && y.done) break;
                // Writes between chunks: copy-on-write while the releasing encoding runs.
                for (let i = 0; i < o.writesBetween && writes.length > 0; i++)
                  write(writes[writeCursor++ % writes.length]);
              }
              const snap = sides[0].snaps.get(id)!;
              const at = snap.timestamp;
              for (let i = 0; i < 2; i++) {
                const kind = o.delta && snap.baseCheckpointId !== undefined ? 'delta' : 'full';
                sides[i].serialized.set(id, { kind, base: snap.baseCheckpointId, chunks: got[i] });
              }
              const plain = await restoreDump('lmdb', chainOf(sides[0], id), at);
              const typed = await restoreDump('lmdb', chainOf(sides[1], id), at);
              expect(typed).toEqual(plain);
              if (o.confirm) for (const s of sides) s.b.notifyCheckpointComplete(id);
              break;
            }
            default:
              write(o);
          }
        }
        for (const id of live) for (const s of sides) s.snaps.get(id)!.release();
      }),
      { numRuns: 60, seed: 1214 },
    );
  });
});
