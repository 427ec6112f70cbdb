/**
 * Channel throughput benchmark: records/s between the same two worker threads for
 * - ring, batched: ChannelWriter (256 records / frame, the shape codec) + InputGate
 * - ring, batched, msgpack only: the same with the shape codec off (msgpackr, shared structures)
 * - ring, per record: one frame per record (batchRecords 1)
 * - postMessage over a MessageChannel, batched arrays of 256, and one message per record
 * and the single-thread ceilings in the main thread: the same encode/decode/work in one thread,
 * and a plain loop (generate the record, do the work). Modes run in interleaved rounds; the
 * table shows medians. Also times where the cost goes (encode, copy, decode per record) and
 * counts wake-ups (doorbell notifies, parks) of the batched ring run.
 *
 * Run: node --import tsx bench/channels/run.ts [--quick] [--spin MICROS] [--json PATH]
 * (default JSON path: bench/results/channels.json).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { MessageChannel, type TransferListItem, Worker } from 'node:worker_threads';
import { Doorbell } from '../../src/channels/doorbell.js';
import { DEFAULT_SPIN_MICROS } from '../../src/channels/input-gate.js';
import { RecordCodec } from '../../src/channels/record-codec.js';
import { RingBuffer } from '../../src/channels/ring-buffer.js';
import { formatMachineInfo, machineInfo } from '../harness/machine-info.js';
import { commandLine, type SuiteReport } from '../harness/suite-report.js';
import type { BenchCommand, BenchRecord } from './peer.js';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 5;
const N_BATCHED = quick ? 200_000 : 2_000_000;
const N_PER_RECORD = quick ? 50_000 : 300_000;
const RING_BYTES = 1 << 20;
const BATCH = 256;
const spinArg = process.argv.indexOf('--spin');
/** Consumer spin before parking (InputGate option); `--spin N` to compare. */
const SPIN_MICROS = spinArg === -1 ? DEFAULT_SPIN_MICROS : Number(process.argv[spinArg + 1]);
const jsonArg = process.argv.indexOf('--json');
/** `--json PATH` (what `weir bench` passes); default bench/results/channels.json. */
const JSON_PATH =
  jsonArg === -1
    ? new URL('../results/channels.json', import.meta.url)
    : new URL(process.argv[jsonArg + 1], `file://${process.cwd()}/`);

class BenchWorker {
  readonly worker = new Worker(new URL('./peer.mjs', import.meta.url));
  #nextId = 0;
  readonly #failures = new Set<(error: unknown) => void>();
  constructor() {
    this.worker.on('error', (error) => {
      for (const fail of this.#failures) fail(error);
    });
  }
  request(
    command: BenchCommand,
    transfer: readonly TransferListItem[] = [],
  ): Promise<Record<string, number>> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const onMessage = (message: {
        id: number;
        ok: boolean;
        result: Record<string, number>;
        error: string;
      }) => {
        if (message.id !== id) return;
        this.worker.off('message', onMessage);
        this.#failures.delete(reject);
        if (message.ok) resolve(message.result);
        else reject(new Error(message.error));
      };
      this.worker.on('message', onMessage);
      this.#failures.add(reject);
      this.worker.postMessage({ id, command }, [...transfer]);
    });
  }
}

interface Sample {
  readonly recordsPerSec: number;
  readonly extra?: Record<string, number>;
}

type Mode = { readonly name: string; readonly n: number; readonly run: (n: number) => Promise<Sample> };

const producer = new BenchWorker();
const consumer = new BenchWorker();

async function ringRun(n: number, batchRecords: number, shapeBatches = true): Promise<Sample> {
  const ring = RingBuffer.allocate(RING_BYTES);
  const doorbell = Doorbell.allocate();
  const [c, p] = await Promise.all([
    consumer.request({ cmd: 'consume-ring', ring, doorbell, n, spinMicros: SPIN_MICROS }),
    producer.request({ cmd: 'produce-ring', ring, doorbell, n, batchRecords, shapeBatches }),
  ]);
  if (c.count !== n) throw new Error(`consumer got ${c.count} of ${n} records`);
  return { recordsPerSec: n / ((c.end - p.start) / 1000), extra: { ...p, ...c } };
}

async function portRun(n: number, batch: number): Promise<Sample> {
  const { port1, port2 } = new MessageChannel();
  const [c, p] = await Promise.all([
    consumer.request({ cmd: 'consume-port', port: port2, n }, [port2]),
    producer.request({ cmd: 'produce-port', port: port1, n, batch }, [port1]),
  ]);
  if (c.count !== n) throw new Error(`consumer got ${c.count} of ${n} records`);
  return { recordsPerSec: n / ((c.end - p.start) / 1000) };
}

let sink = 0; // keeps the single-thread loops from being optimised away

function singleThreadCodec(n: number): Sample {
  const producerCodec = new RecordCodec();
  const consumerCodec = new RecordCodec();
  const start = performance.now();
  let batch: BenchRecord[] = [];
  let sum = 0;
  for (let i = 0; i < n; i++) {
    batch.push({ key: `k${i % 10000}`, value: i * 2 });
    if (batch.length === BATCH || i === n - 1) {
      const bytes = producerCodec.encodeBatch(batch);
      const update = producerCodec.takeStructureUpdate();
      if (update !== null) consumerCodec.applyStructureUpdate(update);
      const records = consumerCodec.decodeBatch(bytes) as BenchRecord[];
      for (let j = 0; j < records.length; j++) sum += records[j].value;
      batch = [];
    }
  }
  sink += sum;
  return { recordsPerSec: n / ((performance.now() - start) / 1000) };
}

function singleThreadLoop(n: number): Sample {
  const start = performance.now();
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const record: BenchRecord = { key: `k${i % 10000}`, value: i * 2 };
    sum += record.value + record.key.length;
  }
  sink += sum;
  return { recordsPerSec: n / ((performance.now() - start) / 1000) };
}

/** Nanoseconds per record of each stage, measured alone in this thread. */
function costBreakdown(n: number): Record<string, number> {
  const batches: BenchRecord[][] = [];
  for (let i = 0; i < n; i += BATCH) {
    batches.push(
      Array.from({ length: Math.min(BATCH, n - i) }, (_, j) => ({
        key: `k${(i + j) % 10000}`,
        value: (i + j) * 2,
      })),
    );
  }
  const producerCodec = new RecordCodec();
  const consumerCodec = new RecordCodec();
  let t = performance.now();
  const encoded = batches.map((b) => new Uint8Array(producerCodec.encodeBatch(b)));
  const encodeNs = ((performance.now() - t) * 1e6) / n;
  // msgpack alone, for reference (what every batch cost before the shape codec).
  const msgpackProducer = new RecordCodec({ shapeBatches: false });
  const msgpackConsumer = new RecordCodec();
  msgpackProducer.encodeBatch(batches[0]); // the shapes travel once, before the timed loops
  msgpackConsumer.applyStructureUpdate(msgpackProducer.takeStructureUpdate()!);
  t = performance.now();
  const msgpackEncoded = batches.map((b) => new Uint8Array(msgpackProducer.encodeBatch(b)));
  const msgpackEncodeNs = ((performance.now() - t) * 1e6) / n;
  t = performance.now();
  let msgpackSum = 0;
  for (const e of msgpackEncoded) msgpackSum += (msgpackConsumer.decodeBatch(e) as BenchRecord[]).length;
  const msgpackDecodeNs = ((performance.now() - t) * 1e6) / n;

  const sab = RingBuffer.allocate(RING_BYTES);
  const writer = new RingBuffer(sab);
  const reader = new RingBuffer(sab);
  let bytes = 0;
  const visit = (_word: number, payload: Uint8Array) => {
    bytes += payload.length;
  };
  t = performance.now();
  for (const e of encoded) {
    writer.tryWrite(1, e);
    reader.tryRead(visit);
  }
  const copyNs = ((performance.now() - t) * 1e6) / n;

  t = performance.now();
  let sum = 0;
  for (const e of encoded) sum += (consumerCodec.decodeBatch(e) as BenchRecord[]).length;
  const decodeNs = ((performance.now() - t) * 1e6) / n;

  // Both codecs on other record forms: event-time envelopes [timestamp, record] (what
  // timestamped edges carry) and a record with a nested object.
  const codecCost = (input: readonly unknown[][], shapeBatches: boolean) => {
    const p = new RecordCodec({ shapeBatches });
    const c = new RecordCodec();
    p.encodeBatch(input[0]);
    const update = p.takeStructureUpdate();
    if (update !== null) c.applyStructureUpdate(new Uint8Array(update));
    let t0 = performance.now();
    const enc = input.map((b) => new Uint8Array(p.encodeBatch(b)));
    const encodeNsPerRecord = ((performance.now() - t0) * 1e6) / n;
    t0 = performance.now();
    for (const e of enc) sum += c.decodeBatch(e).length;
    return { encodeNsPerRecord, decodeNsPerRecord: ((performance.now() - t0) * 1e6) / n };
  };
  const envelopes = batches.map((b) => b.map((r, j) => [1_700_000_000_000 + j, r]));
  const envelopeShape = codecCost(envelopes, true);
  const envelopeMsgpack = codecCost(envelopes, false);
  const nestedRecords = batches.map((b) =>
    b.map((r) => ({ id: r.value, user: { name: r.key, age: r.value % 90 }, page: '/home' })),
  );
  const nestedShape = codecCost(nestedRecords, true);
  const nestedMsgpack = codecCost(nestedRecords, false);

  t = performance.now();
  for (const b of batches) sum += (structuredClone(b) as BenchRecord[]).length;
  const structuredCloneNs = ((performance.now() - t) * 1e6) / n;
  sink += sum + bytes + msgpackSum;
  return {
    encodeNsPerRecord: encodeNs,
    copyNsPerRecord: copyNs,
    decodeNsPerRecord: decodeNs,
    structuredCloneNsPerRecord: structuredCloneNs,
    encodedBytesPerRecord: encoded.reduce((s, e) => s + e.length, 0) / n,
    msgpackEncodeNsPerRecord: msgpackEncodeNs,
    msgpackDecodeNsPerRecord: msgpackDecodeNs,
    msgpackBytesPerRecord: msgpackEncoded.reduce((s, e) => s + e.length, 0) / n,
    envelopeEncodeNsPerRecord: envelopeShape.encodeNsPerRecord,
    envelopeDecodeNsPerRecord: envelopeShape.decodeNsPerRecord,
    envelopeMsgpackEncodeNsPerRecord: envelopeMsgpack.encodeNsPerRecord,
    envelopeMsgpackDecodeNsPerRecord: envelopeMsgpack.decodeNsPerRecord,
    nestedEncodeNsPerRecord: nestedShape.encodeNsPerRecord,
    nestedDecodeNsPerRecord: nestedShape.decodeNsPerRecord,
    nestedMsgpackEncodeNsPerRecord: nestedMsgpack.encodeNsPerRecord,
    nestedMsgpackDecodeNsPerRecord: nestedMsgpack.decodeNsPerRecord,
  };
}

const modes: Mode[] = [
  { name: 'ring, batched (256, shape codec)', n: N_BATCHED, run: (n) => ringRun(n, BATCH) },
  {
    name: 'ring, batched (256, msgpack only)',
    n: N_BATCHED,
    run: (n) => ringRun(n, BATCH, false),
  },
  { name: 'ring, per record', n: N_PER_RECORD, run: (n) => ringRun(n, 1) },
  { name: 'postMessage, batched (256)', n: N_BATCHED, run: (n) => portRun(n, BATCH) },
  { name: 'postMessage, per record', n: N_PER_RECORD, run: (n) => portRun(n, 1) },
  { name: 'single thread: encode+decode+work', n: N_BATCHED, run: async (n) => singleThreadCodec(n) },
  { name: 'single thread: plain loop', n: N_BATCHED, run: async (n) => singleThreadLoop(n) },
];

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main(): Promise<void> {
  // Warm-up: every mode once, small, so JIT and worker start-up are out of the rounds.
  for (const mode of modes) await mode.run(Math.min(mode.n, 20_000));
  const samples = new Map<string, Sample[]>(modes.map((m) => [m.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved, and rotated so no mode always runs first.
    for (let k = 0; k < modes.length; k++) {
      const mode = modes[(k + round) % modes.length];
      samples.get(mode.name)!.push(await mode.run(mode.n));
    }
  }
  const results = modes.map((mode) => {
    const s = samples.get(mode.name)!;
    return {
      mode: mode.name,
      records: mode.n,
      recordsPerSecMedian: median(s.map((x) => x.recordsPerSec)),
      recordsPerSecAll: s.map((x) => Math.round(x.recordsPerSec)),
    };
  });
  const byName = new Map(results.map((r) => [r.mode, r.recordsPerSecMedian]));
  const ringBatched = byName.get(modes[0].name)!;
  const portBatched = byName.get(modes[3].name)!;
  const lastRing = samples.get(modes[0].name)!.at(-1)!.extra!;
  const wakeups = {
    records: N_BATCHED,
    frames: lastRing.frames,
    doorbellRings: lastRing.doorbellRings,
    doorbellNotifies: lastRing.doorbellNotifies,
    consumerParks: lastRing.consumerParks,
    writerParks: lastRing.writerParks,
    writerNotifies: lastRing.writerNotifies,
  };
  costBreakdown(N_BATCHED); // warm-up
  const costs = costBreakdown(N_BATCHED);

  console.log(`\nchannels benchmark (${quick ? 'quick' : 'full'}, ${ROUNDS} interleaved rounds, medians)`);
  console.log(
    `${os.cpus()[0]?.model ?? 'unknown cpu'}, ${os.cpus().length} cores, node ${process.version}\n`,
  );
  console.table(
    results.map((r) => ({
      mode: r.mode,
      'records/s': Math.round(r.recordsPerSecMedian).toLocaleString('en-US'),
      'vs postMessage batched': `${(r.recordsPerSecMedian / portBatched).toFixed(2)}x`,
    })),
  );
  console.log(`batched ring / batched postMessage: ${(ringBatched / portBatched).toFixed(2)}x (goal >= 3x)`);
  console.log('\nwhere the time goes (ns per record, one thread, batches of 256):');
  console.table(Object.fromEntries(Object.entries(costs).map(([k, v]) => [k, Number(v.toFixed(1))])));
  console.log('wake-ups in the last batched ring run:');
  console.table(wakeups);

  const report = {
    benchmark: 'channels',
    command: `node --import tsx bench/channels/run.ts${quick ? ' --quick' : ''}`,
    date: new Date().toISOString(),
    machine: {
      cpu: os.cpus()[0]?.model ?? 'unknown',
      cores: os.cpus().length,
      node: process.version,
      os: `${os.type()} ${os.release()} ${os.arch()}`,
    },
    config: {
      rounds: ROUNDS,
      ringBytes: RING_BYTES,
      batch: BATCH,
      spinMicros: SPIN_MICROS,
      recordShape: "{ key: 'k' + (i % 10000), value: i * 2 }",
    },
    results,
    ratioBatchedRingToBatchedPostMessage: ringBatched / portBatched,
    costNsPerRecord: costs,
    wakeups,
    sink: sink % 7,
  };
  const rows = results.map((r) => ({
    mode: r.mode,
    'records/s (median)': Math.round(r.recordsPerSecMedian).toLocaleString('en-US'),
    'vs postMessage batched': `${(r.recordsPerSecMedian / portBatched).toFixed(2)}×`,
  }));
  const suiteReport: SuiteReport = {
    suite: 'channels',
    title: 'channels: records/s between two worker threads',
    command: commandLine('bench/channels/run.ts'),
    machine: formatMachineInfo(machineInfo()),
    notes: [
      `${ROUNDS} interleaved rounds, medians; batched ring / batched postMessage ${(ringBatched / portBatched).toFixed(2)}× (goal ≥ 3×).`,
    ],
    tables: [{ title: 'records/s by mode', rows }],
    charts: [
      {
        title: 'records/s relative to postMessage, batched (256)',
        unit: '×',
        bars: results.map((r) => ({ label: r.mode, value: r.recordsPerSecMedian / portBatched })),
        reference: { value: 1, label: 'postMessage batched' },
      },
    ],
  };
  mkdirSync(new URL('.', JSON_PATH), { recursive: true });
  writeFileSync(JSON_PATH, `${JSON.stringify({ ...report, report: suiteReport }, null, 2)}\n`);
  console.log(`\nwrote ${JSON_PATH.pathname}`);
  await Promise.all([producer.worker.terminate(), consumer.worker.terminate()]);
}

await main();
