// Per-thread CPU and scheduler figures of the worker_threads postMessage baseline (S sources → C
// sum workers, bench/pipeline/worker-threads.ts), to set beside thread-cpu.mjs's weir figures:
// where each design spends CPU per record, and how many cores it keeps busy.
//
//   node bench/pipeline/thread-cpu-postmessage.mjs [--p 2] [--n 1500000] [--workload cpu-heavy|cheap]
//   node --import tsx bench/pipeline/thread-cpu-postmessage.mjs --impl ts …
//
// --impl mjs (default): plain-JavaScript workers (workers/postmessage-thread-worker.mjs), no tsx,
// as thread-cpu.mjs runs weir. --impl ts: the baseline itself (worker-threads.ts, whose workers
// load .ts through tsx, as bench/pipeline/run.ts runs it); then the window is the case's own timed
// region (its `ms`, ending when run() returned) and threads are not labelled.
// --impl floor: p source workers without sum workers (map + filter + partition + batching, batches
// dropped): the source-side work every design pays; window = from `start` to the last source done.
// Window = from posting `start` to the last digest: the whole run minus worker start-up.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { MessageChannel, Worker } from 'node:worker_threads';
import { printTimeline, printWindow, startThreadSampler, wallNow } from './thread-sampler.mjs';

const { values } = parseArgs({
  options: {
    p: { type: 'string', default: '2' },
    n: { type: 'string', default: '1500000' },
    workload: { type: 'string', default: 'cpu-heavy' },
    impl: { type: 'string', default: 'mjs' },
  },
});
const p = Number(values.p);
const n = Number(values.n);
const labels = new Map([[process.pid, 'main']]);
const sampler = startThreadSampler();
let from;
let to;
let extra = '';

if (values.impl === 'ts') {
  const { workerThreadsCase } = await import('./worker-threads.ts');
  const result = await workerThreadsCase({ parallelism: p, workload: values.workload }).run(n);
  to = wallNow();
  from = to - result.ms;
  extra = `setup ${result.setupMs.toFixed(0)} ms`;
} else {
  const entry = new URL('./workers/postmessage-thread-worker.mjs', import.meta.url);
  const channels = Array.from({ length: p }, () => Array.from({ length: p }, () => new MessageChannel()));
  const spawn = (data, label) => {
    const worker = new Worker(entry, { workerData: data, transferList: [...data.ports] });
    const messages = [];
    let notify;
    worker.on('message', (m) => {
      if (m.kind === 'ready') labels.set(m.tid, label);
      messages.push(m);
      notify?.();
    });
    worker.on('error', (err) => {
      console.error(err);
      process.exit(1);
    });
    const next = async (kind) => {
      for (;;) {
        const i = messages.findIndex((m) => m.kind === kind);
        if (i >= 0) return messages.splice(i, 1)[0];
        await new Promise((resolve) => (notify = resolve));
      }
    };
    return { worker, next };
  };
  const floor = values.impl === 'floor';
  const sums = (floor ? [] : channels[0]).map((_, c) =>
    spawn({ role: 'sum', ackEvery: 4, ports: channels.map((row) => row[c].port2) }, `sum ${c}`),
  );
  const feeds = channels.map((row, s) =>
    spawn(
      {
        role: floor ? 'floor' : 'source',
        partitions: p,
        from: Math.floor((s * n) / p),
        to: Math.floor(((s + 1) * n) / p),
        batchSize: 256,
        maxInFlight: 16,
        workload: values.workload,
        ports: floor ? [] : row.map((ch) => ch.port1),
      },
      `source ${s}`,
    ),
  );
  await Promise.all([...sums, ...feeds].map((w) => w.next('ready')));
  from = wallNow();
  for (const f of feeds) f.worker.postMessage({ kind: 'start' });
  const digests = await Promise.all(sums.map((w) => w.next('digest')));
  const done = await Promise.all(feeds.map((w) => w.next('source-done')));
  to = wallNow();
  extra =
    (digests.length > 0 ? `emitted ${digests.map((d) => d.emitted).join(' + ')}, ` : '') +
    `source parks on credit ${done.map((d) => d.parks).join(', ')}, records per partition ${done.map((d) => d.sent.join('/')).join(', ')}`;
  await Promise.all([...sums, ...feeds].map((w) => w.worker.terminate()));
}
const rec = sampler.stop();
console.log(
  `${values.impl === 'floor' ? `source floor ×${p}` : `postMessage ${p}→${p}`} (${values.impl}) ${values.workload} n=${n}: ${(n / (to - from) / 1000).toFixed(2)} M records/s, ` +
    `window ${(to - from).toFixed(0)} ms, load average ${os.loadavg()[0].toFixed(1)}; ${extra}`,
);
const label = (tid) => labels.get(tid) ?? '';
printWindow('whole run (start-up included)', rec.window(rec.samples[0].at, rec.samples.at(-1).at), n, label);
printWindow('window', rec.window(from, to), n, label);
printTimeline(rec, from, to, 10, label);
process.exit(0);
