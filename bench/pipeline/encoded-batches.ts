/**
 * The keyed task's input as the micro-benchmarks of the keyed path feed it (keyed-path.ts,
 * bench/state/keyed-steps.ts): shape-encoded batches of `{ key, value }` records — the pipeline's
 * map and filter already applied (a third of the values dropped) — with each record's key group
 * as the producer's partitioner carries it. Decoding a batch gives fresh key strings, as a ring
 * read does in the task.
 */
import { ShapeEncoder } from '../../src/channels/shape-codec.js';
import { assignToKeyGroup } from '../../src/state/key-groups.js';

export const BATCH = 256;

export interface Rec {
  key: string;
  value: number;
}

export interface Batches {
  payloads: Uint8Array[];
  groups: Uint16Array[];
}

/** Encoded batches covering each of `keys` keys about `cover` times, with each record's key group. */
export function encodedBatches(keys: number, cover: number): Batches {
  const enc = new ShapeEncoder();
  const payloads: Uint8Array[] = [];
  const groups: Uint16Array[] = [];
  let i = 0;
  const total = Math.max(keys * cover, BATCH * 64);
  while (payloads.length * BATCH < total) {
    const recs: Rec[] = [];
    while (recs.length < BATCH) {
      const r = { key: `k${i % keys}`, value: i * 2 };
      i++;
      if (r.value % 3 !== 0) recs.push(r);
    }
    const bytes = enc.encode(recs);
    if (bytes === null) throw new Error('batch did not take the shape path');
    payloads.push(bytes.slice());
    groups.push(Uint16Array.from(recs, (r) => assignToKeyGroup(r.key, 128)));
  }
  return { payloads, groups };
}
