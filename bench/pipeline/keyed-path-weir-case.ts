/**
 * One weir case of keyed-path.ts: decode a batch → `setCurrentKey(key, group)` →
 * `ctx.state.value('sum')` value + update → emit `{ key, sum }` to the sink.
 *
 * A file of its own because keyed-path.ts imports it once per case (`?case=NAME`): every import
 * is a separate module instance, so every case runs its own copy of the loop. Closures made from
 * one function literal share one feedback vector in V8, so a single `weirStateCase` building all
 * four cases made its backend, handle and sink call sites polymorphic (two builds' backends, two
 * sink closures), which a worker's loop never is: measured 1.43–1.54× the plain-Map floor with two
 * cases sharing the literal against 1.34–1.35× with one (bench/README.md, "The state path step by
 * step").
 */

import { ShapeDecoder } from '../../src/channels/shape-codec.js';
import type { HeapKeyedStateBackend } from '../../src/state/heap/heap-keyed-state-backend.js';

interface Rec {
  key: string;
  value: number;
}

export interface WeirCase {
  name: string;
  run(): void;
  /** Records emitted so far (keeps the sink's work observable). */
  emitted(): number;
}

export function weirStateCase(
  name: string,
  sinkSet: boolean,
  Backend: typeof HeapKeyedStateBackend,
  payloads: readonly Uint8Array[],
  groups: readonly Uint16Array[],
): WeirCase {
  const dec = new ShapeDecoder();
  const backend = new Backend({ maxParallelism: 128, keyGroupRange: { start: 0, end: 127 } });
  const state = backend.store;
  const finals = new Map<string, number>();
  let count = 0;
  let b = 0;
  const write = sinkSet
    ? (o: { key: string; sum: number }) => {
        count++;
        finals.set(o.key, o.sum);
      }
    : (_o: { key: string; sum: number }) => {
        count++;
      };
  return {
    name,
    run() {
      const g = groups[b];
      const recs = dec.decode(payloads[b]) as Rec[];
      b = (b + 1) % payloads.length;
      for (let i = 0; i < recs.length; i++) {
        const r = recs[i];
        backend.setCurrentKey(r.key, g[i]);
        const sum = state.value<number>('sum');
        const next = (sum.value() ?? 0) + r.value;
        sum.update(next);
        write({ key: r.key, sum: next });
      }
    },
    emitted: () => count,
  };
}
