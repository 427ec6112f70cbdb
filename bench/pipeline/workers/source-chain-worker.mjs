// One run of bench/pipeline/source-chain.mjs in a worker thread of its own (a fresh isolate, so no
// call-site feedback is shared between builds or cases): the source task's record path of the
// pipeline, built from `${root}/dist` exactly as a worker builds it — the job's source vertex
// (sequence → map → filter, then the keyBy edge) as an `OperatorChain` with the stuck-task
// watchdog's busy marker, a `RecordWriter` with the edge's hash partitioner and a `ChannelWriter`
// into a ring. The ring's frames are released after every poll without being decoded (no consumer
// work). `watchdog: false` builds the chain without the busy marker. Case `floor`: the same user
// functions, string hash and batch push in one plain loop, encoded and published per 256 records
// the same way (the chain's plumbing is what it lacks).
// Plain JavaScript so the worker loads `dist/` without tsx.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { Bench } from 'tinybench';

const { root, kind, iterations, warmup, watchdog } = workerData;
const load = (p) => import(pathToFileURL(`${root}/dist/${p}`).href);
const { buildStreamGraph, defineJob } = await load('api/define-job.js');
const { buildExecutionPlan } = await load('graph/build-execution-plan.js');
const { findVertex, OperatorChain } = await load('worker/operator-chain.js');
const { TaskTime } = await load('worker/timers/task-time.js');
const { BusyMarker } = await load('worker/busy-marker.js');
const { ChannelWriter } = await load('channels/channel-writer.js');
const { RingBuffer } = await load('channels/ring-buffer.js');
const { Doorbell } = await load('channels/doorbell.js');
const { RecordWriter } = await load('worker/outputs/record-writer.js');
const { createPartitionerFor } = await load('graph/partitioner.js');
const { sequence } = await load('connectors/sequence-source.js');
const { hashString } = await load('state/key-groups.js');

const KEYS = 10_000;
const POLL = 256; // SOURCE_BATCH of stream-task.ts
const ring = new RingBuffer(RingBuffer.allocate(1 << 20));
const doorbell = new Doorbell(Doorbell.allocate());
const drop = () => {};
const drain = () => {
  while (ring.tryRead(drop) > 0);
};

const map = (i) => ({ key: `k${i % KEYS}`, value: i * 2 });
const filter = (r) => r.value % 3 !== 0;
const keyOf = (r) => r.key;

let step;
if (kind === 'chain') {
  const def = defineJob((env) => {
    env
      .fromSource(sequence({ from: 0, to: Number.MAX_SAFE_INTEGER }), 'sequence')
      .map(map)
      .name('map')
      .filter(filter)
      .name('filter')
      .keyBy(keyOf)
      .process((r, _ctx, out) => out.collect(r))
      .name('running sum')
      .sinkTo({ type: 'bench', name: 'bench', createWriter: () => ({ write() {} }) });
  });
  const plan = buildExecutionPlan(buildStreamGraph(def), { parallelism: 1 });
  const vertex = findVertex(plan, 0);
  const edgeId = vertex.operators[vertex.operators.length - 1].outputEdges[0];
  const writer = new ChannelWriter(ring, doorbell, { producer: 'operator filter' });
  const networkOutputs = new Map([
    [edgeId, new RecordWriter([writer], createPartitionerFor(plan, edgeId, 0))],
  ]);
  const busy = new BusyMarker(new SharedArrayBuffer(1024), 0);
  const chain = new OperatorChain(vertex, {
    subtaskIndex: 0,
    parallelism: 1,
    attempt: 0,
    networkOutputs,
    networkWatermarkOutputs: new Map(),
    time: new TaskTime(),
    busy: watchdog ? busy : null,
    createKeyedBackend: () => {
      throw new Error('no keyed operator in the source chain');
    },
    restoredOperatorState: () => undefined,
    sinkContext: () => {
      throw new Error('no sink in the source chain');
    },
  });
  for (const op of chain.operators) op.open();
  const head = chain.head;
  step = () => {
    busy.enter();
    head.poll(POLL);
    busy.exit();
    drain();
  };
} else if (kind === 'floor') {
  const writer = new ChannelWriter(ring, doorbell, { producer: 'operator filter' });
  let next = 0;
  step = () => {
    const stop = next + POLL;
    for (let i = next; i < stop; i++) {
      const r = map(i);
      if (!filter(r)) continue;
      writer.write(r, hashString(keyOf(r)) & 127);
    }
    next = stop;
    drain();
  };
} else throw new RangeError(`unknown case ${kind}`);

/** This thread's CPU ms (utime + stime; 10 ms ticks). */
function threadCpuMs() {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

for (let i = 0; i < warmup; i++) step();
const bench = new Bench({ iterations, time: 0, warmupIterations: 0, warmupTime: 0 });
bench.add(kind, step);
const cpu0 = threadCpuMs();
const t0 = performance.now();
await bench.run();
const wall = performance.now() - t0;
const cpu = threadCpuMs() - cpu0;
const result = bench.tasks[0].result;
parentPort.postMessage({
  p50: ((result.latency?.p50 ?? result.p50) * 1e6) / POLL,
  mean: (wall * 1e6) / (iterations * POLL),
  cpu: (cpu * 1e6) / (iterations * POLL),
});
