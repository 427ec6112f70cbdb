/**
 * Embedded-log ingest benchmark: durable appends/s and records/s of `topic.append` with group
 * commit, for 1, 8, 64 and 512 concurrent single-record appenders (each awaits its append, then
 * appends again: a service appending one event per request) and for 256-record batches, with
 * `durability: 'fsync'` and `'os'`; p50/p99 append latency. Beside it, in the same run on the
 * same machine, the same single-record load against NATS JetStream (file storage,
 * 127.0.0.1:4222) and Redis XADD (127.0.0.1:6379), each skipped with a printed reason when not
 * reachable. Cases run in interleaved rounds (default 2); the table shows the best and the worst
 * round, so the spread under a loaded machine is visible, and the CPU time this process spent
 * per record (every thread; for the brokers only the client's side), which depends far less on
 * what else the machine runs than the rates do.
 *
 * Multi-thread cases: the same single-record appenders spread over `--threads` worker threads
 * (default 4), each thread with its own handle, once with the main thread holding a handle on the
 * directory too (its handle commits every thread's appends: `src/log/thread-relay.ts`) and once
 * without (then the first worker thread's handle is elected committer for the others). Thread start-up is excluded (they start on a message once all are ready).
 *
 * Run: node --import tsx bench/log/run.ts [--quick] [--rounds N] [--seconds S] [--threads N]
 * [--only REGEX] [--linger-ms N] [--thread-durability fsync|os|both] [--json PATH] (default JSON path: bench/results/log.json; `--only` keeps the cases
 * whose "system load appenders" matches). `weir bench --suite log` runs it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { type Durability, openLog } from '../../src/log/index.js';
import { formatMachineInfo, machineInfo } from '../harness/machine-info.js';
import { printTable, type TableRow } from '../harness/print-table.js';
import { commandLine, type SuiteReport } from '../harness/suite-report.js';
import { resultsPath, writeJson } from '../harness/write-json.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const arg = (flag: string): string | undefined => {
  const i = argv.indexOf(flag);
  return i === -1 ? undefined : argv[i + 1];
};
const ROUNDS = Number(arg('--rounds') ?? (quick ? 1 : 2));
const SECONDS = Number(arg('--seconds') ?? (quick ? 0.4 : 2));
const JSON_PATH = arg('--json') ?? resultsPath(quick ? 'log-quick.json' : 'log.json');
const THREADS = Number(arg('--threads') ?? 4);
/** Durabilities of the multi-thread cases (`--thread-durability fsync|os|both`, default fsync). */
const THREAD_DURABILITIES: Durability[] =
  arg('--thread-durability') === 'both'
    ? ['fsync', 'os']
    : [(arg('--thread-durability') as Durability | undefined) ?? 'fsync'];
/** `openLog({ lingerMs })` of the single-thread weir cases (default: the log's default, 0). */
const LINGER_MS = arg('--linger-ms') === undefined ? undefined : Number(arg('--linger-ms'));
const ONLY = arg('--only') === undefined ? undefined : new RegExp(arg('--only') as string);
const THREAD_CONCURRENCY = [64, 512];
const CONCURRENCY = [1, 8, 64, 512];
const BATCH = 256;
const BATCH_CONCURRENCY = [1, 8];
const PARTITIONS = 4;

/** A click-like event, ~90 bytes as msgpack / JSON. */
function event(appender: number, seq: number) {
  return {
    user: `u${appender}`,
    page: `/product/${seq % 1000}`,
    action: 'click',
    seq,
    ts: 1_760_000_000_000 + seq,
  };
}

interface Outcome {
  readonly appends: number;
  readonly records: number;
  readonly seconds: number;
  /** Sorted append latencies, ms. */
  readonly latencies: Float64Array;
  /** CPU time of this process (every thread, lmdb-js's write thread included), µs. */
  readonly cpuMicros: number;
}

type Appender = (appender: number, seq: number) => Promise<unknown>;

/** `concurrency` closed-loop appenders for `SECONDS`: each awaits its append, then appends again. */
async function closedLoop(concurrency: number, recordsPerAppend: number, append: Appender): Promise<Outcome> {
  const latencies: number[] = [];
  let appends = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const end = start + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, a) => {
      for (let seq = 0; performance.now() < end; seq++) {
        const t = performance.now();
        await append(a, seq);
        latencies.push(performance.now() - t);
        appends++;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const sorted = Float64Array.from(latencies).sort();
  return {
    appends,
    records: appends * recordsPerAppend,
    seconds,
    latencies: sorted,
    cpuMicros: used.user + used.system,
  };
}

interface Case {
  readonly system: string;
  readonly load: string;
  readonly concurrency: number;
  readonly recordsPerAppend: number;
  /** Sets up, runs one round, tears down. */
  readonly run: () => Promise<Outcome>;
}

function weirCase(durability: Durability, concurrency: number, recordsPerAppend: number): Case {
  return {
    system: `weir log (${durability})`,
    load: recordsPerAppend === 1 ? 'single-record' : `${recordsPerAppend}-record batches`,
    concurrency,
    recordsPerAppend,
    async run() {
      const base = mkdtempSync(path.join(os.tmpdir(), 'weir-bench-log-'));
      const log = openLog(
        path.join(base, 'log'),
        LINGER_MS === undefined ? { durability } : { durability, lingerMs: LINGER_MS },
      );
      try {
        const topic = log.topic('clicks', { partitions: PARTITIONS });
        const batches = new Map<number, unknown[]>();
        return await closedLoop(concurrency, recordsPerAppend, (a, seq) => {
          if (recordsPerAppend === 1) return topic.append([event(a, seq)], { key: a });
          let batch = batches.get(a);
          if (batch === undefined) {
            batch = Array.from({ length: recordsPerAppend }, (_, i) => event(a, i));
            batches.set(a, batch);
          }
          return topic.append(batch, { key: a });
        });
      } finally {
        await log.close();
        rmSync(base, { recursive: true, force: true });
      }
    },
  };
}

/**
 * `concurrency` single-record appenders spread over THREADS worker threads (`thread-appender.ts`);
 * with `mainHandle`, the main thread keeps a handle open on the directory meanwhile and so commits
 * every thread's appends.
 */
function threadCase(durability: Durability, concurrency: number, mainHandle: boolean): Case {
  return {
    system: `weir log (${durability}), ${THREADS} threads, ${mainHandle ? 'main-thread committer' : 'no main handle'}`,
    load: 'single-record',
    concurrency,
    recordsPerAppend: 1,
    async run() {
      const base = mkdtempSync(path.join(os.tmpdir(), 'weir-bench-log-'));
      const dir = path.join(base, 'log');
      const log = openLog(dir, { durability });
      log.topic('clicks', { partitions: PARTITIONS });
      if (!mainHandle) await log.close();
      const per = Math.ceil(concurrency / THREADS);
      const workers: Worker[] = [];
      try {
        const ready: Promise<void>[] = [];
        const done: Promise<Float64Array>[] = [];
        for (let t = 0; t < THREADS; t++) {
          const worker = new Worker(new URL('./thread-appender.mjs', import.meta.url), {
            workerData: { dir, durability, concurrency: per, firstAppender: t * per, seconds: SECONDS },
          });
          workers.push(worker);
          ready.push(
            new Promise((resolve, reject) => {
              worker.on('error', reject);
              worker.on('message', (m: { kind: string }) => m.kind === 'ready' && resolve());
            }),
          );
          done.push(
            new Promise((resolve, reject) => {
              worker.on('error', reject);
              worker.on(
                'message',
                (m: { kind: string; latencies: Float64Array }) => m.kind === 'done' && resolve(m.latencies),
              );
            }),
          );
        }
        await Promise.all(ready);
        const cpu = process.cpuUsage();
        const start = performance.now();
        for (const worker of workers) worker.postMessage('start');
        const all = await Promise.all(done);
        const seconds = (performance.now() - start) / 1000;
        const used = process.cpuUsage(cpu);
        const latencies = Float64Array.from(all.flatMap((l) => [...l])).sort();
        return {
          appends: latencies.length,
          records: latencies.length,
          seconds,
          latencies,
          cpuMicros: used.user + used.system,
        };
      } finally {
        await Promise.all(workers.map((w) => w.terminate()));
        await log.close();
        rmSync(base, { recursive: true, force: true });
      }
    },
  };
}

function reachable(port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (reason: string | null) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(1000, () => done(`127.0.0.1:${port} did not answer within 1 s`));
    socket.once('connect', () => done(null));
    socket.once('error', (e) => done(`127.0.0.1:${port}: ${e.message}`));
  });
}

async function natsCases(): Promise<{ cases: Case[]; skipped?: string }> {
  const down = await reachable(4222);
  if (down !== null) return { cases: [], skipped: `NATS JetStream skipped: ${down}` };
  const { connect } = await import('@nats-io/transport-node');
  const { jetstream, jetstreamManager } = await import('@nats-io/jetstream');
  return {
    cases: CONCURRENCY.map((concurrency) => ({
      system: 'NATS JetStream (file)',
      load: 'single-record',
      concurrency,
      recordsPerAppend: 1,
      async run() {
        const nc = await connect({ servers: '127.0.0.1:4222' });
        const stream = `weir_bench_log_${process.pid}_${concurrency}`;
        try {
          const jsm = await jetstreamManager(nc);
          await jsm.streams.add({ name: stream, subjects: [`${stream}.>`], storage: 'file' as never });
          const js = jetstream(nc);
          const enc = new TextEncoder();
          try {
            return await closedLoop(concurrency, 1, (a, seq) =>
              js.publish(`${stream}.${a % PARTITIONS}`, enc.encode(JSON.stringify(event(a, seq)))),
            );
          } finally {
            await jsm.streams.delete(stream);
          }
        } finally {
          await nc.close();
        }
      },
    })),
  };
}

async function redisCases(): Promise<{ cases: Case[]; skipped?: string }> {
  const down = await reachable(6379);
  if (down !== null) return { cases: [], skipped: `Redis skipped: ${down}` };
  const { Redis } = await import('ioredis');
  return {
    cases: CONCURRENCY.map((concurrency) => ({
      system: 'Redis XADD',
      load: 'single-record',
      concurrency,
      recordsPerAppend: 1,
      async run() {
        const redis = new Redis({
          host: '127.0.0.1',
          port: 6379,
          lazyConnect: true,
          maxRetriesPerRequest: 1,
        });
        await redis.connect();
        const key = `weir-bench-log-${process.pid}-${concurrency}`;
        try {
          return await closedLoop(concurrency, 1, (a, seq) =>
            redis.xadd(`${key}-${a % PARTITIONS}`, '*', 'e', JSON.stringify(event(a, seq))),
          );
        } finally {
          await redis.del(...Array.from({ length: PARTITIONS }, (_, p) => `${key}-${p}`));
          redis.disconnect();
        }
      },
    })),
  };
}

const pct = (sorted: Float64Array, q: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
const rate = (n: number) =>
  n >= 1e6 ? `${(n / 1e6).toFixed(2)} M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} k` : n.toFixed(0);
const spread = (values: number[]) => {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return values.length === 1 ? rate(lo) : `${rate(hi)} (${rate(lo)})`;
};

async function main(): Promise<void> {
  const machine = formatMachineInfo(machineInfo());
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  console.log(
    `log ingest bench — ${machine}\nload average at start: ${load}; ${ROUNDS} round(s) of ${SECONDS} s per case\n`,
  );
  const notes: string[] = [`load average at start: ${load}`];
  const cases: Case[] = [];
  for (const durability of ['fsync', 'os'] as const) {
    for (const c of CONCURRENCY) cases.push(weirCase(durability, c, 1));
    for (const c of BATCH_CONCURRENCY) cases.push(weirCase(durability, c, BATCH));
  }
  for (const c of THREAD_CONCURRENCY) {
    for (const d of THREAD_DURABILITIES) {
      for (const mainHandle of [true, false]) cases.push(threadCase(d, c, mainHandle));
    }
  }
  for (const brokers of [await natsCases(), await redisCases()]) {
    cases.push(...brokers.cases);
    if (brokers.skipped) {
      console.log(brokers.skipped);
      notes.push(brokers.skipped);
    }
  }
  if (ONLY !== undefined) {
    const kept = cases.filter((c) => ONLY.test(`${c.system} ${c.load} ${c.concurrency}`));
    cases.splice(0, cases.length, ...kept);
  }
  const results = cases.map(() => [] as Outcome[]);
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < cases.length; i++) {
      try {
        results[i].push(await cases[i].run());
      } catch (error) {
        const reason = `${cases[i].system} × ${cases[i].concurrency} failed: ${(error as Error).message}`;
        console.log(reason);
        notes.push(reason);
      }
    }
  }
  const rows: TableRow[] = [];
  const json = [];
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i];
    const rs = results[i];
    if (rs.length === 0) continue;
    const appendsPerSec = rs.map((r) => r.appends / r.seconds);
    const recordsPerSec = rs.map((r) => r.records / r.seconds);
    // Latency of the best round by throughput (p50 / p99 of every append in it).
    const best = rs[appendsPerSec.indexOf(Math.max(...appendsPerSec))];
    rows.push({
      system: c.system,
      load: c.load,
      appenders: c.concurrency,
      'appends/s best (worst)': spread(appendsPerSec),
      'records/s best (worst)': spread(recordsPerSec),
      'p50 ms': pct(best.latencies, 0.5).toFixed(2),
      'p99 ms': pct(best.latencies, 0.99).toFixed(2),
      // Load-independent: what a record costs this process (the broker's own CPU not included).
      'client CPU µs/record': (best.cpuMicros / best.records).toFixed(1),
    });
    json.push({
      system: c.system,
      load: c.load,
      concurrency: c.concurrency,
      recordsPerAppend: c.recordsPerAppend,
      rounds: rs.map((r) => ({
        appendsPerSec: r.appends / r.seconds,
        recordsPerSec: r.records / r.seconds,
        p50Ms: pct(r.latencies, 0.5),
        p99Ms: pct(r.latencies, 0.99),
        cpuMicrosPerRecord: r.cpuMicros / r.records,
      })),
    });
  }
  printTable(rows);
  const loadEnd = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  console.log(`\nload average at end: ${loadEnd}`);
  notes.push(`load average at end: ${loadEnd}`);
  const report: SuiteReport = {
    suite: 'log',
    title: 'Embedded log ingest: group commit vs NATS JetStream and Redis',
    command: commandLine('bench/log/run.ts'),
    machine,
    notes,
    tables: [{ title: 'appends (best and worst round)', rows }],
    charts: [],
  };
  writeJson(JSON_PATH, { machine, rounds: ROUNDS, seconds: SECONDS, cases: json, report });
  console.log(`wrote ${JSON_PATH}`);
}

await main();
