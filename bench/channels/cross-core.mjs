// Where the keyed task's ring data comes from, and what that costs it (issue 12): the keyed task's
// inner loop — read a frame from a ring, shape-decode its batch, a plain `Map` get + set per
// record and the sink's `Map.set` (keyed-path.ts's floor; `--work weir`: weir's heap state
// path) — fed several ways, with the consumer's own thread CPU per record read from /proc
// (Linux only):
//
//   same-hot   one thread writes one frame, then reads it back: the frame is in L1.
//   same-full  one thread fills the ring, then drains it: every frame was written one ring-size
//              of traffic earlier, by this core (what the ring's size alone does to the cache).
//   cross      a worker thread writes frames as fast as the ring takes them, the main thread reads
//              (the pipeline under backpressure: the ring stays full, each frame was written by the
//              other core about one ring-size earlier; the reader wakes the parked writer).
//   cross-poll cross, but the writer polls (sleeps 20 µs on a private word when the ring is full)
//              instead of flagging that it waits: the reader never calls Atomics.notify.
//   cross-touch cross, but the reader first loads one byte of every 64 of the frame (independent
//              loads the core can have in flight together) and then decodes it.
//   cross-copy cross, but the reader copies the frame out of the ring (one memcpy) and decodes the
//              copy.
//   co-run     same-hot, while a worker thread runs its own same-hot loop on its own ring: a busy
//              neighbour thread with no data shared (the other core's load alone).
//
//   npm run build
//   node bench/channels/cross-core.mjs [--rounds 5] [--records 4000000] [--keys 10000] [--work keyed|decode|weir]
//     [--ring-bytes 65536,262144,1048576,4194304] [--cases same-hot,same-full,cross,cross-touch,cross-copy,cross-poll,co-run]
//
// Plain JavaScript over dist/ (the worker loads dist/ as the pool's workers do). Cases and ring
// sizes rotate per round; compare cases within a round: absolute figures move with the load.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { RingBuffer } from '../../dist/channels/ring-buffer.js';
import { ShapeDecoder, ShapeEncoder } from '../../dist/channels/shape-codec.js';
import { HeapKeyedStateBackend } from '../../dist/state/heap/heap-keyed-state-backend.js';
import { assignToKeyGroup } from '../../dist/state/key-groups.js';

const BATCH = 256;

/**
 * The pipeline's records after map + filter, encoded once, covering each key ~4 times; `groups`
 * holds each batch's key groups (the frame's word carries the batch's index, so the reader finds
 * them as the task finds the key-groups frame).
 */
function encodedPayloads(keys, groups = []) {
  const enc = new ShapeEncoder();
  const payloads = [];
  let i = 0;
  while (payloads.length * BATCH < Math.max(keys * 4, BATCH * 64)) {
    const recs = [];
    while (recs.length < BATCH) {
      const r = { key: `k${i % keys}`, value: i * 2 };
      i++;
      if (r.value % 3 !== 0) recs.push(r);
    }
    payloads.push(enc.encode(recs).slice());
    groups.push(Uint16Array.from(recs, (r) => assignToKeyGroup(r.key, 128)));
  }
  return payloads;
}

/** This thread's on-CPU nanoseconds (schedstat's first field). */
function threadCpuNs(tid) {
  return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
}

if (!isMainThread) {
  // Producer: copy the payloads into the ring in order, parking (Atomics.wait) while it is full;
  // or (co-run) the consumer's own same-hot loop on a private ring, sharing nothing.
  const { sab, keys, mode } = workerData;
  const ring = new RingBuffer(sab);
  const payloads = encodedPayloads(keys);
  const stop = new Int32Array(workerData.stop);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  let b = 0;
  if (mode === 'busy') {
    const dec = new ShapeDecoder();
    const sums = new Map();
    const finals = new Map();
    const visit = (_word, bytes) => {
      const recs = dec.decode(bytes);
      for (let i = 0; i < recs.length; i++) {
        const r = recs[i];
        const next = (sums.get(r.key) ?? 0) + r.value;
        sums.set(r.key, next);
        finals.set(r.key, next);
      }
    };
    while (Atomics.load(stop, 0) === 0) {
      ring.tryWrite(b, payloads[b]);
      b = (b + 1) % payloads.length;
      ring.tryRead(visit);
    }
  } else {
    while (Atomics.load(stop, 0) === 0) {
      if (ring.tryWrite(b, payloads[b]) > 0) b = (b + 1) % payloads.length;
      else if (mode === 'poll') Atomics.wait(nap, 0, 0, 0.02);
      else ring.parkWriterSync(payloads[b].length, 50);
    }
  }
  parentPort.postMessage('done');
} else {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '5' },
      records: { type: 'string', default: '4000000' },
      keys: { type: 'string', default: '10000' },
      'ring-bytes': { type: 'string', default: '65536,262144,1048576,4194304' },
      // decode: the consumer only decodes (no Map work), to see which step pays; weir: weir's
      // heap state path instead of the plain Map.
      work: { type: 'string', default: 'keyed' },
      cases: { type: 'string', default: 'same-hot,same-full,cross,cross-touch,cross-copy,cross-poll,co-run' },
    },
  });
  const keys = Number(values.keys);
  const records = Number(values.records);
  const rings = values['ring-bytes'].split(',').map(Number);
  const cases = values.cases.split(',');
  const groups = [];
  const payloads = encodedPayloads(keys, groups);
  const tid = process.pid; // the main thread's TID

  // The consumer's work per frame; one loop for every case, so they share its feedback.
  const dec = new ShapeDecoder();
  const sums = new Map();
  const finals = new Map();
  let got = 0;
  const decodeOnly = values.work === 'decode';
  // --work weir: keyed-path-weir-case.ts's loop (setCurrentKey with the carried group, the
  // ValueState's value + update, emit { key, sum } to the sink's Map.set) over dist/'s heap backend.
  const backend = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: { start: 0, end: 127 } });
  const store = backend.store;
  const write = (o) => finals.set(o.key, o.sum);
  const visitWeir = (word, bytes) => {
    const g = groups[word];
    const recs = dec.decode(bytes);
    for (let i = 0; i < recs.length; i++) {
      const r = recs[i];
      backend.setCurrentKey(r.key, g[i]);
      const sum = store.value('sum');
      const next = (sum.value() ?? 0) + r.value;
      sum.update(next);
      write({ key: r.key, sum: next });
    }
    got += recs.length;
  };
  const visitPlain = (_word, bytes) => {
    const recs = dec.decode(bytes);
    if (decodeOnly) {
      got += recs.length;
      return;
    }
    for (let i = 0; i < recs.length; i++) {
      const r = recs[i];
      const next = (sums.get(r.key) ?? 0) + r.value;
      sums.set(r.key, next);
      finals.set(r.key, next);
    }
    got += recs.length;
  };
  const visit = values.work === 'weir' ? visitWeir : visitPlain;
  let touched = 0;
  const visitTouch = (word, bytes) => {
    let s = 0;
    for (let i = 0; i < bytes.length; i += 64) s += bytes[i];
    touched += s;
    visit(word, bytes);
  };
  const visitCopy = (word, bytes) => visit(word, bytes.slice());

  async function runCase(kind, ringBytes) {
    const sab = RingBuffer.allocate(ringBytes);
    const ring = new RingBuffer(sab);
    let worker;
    const stop = new Int32Array(new SharedArrayBuffer(4));
    if (kind !== 'same-hot' && kind !== 'same-full') {
      const mode =
        kind === 'cross' || kind === 'cross-touch' || kind === 'cross-copy'
          ? 'park'
          : kind === 'cross-poll'
            ? 'poll'
            : 'busy';
      const wsab = mode === 'busy' ? RingBuffer.allocate(ringBytes) : sab;
      worker = new Worker(new URL(import.meta.url), {
        workerData: { sab: wsab, keys, mode, stop: stop.buffer },
      });
      await new Promise((r) => worker.once('online', r));
    }
    let b = 0;
    const consume = (target) => {
      while (got < target) {
        if (kind === 'same-hot' || kind === 'co-run') {
          ring.tryWrite(b, payloads[b]);
          b = (b + 1) % payloads.length;
          ring.tryRead(visit);
        } else if (kind === 'same-full') {
          while (ring.tryWrite(b, payloads[b]) > 0) b = (b + 1) % payloads.length;
          while (got < target && ring.tryRead(visit) > 0);
        } else if (
          ring.tryRead(kind === 'cross-touch' ? visitTouch : kind === 'cross-copy' ? visitCopy : visit) === 0
        ) {
          // The writer is the one behind (start-up): wait for it without burning this thread.
          Atomics.wait(stop, 0, 0, 0.05);
        }
      }
    };
    got = 0;
    consume(records / 4); // warm-up: JIT, the maps' keys, the writer at full speed
    got = 0;
    const notifies0 = ring.stats.writerNotifies;
    const cpu0 = threadCpuNs(tid);
    const t0 = performance.now();
    consume(records);
    const cpuNs = threadCpuNs(tid) - cpu0;
    const wallMs = performance.now() - t0;
    if (worker) {
      Atomics.store(stop, 0, 1);
      ring.close?.();
      await worker.terminate();
    }
    const notifies = ring.stats.writerNotifies - notifies0;
    return {
      cpuPerRecord: cpuNs / got,
      wallPerRecord: (wallMs * 1e6) / got,
      notifiesPer1k: (notifies * 1000) / got,
    };
  }

  const results = new Map();
  console.log(
    `cross-core ring read: ${records} records per case, ${keys} keys, work ${values.work}, node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}, ${new Date().toISOString()}`,
  );
  const combos = cases.flatMap((c) => rings.map((r) => [c, r]));
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = combos.map((_, i) => combos[(i + round) % combos.length]);
    const line = [];
    for (const [kind, ringBytes] of order) {
      const r = await runCase(kind, ringBytes);
      const key = `${kind} ${ringBytes / 1024} KiB`;
      if (!results.has(key)) results.set(key, []);
      results.get(key).push(r);
      line.push(`${key} ${r.cpuPerRecord.toFixed(1)}`);
    }
    console.log(`round ${round} (load ${os.loadavg()[0].toFixed(1)}): ${line.join(', ')}`);
  }
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
  };
  console.log(
    'case | consumer CPU ns/record, median (min–max) | wall ns/record, median | notifies per 1000 records',
  );
  for (const [key, rs] of results) {
    const cpu = rs.map((r) => r.cpuPerRecord);
    console.log(
      `${key} | ${median(cpu).toFixed(1)} (${Math.min(...cpu).toFixed(1)}–${Math.max(...cpu).toFixed(1)}) | ${median(rs.map((r) => r.wallPerRecord)).toFixed(1)} | ${median(rs.map((r) => r.notifiesPer1k)).toFixed(2)}`,
    );
  }
  // Printed so that the touch loads have a use the JIT cannot drop.
  if (touched !== 0) console.log(`(cross-touch checksum ${touched})`);
  process.exit(0);
}
