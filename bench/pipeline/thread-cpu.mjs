// CPU time per record of every thread of one run of the pipeline's keyed-sum job
// (bench/jobs/keyed-sum-job.mjs), read from /proc/self/task/*/stat: which thread pays for what,
// in a figure that load on the machine inflates far less than throughput (Linux only).
//
//   npm run build
//   node bench/pipeline/thread-cpu.mjs [--p 1] [--mode off|EO] [--n 4000000] [--workload cheap|cpu-heavy] [--keys K] [--wake-delay MS]
//     [--keys 10000]
//
// Plain JavaScript on purpose: run without tsx, the job's worker threads load dist/ as users do
// (with `--import tsx` every worker also loads tsx and its source-map handling). Threads are listed
// by thread id: the main thread first, then V8's and libuv's helper threads, then the pool's
// worker threads in start order. CPU per record includes each thread's start-up (module loading
// and JIT): run once with a small --n (e.g. 10000) to see that fixed part and subtract it.
// With --mode EO it also prints every completed checkpoint: when it was triggered relative to the
// first sink record (the steady window starts there and lasts n / records/s), its duration and each
// subtask's start delay, sync, serialize, write and ack times.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startJob } from 'weir';

const { values } = parseArgs({
  options: {
    p: { type: 'string', default: '1' },
    mode: { type: 'string', default: 'off' },
    n: { type: 'string', default: '4000000' },
    workload: { type: 'string', default: 'cheap' },
    // Distinct keys of the job (its own default: 10 000); e.g. 1000000 for high cardinality.
    keys: { type: 'string', default: '10000' },
    // channels.wakeDelayMs (0: ring a parked consumer after every full batch); omitted: the default.
    'wake-delay': { type: 'string' },
  },
});
const parallelism = Number(values.p);
const n = Number(values.n);
if (values.mode !== 'off' && values.mode !== 'EO')
  throw new RangeError(`--mode off or EO, got ${values.mode}`);

/** CPU ms (utime + stime) per thread id of this process. */
function threadCpu() {
  const ticksPerMs = 100 / 1000; // USER_HZ: 100 on Linux
  const out = new Map();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / ticksPerMs);
    } catch {
      // the thread ended between readdir and read
    }
  }
  return out;
}

const before = threadCpu();
// Worker threads exit with the job: keep their last reading.
const last = threadCpu();
const sampler = setInterval(() => {
  for (const [tid, ms] of threadCpu()) last.set(tid, ms);
}, 25);
const dir = values.mode === 'EO' ? mkdtempSync(path.join(os.tmpdir(), 'weir-thread-cpu-')) : undefined;
const startedAt = performance.now();
try {
  const client = await startJob(new URL('../jobs/keyed-sum-job.mjs', import.meta.url), {
    parallelism,
    args: { n: String(n), keys: values.keys, workload: values.workload },
    ...(values['wake-delay'] !== undefined
      ? { channels: { wakeDelayMs: Number(values['wake-delay']) } }
      : {}),
    ...(dir ? { checkpointing: { interval: 1000, mode: 'exactly-once', dir } } : {}),
  });
  const result = await client.done;
  clearInterval(sampler);
  for (const [tid, ms] of threadCpu()) last.set(tid, ms);
  const reports = result.sinks.digest;
  const firstAt = Math.min(...reports.filter((r) => r.digest.emitted > 0).map((r) => r.firstAt));
  const endAt = Math.max(...reports.map((r) => r.endAt));
  console.log(
    `p=${parallelism} ${values.mode} ${values.workload} n=${n}${values['wake-delay'] !== undefined ? ` wake-delay=${values['wake-delay']}` : ''} keys=${values.keys}: steady ${(n / (endAt - firstAt) / 1000).toFixed(2)} M records/s, ` +
      `job ${(performance.now() - startedAt).toFixed(0)} ms, load average ${os.loadavg()[0].toFixed(1)}`,
  );
  let total = 0;
  for (const [tid, ms] of [...last].sort((a, b) => a[0] - b[0])) {
    const used = ms - (before.get(tid) ?? 0);
    total += used;
    if (used >= 20)
      console.log(`  thread ${tid}: ${used.toFixed(0)} ms, ${((used * 1e6) / n).toFixed(0)} ns/record`);
  }
  console.log(`  all threads: ${total.toFixed(0)} ms, ${((total * 1e6) / n).toFixed(0)} ns/record`);
  // Where an exactly-once run's extra time can go: each completed checkpoint's trigger time
  // relative to the steady window, end-to-end duration, slowest alignment / sync / async part.
  for (const c of result.checkpoints) {
    const at = c.triggerTimestamp - firstAt; // both wall-clock epoch ms
    console.log(
      `  checkpoint ${c.checkpointId}: triggered ${at.toFixed(0)} ms after the first sink record, ` +
        `${c.durationMs.toFixed(1)} ms, alignment ${c.maxAlignmentDurationMs.toFixed(1)} ms, ` +
        `sync ${c.maxSyncDurationMs.toFixed(1)} ms, async ${c.maxAsyncDurationMs.toFixed(1)} ms, ${c.bytes} bytes`,
    );
    const ms = (x) => (x === undefined ? '–' : x.toFixed(1));
    for (const t of c.subtasks) {
      console.log(
        `    ${t.task}: start ${ms(t.startDelayMs)}, sync ${ms(t.syncDurationMs)}, serialize ${ms(t.serializeMs)}, ` +
          `write ${ms(t.writeMs)}, ack ${ms(t.ackDelayMs)} ms`,
      );
    }
  }
} finally {
  clearInterval(sampler);
  if (dir) rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
