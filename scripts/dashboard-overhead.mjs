// Throughput of a job with and without the dashboard (no page open), alternating runs so machine
// load hits both alike. Usage: node scripts/dashboard-overhead.mjs [runs] [n]
import { JobMonitor, runJob, startJob } from '../dist/index.js';

const runs = Number(process.argv[2] ?? 5);
const n = String(process.argv[3] ?? 3_000_000);
const job = new URL('../examples/keyed-sum.ts', import.meta.url);
const rates = { off: [], on: [] };
for (let i = 0; i < runs; i++) {
  for (const mode of i % 2 === 0 ? ['off', 'on'] : ['on', 'off']) {
    const started = performance.now();
    if (mode === 'off') await runJob(job, { parallelism: 2, args: { n } });
    else await (await startJob(job, { parallelism: 2, args: { n }, dashboard: true })).done;
    rates[mode].push(Number(n) / ((performance.now() - started) / 1000));
  }
}
// The dashboard's whole main-thread work with no page open: one monitor update per metrics sample.
const client = await startJob(job, { parallelism: 2, args: { n: '1000' } });
await client.done;
const monitor = new JobMonitor(client, 'overhead');
const samples = 20_000;
const t0 = performance.now();
for (let i = 0; i < samples; i++) client.emit('metrics', client.metrics());
const perSampleUs = ((performance.now() - t0) * 1000) / samples;
// With a page open: one snapshot serialised per second per open page.
const t1 = performance.now();
for (let i = 0; i < samples; i++) JSON.stringify(monitor.snapshot());
const perPushUs = ((performance.now() - t1) * 1000) / samples;
monitor.dispose();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const off = median(rates.off);
const on = median(rates.on);
console.log(
  JSON.stringify({
    runs,
    n: Number(n),
    offMedian: Math.round(off),
    onMedian: Math.round(on),
    overheadPercent: Number((((off - on) / off) * 100).toFixed(2)),
    // includes client.metrics() itself, which the client computes for its own event anyway
    monitorMicrosPerSample: Number(perSampleUs.toFixed(2)),
    pushMicrosPerOpenPage: Number(perPushUs.toFixed(2)),
    off: rates.off.map(Math.round),
    on: rates.on.map(Math.round),
  }),
);
