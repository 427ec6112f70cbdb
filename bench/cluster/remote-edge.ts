/**
 * Remote-edge throughput: records/s through ONE remote edge (RemoteEdgeSender → core NATS →
 * RemoteEdgeReceiver) between two processes on this machine, small records
 * (`{ key: 'k123', value: i }`, the shape codec's path), default window and batching.
 *
 * Per round: the consumer process (this file with `--consumer`, forked) subscribes; the producer
 * (this process) writes N records as a task would (waiting when backlogged), then `finish()`,
 * which resolves when the consumer has received everything. Throughput = N / (first write →
 * finish). CPU per record = (producer + consumer process CPU over the round) / N — the hop's
 * full cost on this machine, NATS client work included (the server's CPU is not counted).
 * Baseline in the same run, interleaved: the same records through RecordCodec encode + decode in
 * one thread (what any channel pays), so "hop minus codec" is what the network path adds.
 *
 * Run: node --import tsx bench/cluster/remote-edge.ts [--n 2000000] [--rounds 3] [--json PATH]
 * (default JSON path: bench/results/remote-edge.json). Needs NATS on 127.0.0.1:4222 (NATS_URL).
 */
import { fork } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { RecordCodec } from '../../src/channels/record-codec.js';
import { RemoteEdgeReceiver } from '../../src/cluster/remote-edge-receiver.js';
import { RemoteEdgeSender } from '../../src/cluster/remote-edge-sender.js';
import { formatMachineInfo, machineInfo } from '../harness/machine-info.js';

const SERVERS = process.env.NATS_URL ?? '127.0.0.1:4222';
function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
}
const N = Number(arg('--n', '2000000'));
const ROUNDS = Number(arg('--rounds', '3'));
const JSON_PATH = arg('--json', fileURLToPath(new URL('../results/remote-edge.json', import.meta.url)));

/**
 * The local NATS server's CPU so far (µs, from /proc; null when it is not on this machine). It
 * serves every other client on the machine too, so its share per record is an upper bound.
 */
function natsServerCpuMicros(): number | null {
  try {
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      let comm: string;
      try {
        comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        continue; // the process exited while we listed /proc
      }
      if (comm !== 'nats-server') continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      // utime and stime are fields 14 and 15 of stat; index 11 and 12 after the `comm)` split.
      return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // USER_HZ is 100 on Linux
    }
  } catch {
    return null; // no /proc: not Linux
  }
  return null;
}

function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Consumer process: reads one flow to its end, reports its CPU over the round. */
async function consumer(flow: string): Promise<void> {
  const nc = await connect({ servers: SERVERS });
  const receiver = new RemoteEdgeReceiver({ connection: nc, flow });
  const cpu0 = cpuMicros();
  await receiver.start();
  process.send?.({ ready: true });
  let records = 0;
  let checksum = 0;
  for (;;) {
    const frame = receiver.tryRead();
    if (frame === null) {
      await receiver.waitForFrame();
      continue;
    }
    if (frame.kind === 'records') {
      records += frame.records.length;
      for (const r of frame.records) checksum += (r as { value: number }).value;
    } else if (frame.kind === 'end-of-partition') break;
  }
  const cpu = cpuMicros() - cpu0;
  receiver.close();
  await nc.close();
  process.send?.({ records, checksum, cpuMicros: cpu, stats: receiver.stats });
}

interface RoundResult {
  readonly recordsPerSecond: number;
  readonly cpuNsPerRecord: number;
  readonly producerCpuNsPerRecord: number;
  readonly consumerCpuNsPerRecord: number;
  /** The NATS server's CPU over the round per record (upper bound: it serves others too). */
  readonly serverCpuNsPerRecord: number;
}

async function remoteRound(round: number): Promise<RoundResult> {
  const flow = `bench-${process.pid}-${round}`;
  const child = fork(fileURLToPath(import.meta.url), ['--consumer', flow], { execArgv: ['--import', 'tsx'] });
  const messages: Record<string, unknown>[] = [];
  let notify: () => void = () => {};
  child.on('message', (m) => {
    messages.push(m as Record<string, unknown>);
    notify();
  });
  const next = async (): Promise<Record<string, unknown>> => {
    while (messages.length === 0) await new Promise<void>((r) => (notify = r));
    return messages.shift()!;
  };
  await next(); // ready
  const nc = await connect({ servers: SERVERS });
  const sender = new RemoteEdgeSender({ connection: nc, flow });
  sender.start();
  const server0 = natsServerCpuMicros();
  const cpu0 = cpuMicros();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    sender.write({ key: `k${i % 1000}`, value: i });
    if (sender.backlogged) await sender.waitForCapacity();
  }
  await sender.finish();
  const ms = performance.now() - t0;
  const producerCpu = cpuMicros() - cpu0;
  const server1 = natsServerCpuMicros();
  const result = await next();
  sender.close();
  await nc.close();
  const expected = (N * (N - 1)) / 2;
  if (result.records !== N || result.checksum !== expected) {
    throw new Error(
      `consumer saw ${String(result.records)} records (checksum ${String(result.checksum)}), expected ${N}`,
    );
  }
  const consumerCpu = result.cpuMicros as number;
  return {
    recordsPerSecond: (N / ms) * 1000,
    cpuNsPerRecord: ((producerCpu + consumerCpu) * 1000) / N,
    producerCpuNsPerRecord: (producerCpu * 1000) / N,
    consumerCpuNsPerRecord: (consumerCpu * 1000) / N,
    serverCpuNsPerRecord:
      server0 === null || server1 === null ? Number.NaN : ((server1 - server0) * 1000) / N,
  };
}

/** Baseline: encode + decode the same batches in one thread. */
function codecRound(): RoundResult {
  const producer = new RecordCodec();
  const consumerCodec = new RecordCodec();
  const cpu0 = cpuMicros();
  const t0 = performance.now();
  let checksum = 0;
  const batch: unknown[] = [];
  for (let i = 0; i < N; i++) {
    batch.push({ key: `k${i % 1000}`, value: i });
    if (batch.length === 256 || i === N - 1) {
      const bytes = producer.encodeBatch(batch);
      const structures = producer.takeStructureUpdate();
      if (structures !== null) consumerCodec.applyStructureUpdate(structures);
      for (const r of consumerCodec.decodeBatch(bytes)) checksum += (r as { value: number }).value;
      batch.length = 0;
    }
  }
  const ms = performance.now() - t0;
  if (checksum !== (N * (N - 1)) / 2) throw new Error('codec baseline checksum');
  const cpu = cpuMicros() - cpu0;
  return {
    recordsPerSecond: (N / ms) * 1000,
    cpuNsPerRecord: (cpu * 1000) / N,
    producerCpuNsPerRecord: Number.NaN,
    consumerCpuNsPerRecord: Number.NaN,
    serverCpuNsPerRecord: Number.NaN,
  };
}

if (process.argv.includes('--consumer')) {
  await consumer(arg('--consumer', ''));
} else {
  const machine = machineInfo();
  const loadBefore = os.loadavg();
  const remote: RoundResult[] = [];
  const codec: RoundResult[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    codec.push(codecRound());
    remote.push(await remoteRound(r));
  }
  const loadAfter = os.loadavg();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const row = (name: string, rs: RoundResult[]) => ({
    mode: name,
    recordsPerSecond: Math.round(median(rs.map((r) => r.recordsPerSecond))),
    cpuNsPerRecord: Math.round(median(rs.map((r) => r.cpuNsPerRecord))),
    producerCpuNsPerRecord: Math.round(median(rs.map((r) => r.producerCpuNsPerRecord))),
    consumerCpuNsPerRecord: Math.round(median(rs.map((r) => r.consumerCpuNsPerRecord))),
    serverCpuNsPerRecord: Math.round(median(rs.map((r) => r.serverCpuNsPerRecord))),
    rounds: rs.map((r) => Math.round(r.recordsPerSecond)),
  });
  const rows = [row('remote edge, 2 processes', remote), row('codec only, 1 thread', codec)];
  console.log(formatMachineInfo(machine));
  console.log(
    `${new Date().toISOString()} · N = ${N} records × ${ROUNDS} rounds · load ${loadBefore.map((l) => l.toFixed(1)).join(' ')} → ${loadAfter.map((l) => l.toFixed(1)).join(' ')}`,
  );
  console.log(
    'mode                        records/s   CPU ns/record (producer + consumer; NATS server)   rounds',
  );
  for (const r of rows) {
    console.log(
      `${r.mode.padEnd(26)} ${String(r.recordsPerSecond).padStart(10)}   ${String(r.cpuNsPerRecord).padStart(6)} (${Number.isNaN(r.producerCpuNsPerRecord) ? '-' : `${r.producerCpuNsPerRecord} + ${r.consumerCpuNsPerRecord}; ${r.serverCpuNsPerRecord}`})   ${r.rounds.join(', ')}`,
    );
  }
  const hop = rows[0].cpuNsPerRecord - rows[1].cpuNsPerRecord;
  console.log(`remote hop minus codec: ${hop} ns CPU per record`);
  mkdirSync(new URL('.', `file://${JSON_PATH}`), { recursive: true });
  writeFileSync(
    JSON_PATH,
    `${JSON.stringify({ machine, n: N, rounds: ROUNDS, loadBefore, loadAfter, rows, hopMinusCodecNs: hop }, null, 2)}\n`,
  );
}
