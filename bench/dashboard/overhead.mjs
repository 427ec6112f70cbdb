// The dashboard's cost on throughput (issue goals: ≤ 2 % with no page open, ≤ 5 % with one
// open). Three modes, run interleaved in a rotating order so machine load hits all alike:
//   off     — no dashboard (the client still samples metrics once a second, as every job does)
//   no-page — `dashboard: true`, nobody connected
//   page    — `dashboard: true` and one open page: a child process holds /api/events open and
//             reads every push (the page's own rendering runs in the browser, not in the job)
// The task-side measurements (time split per park, ring fill and source lag read per sample)
// run in every mode: they cannot be switched off, so they are inside the baseline.
// Usage: node bench/dashboard/overhead.mjs [runs] [n]   (build first: npm run build)
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { JobMonitor, runJob, startJob } from '../../dist/index.js';

const runs = Number(process.argv[2] ?? 5);
const n = String(process.argv[3] ?? 3_000_000);
const job = new URL('../../examples/keyed-sum.ts', import.meta.url);
const MODES = ['off', 'no-page', 'page'];
const rates = { off: [], 'no-page': [], page: [] };
const pushes = [];

/**
 * A page's connection in another process, started once before the runs so that its start-up is
 * not timed: each URL line on its stdin opens /api/events and reads it until the job's server
 * closes it, then it prints how many snapshots that page received.
 */
const reader = spawn(
  process.execPath,
  [
    '-e',
    `const rl = require('node:readline').createInterface({ input: process.stdin });
     rl.on('line', async (url) => {
       let n = 0;
       try {
         const r = await fetch(url);
         for await (const chunk of r.body) n += String(Buffer.from(chunk)).split('\\n\\n').length - 1;
       } catch {}
       process.stdout.write(n + '\\n');
     });`,
  ],
  { stdio: ['pipe', 'pipe', 'inherit'] },
);
const pageLines = [];
let pageWaiter = null;
reader.stdout.on('data', (d) => {
  for (const line of String(d).split('\n').filter(Boolean)) pageLines.push(Number(line));
  pageWaiter?.();
});
function openPage(url) {
  reader.stdin.write(`${url}api/events\n`);
  return () =>
    new Promise((resolve) => {
      const check = () => {
        if (pageLines.length > 0) resolve(pageLines.shift());
        else pageWaiter = check;
      };
      check();
    });
}

for (let i = 0; i < runs; i++) {
  const order = MODES.map((_, k) => MODES[(i + k) % MODES.length]);
  for (const mode of order) {
    const started = performance.now();
    if (mode === 'off') await runJob(job, { parallelism: 2, args: { n } });
    else {
      const client = await startJob(job, { parallelism: 2, args: { n }, dashboard: true });
      const close = mode === 'page' ? openPage(client.dashboardUrl) : null;
      await client.done;
      if (close) pushes.push(await close());
    }
    rates[mode].push(Number(n) / ((performance.now() - started) / 1000));
  }
}
// The dashboard's main-thread work per sample (no page open: one monitor update) and per push to
// an open page (one snapshot serialised), measured on a finished job's last sample.
const small = await startJob(job, { parallelism: 2, args: { n: '1000' } });
await small.done;
const monitor = new JobMonitor(small, 'overhead');
const samples = 20_000;
const t0 = performance.now();
for (let i = 0; i < samples; i++) small.emit('metrics', small.metrics());
const monitorMicrosPerSample = ((performance.now() - t0) * 1000) / samples;
const t1 = performance.now();
for (let i = 0; i < samples; i++) JSON.stringify(monitor.snapshot());
const pushMicrosPerOpenPage = ((performance.now() - t1) * 1000) / samples;
monitor.dispose();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const off = median(rates.off);
const result = {
  machine: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
  node: process.version,
  loadavg1m: Number(loadavg()[0].toFixed(1)),
  runs,
  n: Number(n),
  baseline: 'off (no dashboard), same run, interleaved',
  medianRecordsPerSec: Object.fromEntries(MODES.map((m) => [m, Math.round(median(rates[m]))])),
  ratioToOff: Object.fromEntries(MODES.map((m) => [m, Number((median(rates[m]) / off).toFixed(3))])),
  pagePushesPerRun: pushes,
  // includes client.metrics() itself, which the client computes for its own event anyway
  monitorMicrosPerSample: Number(monitorMicrosPerSample.toFixed(2)),
  pushMicrosPerOpenPage: Number(pushMicrosPerOpenPage.toFixed(2)),
  all: Object.fromEntries(MODES.map((m) => [m, rates[m].map(Math.round)])),
};
console.table(
  MODES.map((m) => ({ mode: m, median: result.medianRecordsPerSec[m], ratio: result.ratioToOff[m] })),
);
console.log(JSON.stringify(result));
reader.kill();
mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('../results/dashboard-overhead.json', import.meta.url),
  `${JSON.stringify(result, null, 2)}\n`,
);
