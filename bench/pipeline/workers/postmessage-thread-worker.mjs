// Plain-JavaScript twin of source-worker.ts / sum-worker.ts (the worker_threads postMessage
// baseline), for bench/pipeline/thread-cpu-postmessage.mjs: the same records, batches of 256,
// credits (16 in flight per channel, an ack every 4 batches) and hash partition (FNV-1a), with the
// cpu-heavy map copied from bench/jobs/keyed-sum-job.mjs, loaded without tsx. Role `floor`: a source
// without sum workers (`partitions` virtual partitions, full batches dropped, nothing posted): the
// map + filter + partition + batching cost alone, what every design's source thread must pay.
import { createHash } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

function fnv1a(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function cpuHeavyRecord(i) {
  const line = JSON.stringify({
    user: `u${i % 10_000}`,
    page: `/p/${i % 97}`,
    value: i * 2,
    agent: 'Mozilla/5.0 (X11; Linux x86_64) weir-bench',
  });
  const event = JSON.parse(line);
  return { key: createHash('sha1').update(event.user).digest('hex').slice(0, 12), value: event.value };
}
const cheapRecord = (i) => ({ key: `k${i % 10_000}`, value: i * 2 });

function runSource(data) {
  const floor = data.role === 'floor';
  const ports = data.ports;
  const partitions = floor ? data.partitions : ports.length;
  const credits = ports.map(() => data.maxInFlight);
  let wake;
  let parks = 0;
  ports.forEach((port, partition) => {
    port.on('message', (ack) => {
      credits[partition] += ack;
      const resume = wake;
      wake = undefined;
      resume?.();
    });
  });
  async function send(partition, message) {
    while (credits[partition] === 0) {
      parks++;
      await new Promise((resolve) => (wake = resolve));
    }
    credits[partition]--;
    ports[partition].postMessage(message);
  }
  async function produce() {
    const toRecord = data.workload === 'cpu-heavy' ? cpuHeavyRecord : cheapRecord;
    const batches = Array.from({ length: partitions }, () => []);
    const sent = Array.from({ length: partitions }, () => 0);
    for (let i = data.from; i < data.to; i++) {
      const record = toRecord(i);
      if (record.value % 3 === 0) continue;
      const partition = partitions === 1 ? 0 : fnv1a(record.key) % partitions;
      const batch = batches[partition];
      batch.push(record);
      if (batch.length === data.batchSize) {
        sent[partition] += batch.length;
        if (floor) batches[partition] = [];
        else if (credits[partition] === 0) await send(partition, { kind: 'batch', records: batch });
        else {
          credits[partition]--;
          ports[partition].postMessage({ kind: 'batch', records: batch });
        }
        batches[partition] = [];
      }
    }
    for (let p = 0; p < partitions && !floor; p++) {
      sent[p] += batches[p].length;
      if (batches[p].length > 0) await send(p, { kind: 'batch', records: batches[p] });
      ports[p].postMessage({ kind: 'end' });
    }
    parentPort.postMessage({ kind: 'source-done', parks, sent });
  }
  parentPort.on('message', (message) => {
    if (message.kind === 'start') produce();
  });
}

function runSum(data) {
  const sums = new Map();
  const finals = new Map();
  let emitted = 0;
  let open = data.ports.length;
  for (const port of data.ports) {
    let unacked = 0;
    port.on('message', (message) => {
      if (message.kind === 'batch') {
        for (const record of message.records) {
          const sum = (sums.get(record.key) ?? 0) + record.value;
          sums.set(record.key, sum);
          const out = { key: record.key, sum };
          emitted++;
          finals.set(out.key, out.sum);
        }
        if (++unacked === data.ackEvery) {
          port.postMessage(unacked);
          unacked = 0;
        }
        return;
      }
      port.close();
      if (--open === 0) {
        let total = 0;
        for (const v of finals.values()) total += v;
        parentPort.postMessage({ kind: 'digest', keys: finals.size, emitted, total });
      }
    });
  }
}

// The OS thread id (for the /proc per-thread figures): /proc/thread-self → "PID/task/TID".
const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
if (workerData.role === 'source' || workerData.role === 'floor') runSource(workerData);
else runSum(workerData);
parentPort.postMessage({ kind: 'ready', tid });
