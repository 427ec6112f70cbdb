/**
 * Property: random operation sequences (including in-place mutation of objects read from state,
 * TTL expiry, and serialization interleaved with later writes) against a reference model. Every
 * snapshot, restored from its full serialization AND from its incremental chain (full base +
 * deltas), equals the model's state at its barrier.
 *
 * Declared-number state (`nv`: value, `nr`: reducing sum, both `{ type: 'number' }`) holds any
 * number (-0, NaN, ±Infinity, fractions) on keys spread over every key group, written and cleared
 * in runs of keys, so that copy-on-write per key group, removals and re-insertions happen while
 * snapshots are live and between the chunks of releasing serializations (`begin`/`step`). The
 * dumps are compared with `toEqual`, which compares numbers with `Object.is` (-0 ≠ 0, NaN = NaN).
 * Restores alternate between declaring the number states and not (the chunk format is shared).
 */

import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { StateOptions } from '../../../src/api/functions.js';
import { StateAccessError } from '../../../src/errors.js';
import type { AbstractKeyedStateSnapshot } from '../../../src/state/abstract-keyed-state-snapshot.js';
import type { KeyGroupChunk } from '../../../src/state/key-group-chunk.js';
import { canonicalKey } from '../../../src/state/key-groups.js';
import type {
  KeyedStateBackend,
  KeyedStateSnapshot,
  SerializedKeyedState,
} from '../../../src/state/keyed-state-backend.js';
import { closeBackends, syncBackendFactories } from './backend-factories.js';
import {
  countSum,
  type Dump,
  dumpBackend,
  reduceSum,
  type Schema,
  sortEntries,
} from './state-test-helpers.js';

const MAX_P = 16;
const RANGE = { start: 0, end: MAX_P - 1 };
const TTL = 10;
const SCHEMA: Schema = {
  v: 'value',
  t: 'value',
  l: 'list',
  m: 'map',
  r: 'reducing',
  a: 'aggregating',
  nv: 'value',
  nr: 'reducing',
};
// Until `type` is part of StateOptions this line is a type error.
const NUM: StateOptions = { type: 'number' };
const addNumbers = (x: number, y: number) => x + y;

/** Registers the declared-number states (before any undeclared lookup of them). */
function declareNumbers(b: KeyedStateBackend) {
  return { nv: b.value<number>('nv', NUM), nr: b.reducing<number>('nr', addNumbers, NUM) };
}

type Op =
  | {
      op: 'vset' | 'vmut' | 'vmutUpdate' | 'tset' | 'ladd' | 'radd' | 'aadd' | 'amut';
      key: unknown;
      n: number;
    }
  | { op: 'vclear' | 'lclear' | 'lmut' | 'mclear' | 'rclear' | 'aclear' | 'tread'; key: unknown }
  | { op: 'lupdate'; key: unknown; ns: number[] }
  | { op: 'mput' | 'mmut'; key: unknown; mk: string; n: number }
  | { op: 'mremove'; key: unknown; mk: string }
  | { op: 'nset' | 'nradd'; key: unknown; x: number }
  | { op: 'nclear' | 'nundefined' | 'nread' | 'nrclear' | 'nrread'; key: unknown }
  | { op: 'nfill'; from: number; count: number; x: number; clear: boolean }
  | { op: 'tick'; ms: number }
  | { op: 'snapshot' }
  | { op: 'serialize'; pick: number; confirm: boolean }
  | { op: 'begin'; pick: number; confirm: boolean }
  | { op: 'step'; pick: number; count: number }
  | { op: 'release'; pick: number };

const keyArb = fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constantFrom('x', 'y', ['c', 1], { z: true }));
const n = fc.integer({ min: -5, max: 5 });
const mk = fc.constantFrom('p', 'q', 'r');
/** Keys of the number states: 48 integers (3 per key group on average) and a few others. */
const N_KEYS = 48;
const nKeyArb = fc.oneof(fc.integer({ min: 0, max: N_KEYS - 1 }), fc.constantFrom('x', ['c', 1]));
const numArb = fc.oneof(
  fc.constantFrom(-0, 0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.5, -0.25, 1 / 3),
  fc.double(),
  fc.integer({ min: -5, max: 5 }),
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constantFrom('vset', 'vmut', 'vmutUpdate', 'tset', 'ladd', 'radd', 'aadd', 'amut'),
      key: keyArb,
      n,
    }),
    weight: 8,
  },
  {
    arbitrary: fc.record({
      op: fc.constantFrom('vclear', 'lclear', 'lmut', 'mclear', 'rclear', 'aclear', 'tread'),
      key: keyArb,
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({ op: fc.constant('lupdate'), key: keyArb, ns: fc.array(n, { maxLength: 3 }) }),
    weight: 1,
  },
  { arbitrary: fc.record({ op: fc.constantFrom('mput', 'mmut'), key: keyArb, mk, n }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('mremove'), key: keyArb, mk }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('tick'), ms: fc.integer({ min: 0, max: 6 }) }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('snapshot') }), weight: 3 },
  {
    arbitrary: fc.record({ op: fc.constant('serialize'), pick: fc.nat(), confirm: fc.boolean() }),
    weight: 3,
  },
  { arbitrary: fc.record({ op: fc.constant('release'), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constantFrom('nset', 'nradd'), key: nKeyArb, x: numArb }), weight: 5 },
  {
    arbitrary: fc.record({
      op: fc.constantFrom('nclear', 'nundefined', 'nread', 'nrclear', 'nrread'),
      key: nKeyArb,
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('nfill'),
      from: fc.nat({ max: N_KEYS - 1 }),
      count: fc.integer({ min: 1, max: 16 }),
      x: numArb,
      clear: fc.boolean(),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({ op: fc.constant('begin'), pick: fc.nat(), confirm: fc.boolean() }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ op: fc.constant('step'), pick: fc.nat(), count: fc.integer({ min: 1, max: 4 }) }),
    weight: 3,
  },
) as fc.Arbitrary<Op>;

/** The reference model: name → canonical key → value (TTL state keeps { value, expiresAt }). */
class Model {
  readonly states: Record<string, Map<string, unknown>> = {};
  now = 0;
  get(name: string): Map<string, unknown> {
    this.states[name] ??= new Map();
    return this.states[name];
  }
  /** The model as a Dump at time `at` (TTL entries expired at `at` are gone). */
  dump(at: number): Dump {
    const out: Dump = {};
    for (const [name, m] of Object.entries(this.states)) {
      const byKey: Record<string, unknown> = {};
      for (const [k, v] of m) {
        if (name === 't') {
          const tv = v as { value: unknown; expiresAt: number };
          if (tv.expiresAt > at) byKey[k] = structuredClone(tv.value);
        } else if (name === 'm') {
          byKey[k] = structuredClone(sortEntries([...(v as Map<string, unknown>)]));
        } else {
          byKey[k] = structuredClone(v);
        }
      }
      if (Object.keys(byKey).length > 0) out[name] = byKey;
    }
    return out;
  }
}

interface Taken {
  snap: KeyedStateSnapshot;
  expected: Dump;
  full?: readonly KeyGroupChunk[];
  delta?: SerializedKeyedState;
}

/** A releasing full encoding in progress: the ops between its chunks are later writes. */
interface InFlight {
  taken: Taken;
  stream: AsyncGenerator<KeyGroupChunk, void, undefined>;
  chunks: KeyGroupChunk[];
  confirm: boolean;
}

/** The model's number states: `nv` set/cleared, `nr` folded with + (the first add stores its argument). */
function applyNumbers(b: KeyedStateBackend, model: Model, o: Op): boolean {
  const { nv, nr } = declareNumbers(b);
  const setKey = (key: unknown) => {
    b.setCurrentKey(key);
    return canonicalKey(key);
  };
  const radd = (ck: string, x: number) => {
    nr.add(x);
    const mr = model.get('nr');
    mr.set(ck, mr.has(ck) ? (mr.get(ck) as number) + x : x);
  };
  switch (o.op) {
    case 'nset': {
      const ck = setKey(o.key);
      nv.update(o.x);
      model.get('nv').set(ck, o.x);
      return true;
    }
    case 'nradd':
      radd(setKey(o.key), o.x);
      return true;
    case 'nclear':
    case 'nundefined': {
      const ck = setKey(o.key);
      if (o.op === 'nclear') nv.clear();
      else nv.update(undefined as unknown as number);
      model.get('nv').delete(ck);
      return true;
    }
    case 'nread': {
      const ck = setKey(o.key);
      expect(nv.value()).toBe(model.get('nv').get(ck));
      return true;
    }
    case 'nrclear': {
      const ck = setKey(o.key);
      nr.clear();
      model.get('nr').delete(ck);
      return true;
    }
    case 'nrread': {
      const ck = setKey(o.key);
      expect(nr.get()).toBe(model.get('nr').get(ck));
      return true;
    }
    case 'nfill':
      for (let i = o.from; i < o.from + o.count; i++) {
        const ck = setKey(i % N_KEYS);
        if (o.clear) {
          nv.clear();
          nr.clear();
          model.get('nv').delete(ck);
          model.get('nr').delete(ck);
        } else {
          const x = o.x / (i + 1);
          nv.update(x);
          model.get('nv').set(ck, x);
          radd(ck, x);
        }
      }
      return true;
    default:
      return false;
  }
}

function apply(b: KeyedStateBackend, model: Model, o: Op & { key: unknown }): void {
  b.setCurrentKey(o.key);
  const ck = canonicalKey(o.key);
  const v = b.value<{ n: number }>('v');
  const t = b.value<number>('t', { ttlMs: TTL });
  const l = b.list<{ n: number }>('l');
  const m = b.map<string, { n: number }>('m');
  const r = b.reducing('r', reduceSum);
  const a = b.aggregating('a', countSum);
  switch (o.op) {
    case 'vset':
      v.update({ n: o.n });
      model.get('v').set(ck, { n: o.n });
      return;
    case 'vmut':
    case 'vmutUpdate': {
      const cur = v.value();
      const mv = model.get('v').get(ck) as { n: number } | undefined;
      expect(cur).toEqual(mv);
      if (cur && mv) {
        cur.n += o.n;
        mv.n += o.n;
        if (o.op === 'vmutUpdate') v.update(cur);
      }
      return;
    }
    case 'vclear':
      v.clear();
      model.get('v').delete(ck);
      return;
    case 'tset':
      t.update(o.n);
      model.get('t').set(ck, { value: o.n, expiresAt: model.now + TTL });
      return;
    case 'tread': {
      const mt = model.get('t').get(ck) as { value: number; expiresAt: number } | undefined;
      expect(t.value()).toBe(mt && mt.expiresAt > model.now ? mt.value : undefined);
      return;
    }
    case 'ladd': {
      l.add({ n: o.n });
      const ml = model.get('l');
      ml.set(ck, [...((ml.get(ck) as unknown[]) ?? []), { n: o.n }]);
      return;
    }
    case 'lupdate':
      l.update(o.ns.map((x) => ({ n: x })));
      if (o.ns.length === 0) model.get('l').delete(ck);
      else
        model.get('l').set(
          ck,
          o.ns.map((x) => ({ n: x })),
        );
      return;
    case 'lmut': {
      const got = l.get();
      const ml = model.get('l').get(ck) as { n: number }[] | undefined;
      expect(got).toEqual(ml ?? []);
      if (got.length > 0 && ml) {
        got[0].n += 100;
        ml[0].n += 100;
      }
      return;
    }
    case 'lclear':
      l.clear();
      model.get('l').delete(ck);
      return;
    case 'mput': {
      m.put(o.mk, { n: o.n });
      const mm = model.get('m');
      let inner = mm.get(ck) as Map<string, unknown> | undefined;
      if (!inner) mm.set(ck, (inner = new Map()));
      inner.set(o.mk, { n: o.n });
      return;
    }
    case 'mmut': {
      const got = m.get(o.mk);
      const inner = model.get('m').get(ck) as Map<string, { n: number }> | undefined;
      expect(got).toEqual(inner?.get(o.mk));
      if (got) {
        got.n += o.n;
        inner!.get(o.mk)!.n += o.n;
      }
      return;
    }
    case 'mremove': {
      m.remove(o.mk);
      const inner = model.get('m').get(ck) as Map<string, unknown> | undefined;
      inner?.delete(o.mk);
      if (inner?.size === 0) model.get('m').delete(ck);
      return;
    }
    case 'mclear':
      m.clear();
      model.get('m').delete(ck);
      return;
    case 'radd': {
      r.add({ s: o.n });
      const mr = model.get('r');
      const cur = mr.get(ck) as { s: number } | undefined;
      mr.set(ck, { s: (cur?.s ?? 0) + o.n });
      return;
    }
    case 'rclear':
      r.clear();
      model.get('r').delete(ck);
      return;
    case 'aadd': {
      a.add(o.n);
      const ma = model.get('a');
      const cur = (ma.get(ck) as { c: number; s: number } | undefined) ?? { c: 0, s: 0 };
      ma.set(ck, { c: cur.c + 1, s: cur.s + o.n });
      return;
    }
    case 'amut': {
      const got = a.get();
      const ma = model.get('a').get(ck) as { c: number; s: number } | undefined;
      expect(got).toEqual(ma);
      if (got && ma) {
        got.s += o.n; // getResult returned the accumulator: this mutates state
        ma.s += o.n;
      }
      return;
    }
    case 'aclear':
      a.clear();
      model.get('a').delete(ck);
      return;
  }
}

/** Restores into a fresh backend of kind `into` and dumps it (checkpoints restore across backends). */
async function restoreDump(
  into: string,
  chunks: KeyGroupChunk[],
  at: number,
  declared: boolean,
): Promise<Dump> {
  const r = syncBackendFactories[into]({ maxParallelism: MAX_P, keyGroupRange: RANGE, clock: () => at });
  try {
    r.restore(chunks);
    if (declared) declareNumbers(r);
    return dumpBackend(r, SCHEMA);
  } finally {
    await r.close();
  }
}

afterEach(closeBackends);

/** The incremental chain of a serialized snapshot: its delta preceded by its base's chain. */
function chainOf(taken: Taken, byId: Map<number, Taken>): KeyGroupChunk[] {
  const d = taken.delta!;
  if (d.metadata.kind === 'full') return [...d.chunks];
  const base = byId.get(d.metadata.baseCheckpointId!)!;
  return [...chainOf(base, byId), ...d.chunks];
}

// Full snapshots restore into the same backend, incremental chains into the other one.
describe.each([
  { backend: 'heap', other: 'lmdb', numRuns: 200 },
  { backend: 'lmdb', other: 'heap', numRuns: 100 },
])('$backend snapshots equal a reference model at their barrier', ({ backend, other, numRuns }) => {
  it('for random operation sequences with interleaved snapshots, serialization and mutation', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 120, size: 'max' }), async (ops) => {
        const model = new Model();
        const b = syncBackendFactories[backend]({
          maxParallelism: MAX_P,
          keyGroupRange: RANGE,
          clock: () => model.now,
          incremental: true,
        });
        declareNumbers(b);
        const taken: Taken[] = [];
        const byId = new Map<number, Taken>();
        const live: Taken[] = [];
        const inFlight: InFlight[] = [];
        let nextId = 1;
        /** Pulls up to `count` chunks of `f`; when its stream ends, it is done (and maybe confirmed). */
        const step = async (f: InFlight, count: number) => {
          for (let i = 0; i < count; i++) {
            const r = await f.stream.next();
            if (r.done) {
              expect(b.liveSnapshots).toBe(live.length + inFlight.length - 1);
              inFlight.splice(inFlight.indexOf(f), 1);
              f.taken.full = f.chunks;
              if (f.confirm) b.notifyCheckpointComplete(f.taken.snap.checkpointId);
              return;
            }
            f.chunks.push(r.value);
          }
        };
        const serialize = async (t: Taken) => {
          t.full = (await t.snap.encode('full')).chunks;
          // Every other snapshot's last serialization releases it (the checkpoint path).
          const last = t.snap.checkpointId % 2 === 0;
          t.delta = await t.snap.encode('delta', { release: last });
          if (last) await expect(t.snap.encode('full')).rejects.toThrow(StateAccessError);
          t.snap.release();
        };
        for (const o of ops) {
          switch (o.op) {
            case 'tick':
              model.now += o.ms;
              break;
            case 'snapshot': {
              const id = nextId++;
              const t: Taken = { snap: b.snapshot(id), expected: model.dump(model.now) };
              taken.push(t);
              byId.set(id, t);
              live.push(t);
              break;
            }
            case 'serialize': {
              if (live.length === 0) break;
              const [t] = live.splice(o.pick % live.length, 1);
              await serialize(t);
              if (o.confirm) b.notifyCheckpointComplete(t.snap.checkpointId);
              break;
            }
            case 'begin': {
              // The delta first (not releasing), then the full encoding releasing as it goes.
              if (live.length === 0) break;
              const [t] = live.splice(o.pick % live.length, 1);
              t.delta = await t.snap.encode('delta');
              const stream = (t.snap as unknown as AbstractKeyedStateSnapshot).chunks('full', {
                release: true,
              });
              inFlight.push({ taken: t, stream, chunks: [], confirm: o.confirm });
              break;
            }
            case 'step':
              if (inFlight.length > 0) await step(inFlight[o.pick % inFlight.length], o.count);
              break;
            case 'release': {
              // A snapshot dropped without serialization (aborted checkpoint).
              if (live.length === 0) break;
              const [t] = live.splice(o.pick % live.length, 1);
              t.snap.release();
              taken.splice(taken.indexOf(t), 1);
              break;
            }
            default:
              if (!applyNumbers(b, model, o)) apply(b, model, o as Op & { key: unknown });
          }
        }
        while (inFlight.length > 0) await step(inFlight[0], Number.POSITIVE_INFINITY);
        for (const t of live) await serialize(t);
        expect(b.liveSnapshots).toBe(0);
        for (const t of taken) {
          // Declared number states in one of the two restores, alternating.
          const odd = t.snap.checkpointId % 2 === 1;
          expect(await restoreDump(backend, [...t.full!], t.snap.timestamp, odd)).toEqual(t.expected);
          expect(await restoreDump(other, chainOf(t, byId), t.snap.timestamp, !odd)).toEqual(t.expected);
        }
        // And the live state equals the model now.
        expect(dumpBackend(b, SCHEMA)).toEqual(model.dump(model.now));
        await b.close();
      }),
      { numRuns, seed: 20240601 },
    );
  });
});
