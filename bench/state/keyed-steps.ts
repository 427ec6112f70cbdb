/**
 * Micro-benchmark (tinybench): the keyed task's per-record state path split into its steps, each
 * case adding one step to the one before, next to the plain-`Map` code doing the same work — so
 * the difference between two consecutive rows is what that step costs (issue 12: where weir's
 * ~60 ns gap to a plain `Map` goes).
 *
 *   node --import tsx bench/state/keyed-steps.ts [--quick] [--keys 10000,100000] [--rounds N]
 *
 * Every case decodes a shape-codec batch first (fresh key strings, as in the keyed task: a `Map`
 * compares them by content, not by pointer), so "decode only" is the floor of every row. The
 * records are the pipeline's after its filter (`{ key: 'k' + (i % keys), value: i * 2 }`), 256
 * per batch, with each record's key group as the producer's partitioner computes it (the
 * channel's `key-groups` frame). Steps, weir side:
 *
 *   setCurrentKey(key, group) → + `ctx.state.value('sum')` + `value()` → + `update()` →
 *   the real `KeyedProcessOperator.processElement` (key selector, user function, `ctx.state`,
 *   `CountingOutput` → chained hop → a counting sink)
 *
 * and the plain side: one `Map<string, { value }>` lookup with the entry mutated (the layout
 * weir's index has), a `Map<string, number>` get + set, and the operator-shaped plain loop (a key
 * selector, a user function and an output closure around the `Map`).
 *
 * Prints per case thread CPU ns per record (`process.cpuUsage` around a fixed number of batches)
 * and tinybench's wall p50 of a batch / 256, in rotating order over rounds. Compare rows of the
 * same run; absolute figures move with the machine's load.
 */

import { loadavg } from 'node:os';
import type { KeyedProcessFunction, KeySelector, ValueState } from '../../src/api/functions.js';
import { ShapeDecoder } from '../../src/channels/shape-codec.js';
import { HeapKeyedStateBackend } from '../../src/state/heap/heap-keyed-state-backend.js';
import { KeyedProcessOperator } from '../../src/worker/operators/keyed-operators.js';
import { CountingOutput } from '../../src/worker/outputs/counting-output.js';
import { TaskTime } from '../../src/worker/timers/task-time.js';
import { formatMachineInfo, machineInfo } from '../harness/machine-info.js';
import { perRecordRounds } from '../harness/per-record-rounds.js';
import { BATCH, type Batches, encodedBatches, type Rec } from '../pipeline/encoded-batches.js';

const quick = process.argv.includes('--quick');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const KEY_COUNTS = (arg('--keys') ?? '10000,100000').split(',').map(Number);
const ROUNDS = Number(arg('--rounds') ?? (quick ? 3 : 7));
const ITERATIONS = quick ? 300 : 1500;
const WARMUP = 200;
interface Out {
  key: string;
  sum: number;
}

let blackhole = 0;

interface Case {
  name: string;
  run(): void;
}

/** Each case is its own function literal: cases must not share call-site feedback. */
function cases(data: Batches): Case[] {
  const { payloads, groups } = data;
  const n = payloads.length;
  const backend = () =>
    new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: { start: 0, end: 127 } });
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
    const sums = new Map<string, { value: number }>();
    let b = 0;
    list.push({
      name: 'plain: Map<key, { value }> get, entry mutated',
      run() {
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        for (let i = 0; i < recs.length; i++) {
          const r = recs[i];
          const e = sums.get(r.key);
          if (e === undefined) sums.set(r.key, { value: r.value });
          else e.value += r.value;
        }
        blackhole += sums.size;
      },
    });
  }
  {
    const dec = new ShapeDecoder();
    const sums = new Map<string, number>();
    let b = 0;
    list.push({
      name: 'plain: Map<key, number> get + set',
      run() {
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        for (let i = 0; i < recs.length; i++) {
          const r = recs[i];
          sums.set(r.key, (sums.get(r.key) ?? 0) + r.value);
        }
        blackhole += sums.size;
      },
    });
  }
  {
    // What the operator adds around the Map, written plainly: key selector, user function, output.
    const dec = new ShapeDecoder();
    const sums = new Map<string, number>();
    let emitted = 0;
    const sink = { collect: (_o: Out) => void emitted++ };
    const selector = (r: Rec) => r.key;
    const fn = (r: Rec, out: { collect(o: Out): void }) => {
      const next = (sums.get(r.key) ?? 0) + r.value;
      sums.set(r.key, next);
      out.collect({ key: r.key, sum: next });
    };
    let b = 0;
    list.push({
      name: 'plain: operator-shaped (selector, fn, out → counting sink)',
      run() {
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        for (let i = 0; i < recs.length; i++) {
          const r = recs[i];
          blackhole += selector(r).length;
          fn(r, sink);
        }
        blackhole += emitted;
      },
    });
  }
  {
    const dec = new ShapeDecoder();
    const be = backend();
    let b = 0;
    list.push({
      name: 'weir: setCurrentKey(key, group)',
      run() {
        const g = groups[b];
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        for (let i = 0; i < recs.length; i++) be.setCurrentKey(recs[i].key, g[i]);
        blackhole += recs.length;
      },
    });
  }
  {
    const dec = new ShapeDecoder();
    const be = backend();
    const state = be.store;
    // Give every key an entry, so value() finds one as it does in steady state.
    for (let k = 0; k < payloads.length; k++) {
      const recs = dec.decode(payloads[k]) as Rec[];
      for (let i = 0; i < recs.length; i++) {
        be.setCurrentKey(recs[i].key, groups[k][i]);
        state.value<number>('sum').update(1);
      }
    }
    let b = 0;
    list.push({
      name: "weir: + ctx.state.value('sum').value()",
      run() {
        const g = groups[b];
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        let s = 0;
        for (let i = 0; i < recs.length; i++) {
          be.setCurrentKey(recs[i].key, g[i]);
          s += state.value<number>('sum').value() ?? 0;
        }
        blackhole += s;
      },
    });
  }
  {
    const dec = new ShapeDecoder();
    const be = backend();
    const state = be.store;
    let b = 0;
    list.push({
      name: 'weir: + update()',
      run() {
        const g = groups[b];
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        for (let i = 0; i < recs.length; i++) {
          const r = recs[i];
          be.setCurrentKey(r.key, g[i]);
          const sum = state.value<number>('sum');
          sum.update((sum.value() ?? 0) + r.value);
        }
        blackhole += recs.length;
      },
    });
  }
  {
    const dec = new ShapeDecoder();
    const be = backend();
    let emitted = 0;
    const sink = { processElement: (_v: unknown, _i: 0 | 1) => void emitted++ };
    const out = new CountingOutput({ collect: (v) => sink.processElement(v, 0) });
    const fn: KeyedProcessFunction<unknown, unknown, unknown> = (r, ctx, o) => {
      const rec = r as Rec;
      const sum: ValueState<number> = ctx.state.value('sum');
      const next = (sum.value() ?? 0) + rec.value;
      sum.update(next);
      o.collect({ key: rec.key, sum: next });
    };
    const selector: KeySelector<unknown, unknown> = (r) => (r as Rec).key;
    const ctx = { subtaskIndex: 0, parallelism: 1, attempt: 0, operatorName: 'sum' };
    const op = new KeyedProcessOperator(
      1,
      'sum',
      'sum',
      ctx,
      out,
      be,
      fn,
      undefined,
      selector,
      new TaskTime(),
    );
    let b = 0;
    list.push({
      name: 'weir: KeyedProcessOperator.processElement → counting sink',
      run() {
        const g = groups[b];
        const recs = dec.decode(payloads[b]) as Rec[];
        b = (b + 1) % n;
        for (let i = 0; i < recs.length; i++) op.processElement(recs[i], 0, g[i]);
        blackhole += emitted;
      },
    });
  }
  return list;
}

console.log(formatMachineInfo(machineInfo()));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const keys of KEY_COUNTS) {
  const data = encodedBatches(keys, 3);
  const list = cases(data);
  console.log(
    `\nkeyed steps, ${keys} keys, ${data.payloads.length} batches of ${BATCH}, ${ROUNDS} rounds of ` +
      `${ITERATIONS} batches per case (+${WARMUP} warm-up), load average ${loadavg()[0].toFixed(1)}`,
  );
  const rows = await perRecordRounds(list, {
    rounds: ROUNDS,
    iterations: ITERATIONS,
    warmup: WARMUP,
    recordsPerBatch: BATCH,
  });
  console.log('case | CPU ns/record, median (min–max) of rounds | wall p50 ns/record');
  for (const [name, r] of rows) {
    console.log(
      `${name} | ${median(r.cpu).toFixed(1)} (${Math.min(...r.cpu).toFixed(1)}–${Math.max(...r.cpu).toFixed(1)}) | ` +
        `${median(r.p50).toFixed(1)}`,
    );
  }
}
console.log(`load average at the end ${loadavg()[0].toFixed(1)}`);
if (blackhole === -1) console.log('');
