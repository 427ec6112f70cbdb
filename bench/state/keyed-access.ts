/**
 * Micro-benchmark (tinybench): the keyed task's per-record state work — `setCurrentKey(key)`,
 * then `value('sum')`, `value()`, `update()` — on the heap backend, against a plain `Map`
 * get + set doing the same running sum (the floor), and the same state work given the record's
 * key group as the producer's partitioner computed it (`setCurrentKey(key, group)`, what a keyed
 * task does with a channel's `key-groups` frame: no second hash). Records come in batches of 256 with key
 * strings built at run time (as a decoder makes them: not the interned literals a `Map` would
 * compare by pointer), over 10 k and 100 k distinct keys.
 *
 *   node --import tsx bench/state/keyed-access.ts [--quick] [--json PATH]
 *
 * Prints ns per record (tinybench's p50 and min of a 256-record batch, divided by 256) and
 * writes bench/results/keyed-access.json. Compare runs by the ratio to the plain Map in the
 * same run: absolute figures move with the machine's load.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';
import { HeapKeyedStateBackend } from '../../src/state/heap/heap-keyed-state-backend.js';
import { assignToKeyGroup } from '../../src/state/key-groups.js';
import { formatMachineInfo, machineInfo } from '../harness/machine-info.js';

const quick = process.argv.includes('--quick');
const jsonArg = process.argv.indexOf('--json');
const here = dirname(fileURLToPath(import.meta.url));
const jsonPath =
  jsonArg > 0
    ? resolve(process.argv[jsonArg + 1])
    : join(here, '..', 'results', quick ? 'keyed-access-quick.json' : 'keyed-access.json');
const BATCH = 256;

interface Rec {
  key: string;
  value: number;
  /** The key's group (from a table built once: every case pays the same to build a batch). */
  group: number;
}

function batches(keys: number): () => Rec[] {
  let seq = 0;
  const groups = Array.from({ length: keys }, (_, i) => assignToKeyGroup(`k${i}`, 128));
  return () => {
    const out = new Array<Rec>(BATCH);
    for (let i = 0; i < BATCH; i++) {
      const n = seq++;
      out[i] = { key: `k${String(n % keys)}`, value: n * 2, group: groups[n % keys] };
    }
    return out;
  };
}

interface Row {
  case: string;
  keys: number;
  p50NsPerRecord: number;
  minNsPerRecord: number;
}

const rows: Row[] = [];
let sink = 0;
for (const keys of [10_000, 100_000]) {
  const bench = new Bench({ time: quick ? 300 : 2000, warmupTime: quick ? 100 : 500 });
  const plain = new Map<string, number>();
  const nextPlain = batches(keys);
  bench.add('plain Map get + set', () => {
    const recs = nextPlain();
    for (let i = 0; i < BATCH; i++) {
      const r = recs[i];
      const next = (plain.get(r.key) ?? 0) + r.value;
      plain.set(r.key, next);
      sink += next;
    }
  });
  const heap = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: { start: 0, end: 127 } });
  const nextHeap = batches(keys);
  bench.add('heap: setCurrentKey + value + update', () => {
    const recs = nextHeap();
    for (let i = 0; i < BATCH; i++) {
      const r = recs[i];
      heap.setCurrentKey(r.key);
      const sum = heap.value<number>('sum');
      const next = (sum.value() ?? 0) + r.value;
      sum.update(next);
      sink += next;
    }
  });
  const known = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: { start: 0, end: 127 } });
  const nextKnown = batches(keys);
  bench.add('heap: setCurrentKey(key, group) + value + update', () => {
    const recs = nextKnown();
    for (let i = 0; i < BATCH; i++) {
      const r = recs[i];
      known.setCurrentKey(r.key, r.group);
      const sum = known.value<number>('sum');
      const next = (sum.value() ?? 0) + r.value;
      sum.update(next);
      sink += next;
    }
  });
  await bench.run();
  for (const task of bench.tasks) {
    const result = task.result;
    if (result.state !== 'completed') throw new Error(`${task.name}: ${String(result.state)}`);
    rows.push({
      case: task.name,
      keys,
      p50NsPerRecord: (result.latency.p50 * 1e6) / BATCH,
      minNsPerRecord: (result.latency.min * 1e6) / BATCH,
    });
  }
}

const machine = machineInfo();
console.log(formatMachineInfo(machine));
console.log(
  `${'case'.padEnd(50)} ${'keys'.padStart(8)} ${'p50 ns'.padStart(8)} ${'min ns'.padStart(8)} vs Map p50`,
);
for (const r of rows) {
  const floor = rows.find((x) => x.keys === r.keys && x.case === 'plain Map get + set')!;
  console.log(
    `${r.case.padEnd(50)} ${String(r.keys).padStart(8)} ${r.p50NsPerRecord.toFixed(1).padStart(8)} ${r.minNsPerRecord.toFixed(1).padStart(8)} ${(r.p50NsPerRecord / floor.p50NsPerRecord).toFixed(2)}×`,
  );
}
mkdirSync(dirname(jsonPath), { recursive: true });
writeFileSync(jsonPath, `${JSON.stringify({ machine, batch: BATCH, rows, checksum: sink > 0 }, null, 2)}\n`);
console.log(`wrote ${jsonPath}`);
