/**
 * Micro-benchmark (tinybench): the keyed task's inner loop of the pipeline, in one thread —
 * decode a shape-codec batch as it arrives from the ring → `setCurrentKey(key, group)` →
 * `ctx.state.value('sum')` value + update → emit `{ key, sum }` → the bench sink's `Map.set` of
 * the last sum per key — against the same loop over a plain `Map` (the floor). Batches are the
 * pipeline's records after the filter (`{ key: 'k' + (i % 10 000), value: i * 2 }`,
 * `value % 3 !== 0`), 256 per batch, encoded once by the producer's `ShapeEncoder` and decoded
 * on every iteration (fresh key strings, as in the keyed task).
 *
 *   node --import tsx bench/pipeline/keyed-path.ts [--quick] [--keys N] [--base DIR]
 *
 * `--base DIR` adds the weir cases with the heap backend of another checkout's `src/` (e.g. a
 * worktree of the parent commit), loaded into the same process: an interleaved A/B of a state
 * change.
 *
 * Prints per case the thread CPU per record (`process.cpuUsage` around each case's fixed number
 * of batches, which preemption by other processes does not inflate) and tinybench's wall p50 of
 * a batch / 256; cases run interleaved in rotating order, one round after another. Compare a case
 * with the `plain Map` floor, or with its `base:` twin, in the same run: absolute figures move
 * with the machine.
 */

import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { ShapeDecoder } from '../../src/channels/shape-codec.js';
import { HeapKeyedStateBackend } from '../../src/state/heap/heap-keyed-state-backend.js';
import { formatMachineInfo, machineInfo } from '../harness/machine-info.js';
import { perRecordRounds } from '../harness/per-record-rounds.js';
import { BATCH, encodedBatches, type Rec } from './encoded-batches.js';

const quick = process.argv.includes('--quick');
const keysArg = process.argv.indexOf('--keys');
const KEYS = keysArg > 0 ? Number(process.argv[keysArg + 1]) : 10_000;
const ROUNDS = quick ? 3 : 9;
const baseArg = process.argv.indexOf('--base');
type Backend = typeof HeapKeyedStateBackend;
const BaseBackend: Backend | undefined =
  baseArg > 0
    ? ((await import(resolve(process.argv[baseArg + 1], 'src/state/heap/heap-keyed-state-backend.ts')))
        .HeapKeyedStateBackend as Backend)
    : undefined;

const { payloads, groups } = encodedBatches(KEYS, 4);
let blackhole = 0;

interface Case {
  name: string;
  run(): void;
}

function plainMapCase(): Case {
  const dec = new ShapeDecoder();
  const sums = new Map<string, number>();
  const finals = new Map<string, number>();
  let b = 0;
  return {
    name: 'plain Map get+set, sink Map.set (floor)',
    run() {
      const recs = dec.decode(payloads[b]) as Rec[];
      b = (b + 1) % payloads.length;
      for (let i = 0; i < recs.length; i++) {
        const r = recs[i];
        const next = (sums.get(r.key) ?? 0) + r.value;
        sums.set(r.key, next);
        const out = { key: r.key, sum: next };
        finals.set(out.key, out.sum);
      }
      blackhole += finals.size;
    },
  };
}

function decodeOnlyCase(): Case {
  const dec = new ShapeDecoder();
  let b = 0;
  return {
    name: 'decode only',
    run() {
      const recs = dec.decode(payloads[b]) as Rec[];
      b = (b + 1) % payloads.length;
      blackhole += recs.length;
    },
  };
}

/** Each weir case loads its own instance of the loop's module: see keyed-path-weir-case.ts. */
async function weirCase(
  name: string,
  sinkSet: boolean,
  Backend: Backend = HeapKeyedStateBackend,
): Promise<Case> {
  const mod: typeof import('./keyed-path-weir-case.js') = await import(
    `./keyed-path-weir-case.ts?case=${encodeURIComponent(name)}`
  );
  const c = mod.weirStateCase(name, sinkSet, Backend, payloads, groups);
  return {
    name,
    run() {
      c.run();
      blackhole += c.emitted();
    },
  };
}

const cases: Case[] = [
  decodeOnlyCase(),
  plainMapCase(),
  await weirCase('weir state, sink Map.set', true),
  await weirCase('weir state, sink counts', false),
  ...(BaseBackend
    ? [
        await weirCase('base: weir state, sink Map.set', true, BaseBackend),
        await weirCase('base: weir state, sink counts', false, BaseBackend),
      ]
    : []),
];

const ITERATIONS = quick ? 400 : 2000;
const WARMUP = 200;
console.log(formatMachineInfo(machineInfo()));
console.log(
  `keyed path, ${KEYS} keys, ${payloads.length} encoded batches of ${BATCH}, ${ROUNDS} rounds of ` +
    `${ITERATIONS} batches per case (+${WARMUP} warm-up), load average ${loadavg()[0].toFixed(1)}`,
);
const rows = await perRecordRounds(cases, {
  rounds: ROUNDS,
  iterations: ITERATIONS,
  warmup: WARMUP,
  recordsPerBatch: BATCH,
});
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  'case | CPU ns/record, median (min–max) of rounds | wall p50 ns/record | vs base, per-round CPU ratio median',
);
for (const [name, r] of rows) {
  const base = rows.get(`base: ${name}`);
  const ratio = base ? median(r.cpu.map((x, i) => x / base.cpu[i])).toFixed(2) : '';
  console.log(
    `${name} | ${median(r.cpu).toFixed(1)} (${Math.min(...r.cpu).toFixed(1)}–${Math.max(...r.cpu).toFixed(1)}) | ` +
      `${median(r.p50).toFixed(1)} | ${ratio}`,
  );
}
if (blackhole === -1) console.log('');
