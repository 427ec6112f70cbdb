/** Helpers shared by the state tests: reading a whole backend back as plain data. */

import type { KeyGroupChunk } from '../../../src/state/key-group-chunk.js';
import { canonicalKey } from '../../../src/state/key-groups.js';
import type { KeyedStateBackend } from '../../../src/state/keyed-state-backend.js';
import type { StateKind } from '../../../src/state/state-entry.js';

export type Schema = Readonly<Record<string, StateKind>>;

/** Plain dump: state name → canonical key → value (maps as sorted [key, value] arrays). */
export type Dump = Record<string, Record<string, unknown>>;

const sum = (a: { s: number }, b: { s: number }) => {
  a.s += b.s; // mutates the accumulator in place on purpose
  return a;
};
export const reduceSum = sum;

export const countSum = {
  createAccumulator: () => ({ c: 0, s: 0 }),
  add: (v: number, acc: { c: number; s: number }) => {
    acc.c += 1;
    acc.s += v;
    return acc;
  },
  // Returns the accumulator itself: user code that mutates the result mutates state.
  getResult: (acc: { c: number; s: number }) => acc,
};

export function handleOf(backend: KeyedStateBackend, name: string, kind: StateKind) {
  switch (kind) {
    case 'value':
      return backend.value<unknown>(name);
    case 'list':
      return backend.list<unknown>(name);
    case 'map':
      return backend.map<unknown, unknown>(name);
    case 'reducing':
      return backend.reducing<{ s: number }>(name, sum);
    case 'aggregating':
      return backend.aggregating(name, countSum);
  }
}

/** Reads every key of every state in `schema` through the handles; returns structured-cloned data. */
export function dumpBackend(backend: KeyedStateBackend, schema: Schema): Dump {
  const out: Dump = {};
  for (const [name, kind] of Object.entries(schema)) {
    const byKey: Record<string, unknown> = {};
    for (const key of [...backend.keys(name)]) {
      backend.setCurrentKey(key);
      let v: unknown;
      switch (kind) {
        case 'value':
          v = backend.value(name).value();
          break;
        case 'list':
          v = backend.list(name).get();
          break;
        case 'map':
          v = sortEntries([...backend.map(name).entries()]);
          break;
        case 'reducing':
          v = backend.reducing(name, sum).get();
          break;
        case 'aggregating':
          v = backend.aggregating(name, countSum).get();
          break;
      }
      byKey[canonicalKey(key)] = structuredClone(v);
    }
    if (Object.keys(byKey).length > 0) out[name] = byKey;
  }
  return out;
}

export function sortEntries(entries: [unknown, unknown][]): [unknown, unknown][] {
  return entries
    .map(([k, v]) => [k, v] as [unknown, unknown])
    .sort((a, b) => (canonicalKey(a[0]) < canonicalKey(b[0]) ? -1 : 1));
}

/** All chunks of several serializations, in order (for restore). */
export function concatChunks(...parts: { chunks: readonly KeyGroupChunk[] }[]): KeyGroupChunk[] {
  return parts.flatMap((p) => [...p.chunks]);
}
