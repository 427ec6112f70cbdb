// CPU per second of every thread of a keyed-sum job (bench/jobs/keyed-sum-job.mjs) running at a
// fixed low rate: what a nearly idle job costs (issue 12: an idle task should cost ~0).
//
//   npm run build
//   node bench/pipeline/idle-cpu.mjs [--p 1] [--rate 1000] [--seconds 10] [--warmup 3] [--mode off|EO]
//
// Plain JavaScript, run without tsx (the workers load dist/ as users do). Starts the job with
// `sources.sequence({ ratePerSec: rate })`, lets it warm up, reads /proc/self/task/*/stat twice
// `seconds` apart, prints each thread's CPU ms per second of wall time, then cancels the job.
// Threads are listed by id: the main thread first, V8/libuv helpers, then the pool's workers.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startJob } from 'weir';

const { values } = parseArgs({
  options: {
    p: { type: 'string', default: '1' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    mode: { type: 'string', default: 'off' },
    label: { type: 'string', default: '' },
  },
});
const parallelism = Number(values.p);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
if (values.mode !== 'off' && values.mode !== 'EO')
  throw new RangeError(`--mode off or EO, got ${values.mode}`);

/** CPU ms (utime + stime) and name per thread id of this process. */
function threadCpu() {
  const msPerTick = 1000 / 100; // USER_HZ: 100 on Linux
  const out = new Map();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), { name, ms: (Number(fields[11]) + Number(fields[12])) * msPerTick });
    } catch {
      // the thread ended between readdir and read
    }
  }
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dir = values.mode === 'EO' ? mkdtempSync(path.join(os.tmpdir(), 'weir-idle-cpu-')) : undefined;
try {
  const client = await startJob(new URL('../jobs/keyed-sum-job.mjs', import.meta.url), {
    parallelism,
    args: { n: String(1e12), rate: String(rate) },
    ...(dir ? { checkpointing: { interval: 1000, mode: 'exactly-once', dir } } : {}),
  });
  await sleep(Number(values.warmup) * 1000);
  const before = threadCpu();
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const after = threadCpu();
  const wall = (performance.now() - t0) / 1000;
  const rows = [];
  let total = 0;
  for (const [tid, { name, ms }] of [...after].sort((a, b) => a[0] - b[0])) {
    const used = (ms - (before.get(tid)?.ms ?? 0)) / wall;
    total += used;
    if (used >= 1) rows.push(`${tid}:${name}=${used.toFixed(0)}`);
  }
  console.log(
    `${new Date().toISOString()} ${values.label} p=${parallelism} ${values.mode} rate=${rate}/s ` +
      `load=${os.loadavg()[0].toFixed(2)} all=${total.toFixed(0)} ms/s | ${rows.join(' ')}`,
  );
  await client.cancel();
} finally {
  if (dir) rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
