// CPU time per record of every thread of one run of the pipeline's keyed-sum job
// (bench/jobs/keyed-sum-job.mjs), read from /proc/self/task/*/schedstat (thread-sampler.mjs): which
// thread pays for what, in a figure that load on the machine inflates far less than throughput,
// and whether a thread ran, waited for a core or slept, over the whole run and the steady window
// (Linux only). bench/pipeline/thread-cpu-postmessage.mjs prints the same for the postMessage
// baseline.
//
//   npm run build
//   node bench/pipeline/thread-cpu.mjs [--p 1] [--mode off|EO] [--n 4000000] [--workload cheap|cpu-heavy|hexkeys|spin|hexspin] [--keys K] [--wake-delay MS] [--batch RECORDS]
//     [--ring-bytes BYTES]
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
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startJob } from 'weir';
import { printTimeline, printWindow, startThreadSampler } from './thread-sampler.mjs';

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
    // channels.batchRecords (records per channel batch); omitted: the default (256).
    batch: { type: 'string' },
    // channels.ringBytes (bytes per ring, min 4096); omitted: the default (1 MiB).
    'ring-bytes': { type: 'string' },
  },
});
const parallelism = Number(values.p);
const n = Number(values.n);
if (values.mode !== 'off' && values.mode !== 'EO')
  throw new RangeError(`--mode off or EO, got ${values.mode}`);

// Scheduler figures per thread (schedstat: on CPU / waiting for a core / asleep), whole run and
// steady window; worker threads exit with the job, the sampler keeps their last reading.
const sampler = startThreadSampler();
const dir = values.mode === 'EO' ? mkdtempSync(path.join(os.tmpdir(), 'weir-thread-cpu-')) : undefined;
const startedAt = performance.now();
try {
  const client = await startJob(new URL('../jobs/keyed-sum-job.mjs', import.meta.url), {
    parallelism,
    args: { n: String(n), keys: values.keys, workload: values.workload },
    channels: {
      ...(values['wake-delay'] !== undefined ? { wakeDelayMs: Number(values['wake-delay']) } : {}),
      ...(values.batch !== undefined ? { batchRecords: Number(values.batch) } : {}),
      ...(values['ring-bytes'] !== undefined ? { ringBytes: Number(values['ring-bytes']) } : {}),
    },
    ...(dir ? { checkpointing: { interval: 1000, mode: 'exactly-once', dir } } : {}),
  });
  const result = await client.done;
  const rec = sampler.stop();
  const reports = result.sinks.digest;
  const firstAt = Math.min(...reports.filter((r) => r.digest.emitted > 0).map((r) => r.firstAt));
  const endAt = Math.max(...reports.map((r) => r.endAt));
  console.log(
    `p=${parallelism} ${values.mode} ${values.workload} n=${n}${values['wake-delay'] !== undefined ? ` wake-delay=${values['wake-delay']}` : ''}${values.batch !== undefined ? ` batch=${values.batch}` : ''}${values['ring-bytes'] !== undefined ? ` ring-bytes=${values['ring-bytes']}` : ''} keys=${values.keys}: steady ${(n / (endAt - firstAt) / 1000).toFixed(2)} M records/s, ` +
      `job ${(performance.now() - startedAt).toFixed(0)} ms, load average ${os.loadavg()[0].toFixed(1)}, ` +
      `records per sink subtask ${reports.map((r) => r.digest.emitted).join(' + ')}`,
  );
  // The runtime's own time split per task (cumulative over the attempt, start-up included): parked
  // idle (no input) or backpressured (an output ring full).
  for (const [key, ops] of client.subtaskMetrics()) {
    const load = [...(Array.isArray(ops) ? ops : Object.values(ops))].find((o) => o?.load)?.load;
    if (load)
      console.log(
        `  task ${key}: idle ${load.idleMs.toFixed(0)} ms, backpressured ${load.backpressuredMs.toFixed(0)} ms`,
      );
  }
  const whole = rec.window(rec.samples[0].at, rec.samples.at(-1).at);
  let total = 0;
  for (const [tid, t] of whole.threads) {
    total += t.runMs;
    if (t.runMs >= 20)
      console.log(`  thread ${tid}: ${t.runMs.toFixed(0)} ms, ${((t.runMs * 1e6) / n).toFixed(0)} ns/record`);
  }
  console.log(`  all threads: ${total.toFixed(0)} ms, ${((total * 1e6) / n).toFixed(0)} ns/record`);
  const label = (tid) => (tid === process.pid ? 'main' : '');
  printWindow('whole run', whole, n, label);
  printWindow('steady window (first sink record → last end)', rec.window(firstAt, endAt), n, label);
  printTimeline(rec, firstAt, endAt, 10, label);
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
  sampler.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
