// Micro-benchmark (tinybench, in-thread): the source task's per-record path of the pipeline —
// sequence → map → filter → keyBy partitioner → ChannelWriter into a ring whose frames are
// released without decoding — built from a checkout's `dist/` exactly as a worker builds it
// (bench/pipeline/workers/source-chain-worker.mjs), against `floor`: the same user functions,
// string hash, batching, encoding and publishing in one plain loop.
//
//   npm run build
//   node bench/pipeline/source-chain.mjs [--base DIR] [--rounds 5] [--iterations 20000] [--watchdog on|off]
//
// Every run is a fresh worker thread (a fresh isolate: no feedback shared between cases or builds).
// Runs rotate per round: floor, this checkout, then `--base DIR`'s dist (an interleaved A/B), so
// quote per-round ratios. Prints per run the tinybench wall p50 per record (of a 256-record poll),
// the mean wall and the worker thread's CPU per record (10 ms ticks). `--watchdog off` builds the
// chains without the stuck-task watchdog's busy marker (on by default in jobs: what its hops cost).
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    iterations: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '4000' },
    watchdog: { type: 'string', default: 'on' },
  },
});
const here = path.dirname(fileURLToPath(import.meta.url));
const self = path.resolve(here, '../..');
const runs = [
  { name: 'floor', root: self, kind: 'floor' },
  { name: 'chain', root: self, kind: 'chain' },
  ...(values.base ? [{ name: 'base chain', root: path.resolve(values.base), kind: 'chain' }] : []),
];
const iterations = Number(values.iterations);
const warmup = Number(values.warmup);
const rows = new Map(runs.map((r) => [r.name, []]));

function runOnce(r) {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL('./workers/source-chain-worker.mjs', import.meta.url), {
      workerData: { root: r.root, kind: r.kind, iterations, warmup, watchdog: values.watchdog !== 'off' },
    });
    w.once('message', resolve);
    w.once('error', reject);
  });
}

console.log(
  `source chain, ${values.rounds} rounds × ${runs.length} runs of ${iterations} polls of 256 (+${warmup} warm-up), ` +
    `${new Date().toISOString()}, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
);
for (let round = 0; round < Number(values.rounds); round++) {
  const order = runs.map((_, i) => runs[(i + round) % runs.length]);
  for (const r of order) {
    const m = await runOnce(r);
    rows.get(r.name).push(m);
    console.log(
      `round ${round} ${r.name.padEnd(10)} p50 ${m.p50.toFixed(1)} ns/record, mean ${m.mean.toFixed(1)}, CPU ${m.cpu.toFixed(1)}`,
    );
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log(
  'run | p50 ns/record median (min–max) | CPU ns/record median | vs base, per-round p50 ratio median',
);
const base = rows.get('base chain');
for (const [name, ms] of rows) {
  const p50 = ms.map((m) => m.p50);
  const ratio = base && name !== 'base chain' ? median(p50.map((x, i) => x / base[i].p50)).toFixed(2) : '';
  console.log(
    `${name} | ${median(p50).toFixed(1)} (${Math.min(...p50).toFixed(1)}–${Math.max(...p50).toFixed(1)}) | ` +
      `${median(ms.map((m) => m.cpu)).toFixed(1)} | ${ratio}`,
  );
}
