/**
 * Micro-benchmark: what an append costs the thread that calls it (issue 13: the demo's request
 * thread spent a quarter of its busy time in msgpack encoding and a fifth in GC), per record,
 * split by step, for one or more builds in ONE process so an A/B runs interleaved on the same
 * machine state:
 *
 * - `encode`: the record codec alone (`LogRecordCodec.encodeAll`), tinybench p50 per record, and
 *   the bytes it allocates per record (heap growth over runs with no GC in between).
 * - `append`: the calling thread's busy time per record for closed-loop `topic.append`s (event-loop
 *   utilisation over the run, and the thread's own CPU time from /proc: prepare + encode + group-commit hand-off + planning + the wake-up
 *   post, everything the thread does except waiting), with `durability: 'os'` so the wait for the
 *   disk is not in it; the JS heap it allocates per record (heap growth over a run with no GC:
 *   hence the large young generation in the command); and the wake-up posts per commit (counted on the log's BroadcastChannel).
 *
 * Run: node --min-semi-space-size=256 --max-semi-space-size=256 --import tsx bench/log/append-caller-cost.ts
 *   [--rounds N] <dist dir of build A> [<dist dir of build B> …]
 * e.g. `… /work/wt/base/dist dist` (build both first). Rounds alternate A, B, A, B …
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { BroadcastChannel } from 'node:worker_threads';
import { Bench } from 'tinybench';

const args = process.argv.slice(2);
let rounds = 3;
const builds: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--rounds') rounds = Number(args[++i]);
  else builds.push(resolve(args[i]));
}
if (builds.length === 0) throw new Error('give at least one dist directory');

interface Build {
  readonly dir: string;
  readonly codec: { encodeAll(topic: string, records: readonly unknown[]): Uint8Array[] };
  readonly openLog: typeof import('../../src/log/index.js').openLog;
}
const loaded: Build[] = [];
for (const dir of builds) {
  const { LogRecordCodec } = await import(join(dir, 'log/log-record-codec.js'));
  const { openLog } = await import(join(dir, 'log/index.js'));
  loaded.push({ dir, codec: new LogRecordCodec(), openLog });
}

/** A click like the demo's. */
const click = (seq: number) => ({
  user: `u${seq % 5000}`,
  page: `/product/${seq % 1000}`,
  action: 'click',
  seq,
  ts: 1_760_000_000_000 + seq,
});
const SIZES = [1, 64, 256];
const batches = new Map(SIZES.map((n) => [n, Array.from({ length: n }, (_, i) => click(i))]));

let gcs = 0;
new PerformanceObserver((list) => {
  gcs += list.getEntries().length;
}).observe({ entryTypes: ['gc'] });

async function encodeCost(b: Build, n: number): Promise<{ ns: number; bytes: number }> {
  const records = batches.get(n)!;
  const bench = new Bench({ time: 300, warmupTime: 50 });
  bench.add('encode', () => {
    b.codec.encodeAll('clicks', records);
  });
  await bench.run();
  const ns = ((bench.tasks[0].result as unknown as { latency: { p50: number } }).latency.p50 * 1e6) / n;
  // Allocation: heap growth over encodes with no GC in between (retry if a GC hit the window).
  let bytes = Number.NaN;
  for (let attempt = 0; attempt < 5 && Number.isNaN(bytes); attempt++) {
    const reps = Math.max(1, Math.floor(2000 / n));
    await new Promise((r) => setImmediate(r));
    const g = gcs;
    const before = process.memoryUsage().heapUsed;
    const keep: unknown[] = [];
    for (let r = 0; r < reps; r++) keep.push(b.codec.encodeAll('clicks', records));
    const after = process.memoryUsage().heapUsed;
    await new Promise((r) => setImmediate(r)); // GC entries are delivered asynchronously
    if (gcs === g) bytes = (after - before) / (reps * n);
  }
  return { ns, bytes };
}

/**
 * The main thread's own CPU time (ms; Linux, 10 ms ticks): event-loop utilisation counts the time a
 * loaded machine took the core away from the thread, this does not.
 */
function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in 100 Hz ticks
}

async function appendCost(
  b: Build,
  n: number,
): Promise<{ ns: number; cpuNs: number; bytes: number; postsPerAppend: number }> {
  const base = mkdtempSync(join(tmpdir(), 'weir-bench-append-caller-'));
  try {
    const dir = join(base, 'log');
    const log = b.openLog(dir, { durability: 'os' });
    const topic = log.topic('clicks', { partitions: 4 });
    let posts = 0;
    const listener = new BroadcastChannel(`weir-log:${realpathSync(dir)}`);
    listener.onmessage = () => posts++;
    const batch = batches.get(n)!;
    const total = n === 1 ? 20_000 : 100_000;
    const appenders = 8;
    await topic.append(batch); // opens everything, warms the path
    let left = total;
    const elu = performance.eventLoopUtilization();
    const cpu0 = mainThreadCpuMs();
    const gc0 = gcs;
    const heap0 = process.memoryUsage().heapUsed;
    let appends = 0;
    await Promise.all(
      Array.from({ length: appenders }, async (_, a) => {
        while (left > 0) {
          left -= n;
          appends++;
          await topic.append(batch, { key: a });
        }
      }),
    );
    const used = performance.eventLoopUtilization(elu);
    const cpuMs = mainThreadCpuMs() - cpu0;
    const heapBytes = process.memoryUsage().heapUsed - heap0;
    await new Promise((r) => setTimeout(r, 20)); // let the last posts arrive
    listener.close();
    const collected = gcs !== gc0; // read after the wait: GC entries arrive asynchronously
    await log.close();
    // One post per committed group by design: fewer than one per append means appends share them.
    const records = appends * n;
    return {
      ns: (used.active * 1e6) / records,
      cpuNs: (cpuMs * 1e6) / records,
      bytes: collected ? Number.NaN : heapBytes / records,
      postsPerAppend: posts / appends,
    };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

console.log(
  `load ${(await import('node:os'))
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
const rows: string[] = [];
for (let round = 1; round <= rounds; round++) {
  for (const b of loaded) {
    for (const n of SIZES) {
      const e = await encodeCost(b, n);
      const a = await appendCost(b, n);
      rows.push(
        [
          round,
          b.dir,
          n,
          e.ns.toFixed(0),
          Number.isNaN(e.bytes) ? '?' : e.bytes.toFixed(0),
          a.ns.toFixed(0),
          a.cpuNs.toFixed(0),
          Number.isNaN(a.bytes) ? '?' : a.bytes.toFixed(0),
          a.postsPerAppend.toFixed(3),
        ].join('\t'),
      );
      console.log(rows.at(-1));
    }
  }
}
console.log(
  'columns: round, build, records per append, encode ns/record (p50), encode bytes/record, caller busy ns/record (append, os: event-loop utilisation), main-thread CPU ns/record, JS heap bytes/record allocated by the appends (? when a GC ran), wake-up posts per append',
);
