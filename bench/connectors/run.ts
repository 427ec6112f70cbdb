/**
 * Connectors benchmark (issue 16's goal: each source and sink alone moves ≥ 70 % of what the same
 * client library does without weir, on the same machine in the same run). For every connector,
 * interleaved rounds (`runInterleaved`) of:
 *
 * - **bare**: the client library alone, written the way a careful service would batch it:
 *   JetStream source: an ordered consumer, `consume({ max_messages: 1024 })`, `JSON.parse` each;
 *   Redis source: `XRANGE (<id> + COUNT 1024` in a loop, `JSON.parse` each (and the same loop in
 *   a fresh worker thread per round, `bare (worker)`: weir's source runs in a cold worker thread,
 *   the main-thread loop is warm from earlier rounds); JetStream sink:
 *   `js.publish` of `JSON.stringify`ed records, 1024 acks in flight; Redis sink: pipelined `XADD`,
 *   1024 per pipeline; PostgreSQL sink: multi-row `INSERT`s of 2000 rows (a named prepared
 *   statement), 50 000 rows per transaction.
 * - **weir**: the connector in a job at parallelism 1 with exactly-once checkpoints every 1 s; the
 *   other end is `sources.sequence` (for sinks) or `sinks.discard` (for sources). Timed while the
 *   connector runs: a source from its first record to its n-th (stamped by a map in the job), a
 *   sink from the first record to the moment its output holds all n (polled every 20 ms: the last
 *   commit, so up to one checkpoint interval of staging is included). The bare cases are timed
 *   the same way (first record to last record / last ack). The ratio with the job's whole
 *   `runJob` (start-up and shutdown included) is shown too: with many helpers loading the
 *   machine, start-up alone takes seconds.
 *
 * Records are `{ key: i % 1000, value: i }` (~30 bytes of JSON). Every run's output is checked
 * (messages in the stream, entries in the Redis key, rows in the table); a wrong count aborts.
 * Each run writes to fresh names and everything is removed at the end.
 *
 *   npm run build && node --expose-gc --import tsx bench/connectors/run.ts [--n N] [--rounds R] [--quick]
 *   weir bench --suite connectors
 *
 * Needs NATS JetStream (4222), Redis (6379) and PostgreSQL (5432, database `test`).
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import pg from 'pg';
import { runJob } from '../../dist/index.js';
import {
  type BenchCase,
  formatMachineInfo,
  formatRate,
  formatRatio,
  type InterleavedResult,
  machineInfo,
  median,
  printTable,
  resultsPath,
  runInterleaved,
  type Sample,
  type TableRow,
  writeJson,
} from '../harness/index.js';
import { commandLine, type SuiteReport } from '../harness/suite-report.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    json: { type: 'string' },
    n: { type: 'string' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    only: { type: 'string' },
  },
  strict: true,
});
const quick = values.quick;
const N = Number(values.n ?? (quick ? 20_000 : 200_000));
const ROUNDS = Number(values.rounds ?? (quick ? 1 : 3));
const WARMUP = Number(values.warmup ?? (quick ? 0 : 1));
const ONLY = values.only?.split(',');
const JSON_PATH = values.json ?? resultsPath('connectors.json');

const SERVERS = 'nats://127.0.0.1:4222';
const REDIS_URL = 'redis://127.0.0.1:6379';
const PG_URL = 'postgres://root@127.0.0.1:5432/test';
const JOB = fileURLToPath(new URL('../jobs/connector-job.mjs', import.meta.url));
const CHECKPOINTING = { interval: 1000, mode: 'exactly-once' as const };
const PREFIX = `weir_bench_conn_${process.pid}`;

const record = (i: number) => ({ key: i % 1000, value: i });

function check(what: string, got: number, want: number): void {
  if (got !== want) throw new Error(`${what}: expected ${want} records, found ${got}`);
}

let nc: NatsConnection;
let jsm: JetStreamManager;
let js: JetStreamClient;
let redis: Redis;
let db: pg.Pool;
let runs = 0;
const fresh = () => `${PREFIX}_${++runs}`;

interface ConnectorSample extends Sample {
  /** Weir only: from `runJob` to its end, start-up and shutdown included. */
  readonly wallMs?: number;
}

const wallNow = () => performance.timeOrigin + performance.now();
const stampDir = mkdtempSync(path.join(os.tmpdir(), 'weir-bench-conn-'));

/**
 * Runs the job; `ms` is the connector's running time: for a source from its first record to its
 * n-th (stamped in the job), for a sink from the first record to the moment `outputCount` (polled
 * every 20 ms while the job runs) reached n, i.e. the last commit.
 */
async function timedJob(
  args: Record<string, string>,
  outputCount?: () => Promise<number>,
): Promise<ConnectorSample> {
  const stamp = path.join(stampDir, fresh());
  let outputAt = Number.NaN;
  let running = true;
  const poller =
    outputCount === undefined
      ? Promise.resolve()
      : (async () => {
          // One more look after the job returned: its last commit can land between two polls.
          for (;;) {
            const stillRunning = running;
            if ((await outputCount()) >= N) {
              outputAt = wallNow();
              return;
            }
            if (!stillRunning) return;
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        })();
  const t0 = performance.now();
  try {
    await runJob(JOB, {
      parallelism: 1,
      checkpointing: CHECKPOINTING,
      args: { n: String(N), stamp, ...args },
    });
  } finally {
    running = false;
    await poller;
  }
  const wallMs = performance.now() - t0;
  const first = Number(readFileSync(`${stamp}.first`, 'utf8'));
  const last = outputCount === undefined ? Number(readFileSync(`${stamp}.last`, 'utf8')) : outputAt;
  if (!Number.isFinite(last)) throw new Error(`${args.sink}: the output never reached ${N} records`);
  return { records: N, ms: last - first, wallMs };
}

// --- JetStream source ---------------------------------------------------------------------------

async function jetstreamSourceCases(): Promise<{
  cases: BenchCase<ConnectorSample>[];
  cleanup: () => Promise<void>;
}> {
  const stream = `${PREFIX}_src`;
  await jsm.streams.add({ name: stream, subjects: [`${stream}.>`] });
  for (let i = 0; i < N; i += 1024) {
    const ps: Promise<unknown>[] = [];
    for (let k = i; k < Math.min(N, i + 1024); k++)
      ps.push(js.publish(`${stream}.${k % 4}`, JSON.stringify(record(k))));
    await Promise.all(ps);
  }
  return {
    cases: [
      {
        name: 'bare',
        async run(): Promise<ConnectorSample> {
          const consumer = await js.consumers.get(stream);
          const messages = await consumer.consume({ max_messages: 1024 });
          let t0 = 0;
          let count = 0;
          let sum = 0;
          for await (const m of messages) {
            if (count === 0) t0 = performance.now();
            sum += (JSON.parse(m.string()) as { value: number }).value;
            if (++count === N) break;
          }
          await messages.close();
          const ms = performance.now() - t0;
          check('jetstream source (bare)', count, N);
          if (sum !== (N * (N - 1)) / 2) throw new Error('jetstream source (bare): wrong sum');
          return { records: N, ms };
        },
      },
      {
        name: 'weir',
        run: () => timedJob({ source: 'jetstream', sink: 'discard', servers: SERVERS, stream }),
      },
    ],
    cleanup: async () => {
      await jsm.streams.delete(stream);
    },
  };
}

// --- Redis Streams source -----------------------------------------------------------------------

/** The bare Redis source loop as a worker thread's code (`eval`): posts `[count, sum, ms]`. */
const REDIS_BARE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.ioredis).then(async ({ Redis }) => {
  const redis = new Redis(workerData.url);
  let t0 = 0, after = '-', count = 0, sum = 0;
  for (;;) {
    const entries = await redis.xrange(workerData.stream, after === '-' ? '-' : '(' + after, '+', 'COUNT', 1024);
    if (entries.length === 0) break;
    if (count === 0) t0 = performance.now();
    for (const [, fields] of entries) sum += JSON.parse(fields[1]).value;
    count += entries.length;
    after = entries[entries.length - 1][0];
  }
  const ms = performance.now() - t0;
  redis.disconnect();
  parentPort.postMessage([count, sum, ms]);
});
`;

async function redisSourceCases(): Promise<{
  cases: BenchCase<ConnectorSample>[];
  cleanup: () => Promise<void>;
}> {
  const stream = `${PREFIX}_src`;
  for (let i = 0; i < N; i += 1024) {
    const p = redis.pipeline();
    for (let k = i; k < Math.min(N, i + 1024); k++) p.xadd(stream, '*', 'data', JSON.stringify(record(k)));
    await p.exec();
  }
  return {
    cases: [
      {
        name: 'bare',
        async run(): Promise<ConnectorSample> {
          let t0 = 0;
          let after = '-';
          let count = 0;
          let sum = 0;
          for (;;) {
            const entries = await redis.xrange(stream, after === '-' ? '-' : `(${after}`, '+', 'COUNT', 1024);
            if (entries.length === 0) break;
            if (count === 0) t0 = performance.now();
            for (const [, fields] of entries) sum += (JSON.parse(fields[1]) as { value: number }).value;
            count += entries.length;
            after = entries[entries.length - 1][0];
          }
          const ms = performance.now() - t0;
          check('redis source (bare)', count, N);
          if (sum !== (N * (N - 1)) / 2) throw new Error('redis source (bare): wrong sum');
          return { records: N, ms };
        },
      },
      {
        // The bare loop (string API, COUNT 1024) in a fresh worker thread, started per run, as
        // weir's source task runs in one: cold JIT and a worker's heap, no weir code. The bare case
        // above runs on the main thread, warm from earlier rounds. Timed in the worker, first
        // reply to last, like the others.
        name: 'bare (worker)',
        async run(): Promise<ConnectorSample> {
          const worker = new Worker(REDIS_BARE_WORKER, {
            eval: true,
            workerData: { url: REDIS_URL, stream, ioredis: import.meta.resolve('ioredis') },
          });
          const [count, sum, ms] = (await new Promise((resolve, reject) => {
            worker.once('message', resolve);
            worker.once('error', reject);
          })) as [number, number, number];
          await worker.terminate();
          check('redis source (bare, worker)', count, N);
          if (sum !== (N * (N - 1)) / 2) throw new Error('redis source (bare, worker): wrong sum');
          return { records: N, ms };
        },
      },
      {
        name: 'weir',
        run: () => timedJob({ source: 'redis', sink: 'discard', url: REDIS_URL, stream }),
      },
    ],
    cleanup: async () => {
      await redis.del(stream);
    },
  };
}

// --- JetStream sink -----------------------------------------------------------------------------

async function jetstreamSinkCases(): Promise<{
  cases: BenchCase<ConnectorSample>[];
  cleanup: () => Promise<void>;
}> {
  const stream = `${PREFIX}_sink`;
  await jsm.streams.add({ name: stream, subjects: [`${stream}.>`] });
  const counted = async (what: string, subject: string) => {
    const info = await jsm.streams.info(stream, { filter: subject } as never);
    const got = info.state.messages;
    await jsm.streams.purge(stream);
    check(what, got, N);
  };
  return {
    cases: [
      {
        name: 'bare',
        async run(): Promise<ConnectorSample> {
          const subject = `${stream}.${fresh()}`;
          const t0 = performance.now();
          for (let i = 0; i < N; i += 1024) {
            const ps: Promise<unknown>[] = [];
            for (let k = i; k < Math.min(N, i + 1024); k++)
              ps.push(js.publish(subject, JSON.stringify(record(k))));
            await Promise.all(ps);
          }
          const ms = performance.now() - t0;
          await counted('jetstream sink (bare)', subject);
          return { records: N, ms };
        },
      },
      {
        name: 'weir',
        async run(): Promise<ConnectorSample> {
          const subject = `${stream}.${fresh()}`;
          const sample = await timedJob(
            { source: 'sequence', sink: 'jetstream', servers: SERVERS, subject },
            async () => (await jsm.streams.info(stream)).state.messages,
          );
          await counted('jetstream sink (weir)', subject);
          return sample;
        },
      },
    ],
    cleanup: async () => {
      await jsm.streams.delete(stream);
    },
  };
}

// --- Redis Streams sink -------------------------------------------------------------------------

async function redisSinkCases(): Promise<{
  cases: BenchCase<ConnectorSample>[];
  cleanup: () => Promise<void>;
}> {
  const counted = async (what: string, stream: string) => {
    const got = await redis.xlen(stream);
    await redis.del(stream);
    check(what, got, N);
  };
  return {
    cases: [
      {
        name: 'bare',
        async run(): Promise<ConnectorSample> {
          const stream = fresh();
          const t0 = performance.now();
          for (let i = 0; i < N; i += 1024) {
            const p = redis.pipeline();
            for (let k = i; k < Math.min(N, i + 1024); k++)
              p.xadd(stream, '*', 'data', JSON.stringify(record(k)));
            await p.exec();
          }
          const ms = performance.now() - t0;
          await counted('redis sink (bare)', stream);
          return { records: N, ms };
        },
      },
      {
        name: 'weir',
        async run(): Promise<ConnectorSample> {
          const stream = fresh();
          const sample = await timedJob({ source: 'sequence', sink: 'redis', url: REDIS_URL, stream }, () =>
            redis.xlen(stream),
          );
          await counted('redis sink (weir)', stream);
          return sample;
        },
      },
    ],
    cleanup: async () => {
      const markers = await redis.keys(`weir:sink:${PREFIX}_*`);
      if (markers.length > 0) await redis.del(...markers);
    },
  };
}

// --- PostgreSQL sink ----------------------------------------------------------------------------

async function postgresSinkCases(): Promise<{
  cases: BenchCase<ConnectorSample>[];
  cleanup: () => Promise<void>;
}> {
  const table = `${PREFIX}_sink`;
  await db.query(`CREATE TABLE ${table} (key int, value bigint)`);
  const counted = async (what: string) => {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${table}`);
    await db.query(`TRUNCATE ${table}`);
    check(what, rows[0].n as number, N);
  };
  const ROWS = 2000;
  const TX_ROWS = 50_000;
  return {
    cases: [
      {
        name: 'bare',
        async run(): Promise<ConnectorSample> {
          const client = await db.connect();
          const t0 = performance.now();
          try {
            for (let tx = 0; tx < N; tx += TX_ROWS) {
              await client.query('BEGIN');
              for (let i = tx; i < Math.min(N, tx + TX_ROWS); i += ROWS) {
                const end = Math.min(N, tx + TX_ROWS, i + ROWS);
                const params: number[] = [];
                const tuples: string[] = [];
                for (let k = i; k < end; k++) {
                  const r = record(k);
                  tuples.push(`($${params.length + 1}, $${params.length + 2})`);
                  params.push(r.key, r.value);
                }
                const text = `INSERT INTO ${table} (key, value) VALUES ${tuples.join(', ')}`;
                // Full chunks as a named prepared statement (parsed once per connection), as
                // sinks.postgres does: the text form costs the server a parse and plan each time.
                if (end - i === ROWS) await client.query({ name: `bench_ins_${ROWS}`, text, values: params });
                else await client.query(text, params);
              }
              await client.query('COMMIT');
            }
          } finally {
            client.release();
          }
          const ms = performance.now() - t0;
          await counted('postgres sink (bare)');
          return { records: N, ms };
        },
      },
      {
        name: 'weir',
        async run(): Promise<ConnectorSample> {
          const sample = await timedJob(
            { source: 'sequence', sink: 'postgres', connection: PG_URL, table },
            async () => {
              const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${table}`);
              return rows[0].n as number;
            },
          );
          await counted('postgres sink (weir)');
          return sample;
        },
      },
    ],
    cleanup: async () => {
      await db.query(`DROP TABLE ${table}`);
      await db.query('DELETE FROM weir_sink_commits WHERE sink_id LIKE $1', [`${table}:%`]);
    },
  };
}

// --- run ----------------------------------------------------------------------------------------

const CONNECTORS = [
  { name: 'jetstream source', make: jetstreamSourceCases },
  { name: 'redis source', make: redisSourceCases },
  { name: 'jetstream sink', make: jetstreamSinkCases },
  { name: 'redis sink', make: redisSinkCases },
  { name: 'postgres sink', make: postgresSinkCases },
].filter((c) => ONLY === undefined || ONLY.includes(c.name.replace(' ', '-')));

nc = await connect({ servers: SERVERS });
jsm = await jetstreamManager(nc);
js = jetstream(nc);
redis = new Redis(REDIS_URL);
db = new pg.Pool({ connectionString: PG_URL, max: 2 });

const machine = machineInfo();
process.stdout.write(
  `${formatMachineInfo(machine)}\nconnectors: ${N} records per run, ${ROUNDS} rounds (+${WARMUP} warm-up)\n`,
);
const loads: number[] = [];

interface Row {
  readonly connector: string;
  readonly result: InterleavedResult<ConnectorSample>;
}
const results: Row[] = [];
try {
  for (const c of CONNECTORS) {
    const { cases, cleanup } = await c.make();
    process.stdout.write(`${c.name}: ready\n`);
    try {
      const result = await runInterleaved(cases, {
        rounds: ROUNDS,
        warmup: WARMUP,
        baseline: 'bare',
        onSample: ({ name, round, warmup, sample }) => {
          loads.push(os.loadavg()[0]);
          process.stdout.write(
            `  ${c.name} ${name} round ${round}${warmup ? ' (warm-up)' : ''}: ${formatRate((sample.records * 1000) / sample.ms)}/s\n`,
          );
        },
      });
      results.push({ connector: c.name, result });
    } finally {
      await cleanup();
    }
  }
} finally {
  await nc.close();
  redis.disconnect();
  await db.end();
}

const rows: TableRow[] = results.map(({ connector, result }) => {
  const bare = result.cases.find((k) => k.name === 'bare')!;
  const weir = result.cases.find((k) => k.name === 'weir')!;
  // Start-up included: the bare run's time against weir's whole runJob, per round.
  const wallRatios = weir.samples.map((s, i) => bare.samples[i].ms / s.wallMs!);
  // A second baseline (Redis source: the bare loop in a fresh worker), per-round ratios like the first.
  const inWorker = result.cases.find((k) => k.name === 'bare (worker)');
  const workerRatios = inWorker?.samples.map((s, i) => s.ms / weir.samples[i].ms) ?? [];
  return {
    connector,
    'bare rec/s': formatRate(bare.recordsPerSec.median),
    'weir rec/s': formatRate(weir.recordsPerSec.median),
    'weir/bare': formatRatio(weir.ratioToBaseline.median),
    'weir/bare min-max': `${formatRatio(weir.ratioToBaseline.min)}-${formatRatio(weir.ratioToBaseline.max)}`,
    'weir/bare (start-up incl.)': formatRatio(median(wallRatios)),
    'weir/bare in a worker': inWorker === undefined ? '' : formatRatio(median(workerRatios)),
  };
});
process.stdout.write(
  `load average during the runs: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}\n`,
);
printTable(rows);

const report: SuiteReport = {
  suite: 'connectors',
  title: 'Connectors: weir vs the bare client library',
  command: commandLine('bench/connectors/run.ts'),
  machine: formatMachineInfo(machine),
  notes: [
    `${N} records per run, ${ROUNDS} interleaved rounds; weir at p=1 with exactly-once checkpoints every 1 s; goal: weir/bare ≥ 0.70.`,
    `weir rec/s: from the first record to the n-th (sources) or to the last commit (sinks); start-up incl.: the whole runJob; load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}.`,
  ],
  tables: [{ title: 'weir vs bare client (medians)', rows }],
  charts: [
    {
      title: 'weir / bare client (running)',
      unit: '×',
      bars: results.map(({ connector, result }) => ({
        label: connector,
        value: result.cases.find((k) => k.name === 'weir')!.ratioToBaseline.median,
      })),
      reference: { value: 0.7, label: 'goal 0.7×' },
    },
  ],
};
writeJson(JSON_PATH, { machine, n: N, rounds: ROUNDS, warmup: WARMUP, loads, results, report });
rmSync(stampDir, { recursive: true, force: true });
