/**
 * Micro-benchmark (tinybench): what a `Map` lookup on a freshly decoded key string costs against
 * the same lookup on a key V8 has already hashed, and on the map's own stored key object (what a
 * string intern table in the decoder would hand out) — issue 12's question whether the keyed
 * task's `find` is slow because every key arrives as a new string.
 *
 *   node --import tsx bench/state/fresh-keys.ts [--quick] [--keys 10000,1000000] [--rounds N]
 *
 * Every case decodes the same shape-codec batch of the pipeline's records (`{ key: 'k' + (i %
 * keys), value }`, 256 per batch, fresh strings), so "decode only" is the floor of every row; the
 * lookup cases then do the state index's `get` (entry mutated) per record with
 * - the decoded key: V8 computes its hash in the `get`, then compares it by content with the
 *   stored key;
 * - an equal string made before the timed loop, hash already cached: content compare only;
 * - the stored key object itself: hash cached, pointer compare (the best an intern table can do).
 * The "+ sink set" rows add the bench sink's `Map.set(key, sum)` (the keyed task's second map
 * operation on the same key). The row differences split a fresh-key lookup into hashing, comparing
 * and the table walk; an intern table pays its own hashing and probing to turn the first row into
 * the last.
 *
 * Rows of one run compare; absolute figures move with the machine's load.
 */

import { loadavg } from 'node:os';
import { ShapeDecoder } from '../../src/channels/shape-codec.js';
import { formatMachineInfo, machineInfo } from '../harness/machine-info.js';
import { perRecordRounds } from '../harness/per-record-rounds.js';
import { BATCH, type Batches, encodedBatches, type Rec } from '../pipeline/encoded-batches.js';

const quick = process.argv.includes('--quick');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const KEY_COUNTS = (arg('--keys') ?? '10000,1000000').split(',').map(Number);
const ROUNDS = Number(arg('--rounds') ?? (quick ? 3 : 7));
const ITERATIONS = quick ? 300 : 1500;
const WARMUP = 200;

let blackhole = 0;

interface Case {
  name: string;
  run(): void;
}

/**
 * Fills `index` from one decode of every batch (its stored keys are decoded strings, as the task's
 * state is) and returns, per batch, each record's key as `index`'s stored key object and as an
 * equal copy whose hash V8 has cached.
 */
function keyArrays(payloads: Uint8Array[], index: Map<string, { value: number }>) {
  const dec = new ShapeDecoder();
  const storedOf = new Map<string, string>();
  const copyOf = new Map<string, string>();
  const stored: string[][] = [];
  const equal: string[][] = [];
  for (const p of payloads) {
    const recs = dec.decode(p) as Rec[];
    for (const r of recs) {
      if (!index.has(r.key)) {
        index.set(r.key, { value: 0 });
        storedOf.set(r.key, r.key);
        copyOf.set(r.key, Buffer.from(r.key, 'latin1').toString('latin1'));
      }
    }
    stored.push(recs.map((r) => storedOf.get(r.key) as string));
    equal.push(recs.map((r) => copyOf.get(r.key) as string));
  }
  for (const c of copyOf.values()) index.get(c); // computes and caches each copy's hash
  return { stored, equal };
}

/** Each case is its own function literal: cases must not share call-site feedback. */
function cases(data: Batches): Case[] {
  const { payloads } = data;
  const n = payloads.length;
  const list: Case[] = [];
  {
    const dec = new ShapeDecoder();
    let b = 0;
    list.push({
      name: 'decode only',
      run() {
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        blackhole += recs.length;
      },
    });
  }
  {
    const dec = new ShapeDecoder();
    const index = new Map<string, { value: number }>();
    keyArrays(payloads, index);
    let b = 0;
    list.push({
      name: 'get: decoded key (fresh: hash + content compare)',
      run() {
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        let s = 0;
        for (let i = 0; i < recs.length; i++) {
          const e = index.get(recs[i].key) as { value: number };
          s += e.value += recs[i].value;
        }
        blackhole += s;
      },
    });
  }
  {
    const dec = new ShapeDecoder();
    const index = new Map<string, { value: number }>();
    const { equal } = keyArrays(payloads, index);
    let b = 0;
    list.push({
      name: 'get: equal key, hash cached (content compare)',
      run() {
        const keys = equal[b];
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        let s = 0;
        for (let i = 0; i < recs.length; i++) {
          const e = index.get(keys[i]) as { value: number };
          s += e.value += recs[i].value;
        }
        blackhole += s;
      },
    });
  }
  {
    const dec = new ShapeDecoder();
    const index = new Map<string, { value: number }>();
    const { stored } = keyArrays(payloads, index);
    let b = 0;
    list.push({
      name: 'get: the stored key object (interned: pointer compare)',
      run() {
        const keys = stored[b];
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        let s = 0;
        for (let i = 0; i < recs.length; i++) {
          const e = index.get(keys[i]) as { value: number };
          s += e.value += recs[i].value;
        }
        blackhole += s;
      },
    });
  }
  {
    const dec = new ShapeDecoder();
    const index = new Map<string, { value: number }>();
    keyArrays(payloads, index);
    const sink = new Map<string, number>();
    let b = 0;
    list.push({
      name: 'get + sink set: decoded key',
      run() {
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        for (let i = 0; i < recs.length; i++) {
          const key = recs[i].key;
          const e = index.get(key) as { value: number };
          sink.set(key, (e.value += recs[i].value));
        }
        blackhole += sink.size;
      },
    });
  }
  {
    const dec = new ShapeDecoder();
    const index = new Map<string, { value: number }>();
    const { stored } = keyArrays(payloads, index);
    const sink = new Map<string, number>();
    let b = 0;
    list.push({
      name: 'get + sink set: the stored key object',
      run() {
        const keys = stored[b];
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        for (let i = 0; i < recs.length; i++) {
          const key = keys[i];
          const e = index.get(key) as { value: number };
          sink.set(key, (e.value += recs[i].value));
        }
        blackhole += sink.size;
      },
    });
  }
  return list;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

console.log(formatMachineInfo(machineInfo()));
for (const keys of KEY_COUNTS) {
  const load0 = loadavg()[0];
  const started = new Date().toISOString();
  const list = cases(encodedBatches(keys, 2));
  const rows = await perRecordRounds(list, {
    rounds: ROUNDS,
    iterations: ITERATIONS,
    warmup: WARMUP,
    recordsPerBatch: BATCH,
  });
  console.log(
    `\n${keys} keys, ${ROUNDS} rounds, ${started}, load ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)}`,
  );
  console.log('| case | wall p50 ns/record, median (per round) | CPU ns/record, median |');
  console.log('|---|---|---|');
  for (const c of list) {
    const r = rows.get(c.name);
    if (r === undefined) continue;
    console.log(
      `| ${c.name} | ${median(r.p50).toFixed(1)} (${r.p50.map((x) => x.toFixed(1)).join(', ')}) | ${median(r.cpu).toFixed(1)} |`,
    );
  }
}
if (blackhole === 42) console.log('');
