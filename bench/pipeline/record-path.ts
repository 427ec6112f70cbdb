/**
 * Micro-benchmark (tinybench): the producer side of a keyBy edge, per record — the hash
 * partitioner's `select` (key selector, key group, consumer index) — against its floor, the key
 * selector and the string hash alone. Records are the pipeline's `{ key: 'k' + (i % 10 000),
 * value }`, built at run time in 256-record batches (every case pays the same to build them:
 * the `batch only` row). The keyed side's state work has its own bench: bench/state/keyed-access.ts.
 *
 *   node --import tsx bench/pipeline/record-path.ts [--quick] [--json PATH]
 *
 * Prints ns per record (tinybench's p50 and min of a 256-record batch, divided by 256) and writes
 * bench/results/record-path.json. Compare cases by the difference to `batch only` in the same run:
 * absolute figures move with the machine's load.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';
import { HashPartitioner } from '../../src/graph/partitioner.js';
import { hashString } from '../../src/state/key-groups.js';
import { formatMachineInfo, machineInfo } from '../harness/machine-info.js';

const quick = process.argv.includes('--quick');
const jsonArg = process.argv.indexOf('--json');
const here = dirname(fileURLToPath(import.meta.url));
const jsonPath =
  jsonArg > 0
    ? resolve(process.argv[jsonArg + 1])
    : join(here, '..', 'results', quick ? 'record-path-quick.json' : 'record-path.json');
const BATCH = 256;
const KEYS = 10_000;

interface Rec {
  key: string;
  value: number;
}

function batches(): () => Rec[] {
  let seq = 0;
  return () => {
    const out = new Array<Rec>(BATCH);
    for (let i = 0; i < BATCH; i++) {
      const n = seq++;
      out[i] = { key: `k${n % KEYS}`, value: n * 2 };
    }
    return out;
  };
}

let sink = 0;
const byKey = (r: Rec) => r.key;
const bench = new Bench({ time: quick ? 300 : 2000, warmupTime: quick ? 100 : 500 });
const nextOnly = batches();
bench.add('batch only', () => {
  const recs = nextOnly();
  sink += recs.length;
});
const nextFloor = batches();
bench.add('key selector + hashString % 128 (floor)', () => {
  const recs = nextFloor();
  for (let i = 0; i < BATCH; i++) sink += hashString(byKey(recs[i])) % 128;
});
for (const consumers of [1, 4]) {
  const partitioner = new HashPartitioner(byKey, consumers, 128, '"running sum"');
  const next = batches();
  bench.add(`HashPartitioner.select, ${consumers} consumer(s)`, () => {
    const recs = next();
    for (let i = 0; i < BATCH; i++) sink += partitioner.select(recs[i]) + partitioner.lastKeyGroup;
  });
}
await bench.run();

interface Row {
  case: string;
  p50NsPerRecord: number;
  minNsPerRecord: number;
}
const rows: Row[] = bench.tasks.map((task) => {
  const result = task.result;
  if (result.state !== 'completed') throw new Error(`${task.name}: ${String(result.state)}`);
  return {
    case: task.name,
    p50NsPerRecord: (result.latency.p50 * 1e6) / BATCH,
    minNsPerRecord: (result.latency.min * 1e6) / BATCH,
  };
});
const machine = machineInfo();
console.log(formatMachineInfo(machine));
const base = rows[0];
console.log(
  `${'case'.padEnd(42)} ${'p50 ns'.padStart(8)} ${'min ns'.padStart(8)} ${'p50 − batch'.padStart(12)}`,
);
for (const r of rows) {
  console.log(
    `${r.case.padEnd(42)} ${r.p50NsPerRecord.toFixed(1).padStart(8)} ${r.minNsPerRecord.toFixed(1).padStart(8)} ${(r.p50NsPerRecord - base.p50NsPerRecord).toFixed(1).padStart(12)}`,
  );
}
mkdirSync(dirname(jsonPath), { recursive: true });
writeFileSync(jsonPath, `${JSON.stringify({ machine, batch: BATCH, rows, checksum: sink > 0 }, null, 2)}\n`);
console.log(`wrote ${jsonPath}`);
