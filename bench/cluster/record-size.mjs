// Size of a cluster job's committed checkpoint record (the coordinator bucket's `checkpoint` key,
// one NATS message: the server's default max_payload is 1 MiB) for an incremental job with a long
// delta chain. A record names every chunk its checkpoint references, and a delta's include its
// whole base chain, so it grows with each delta until the next full snapshot (`fullEvery`).
// Three instances (test/fixtures/cluster/cluster-instance.mjs) run test/fixtures/jobs/split-sum.mjs
// (sequence → keyBy → running sum → exactly-once collect) at parallelism 3, paced so that
// checkpoints are taken while keys change; after each committed checkpoint the record is read
// from the bucket and its size printed, with the number of chunk handles it names. Writes
// bench/results/record-size.json.
//   npm run build && node bench/cluster/record-size.mjs [--checkpoints 30] [--full-every 1000]
//     [--keys 10000] [--max-parallelism 128] [--rate 20000] [--interval 200]
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { CHECKPOINT_KEY, coordinatorBucket, membersBucket } from '../../dist/cluster/cluster-options.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const HOST = path.join(here, '../../test/fixtures/cluster/cluster-instance.mjs');
const JOB = pathToFileURL(path.join(here, '../../test/fixtures/jobs/split-sum.mjs')).href;
const SERVERS = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const INSTANCES = 3;
const { values: a } = parseArgs({
  options: {
    checkpoints: { type: 'string', default: '30' },
    'full-every': { type: 'string', default: '1000' },
    keys: { type: 'string', default: '10000' },
    'max-parallelism': { type: 'string', default: '128' },
    rate: { type: 'string', default: '20000' },
    interval: { type: 'string', default: '200' },
  },
});
const checkpoints = Number(a.checkpoints);
const rate = Number(a.rate);
// Ten minutes of input: the run is stopped once the checkpoints asked for were measured (or the
// job ended: a record past the server's max_payload fails the commit, and so the job).
const n = rate * 600;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const utc = () => new Date().toISOString().slice(0, 19).replace('T', ' ');

const dir = mkdtempSync(path.join(tmpdir(), 'weir-record-size-'));
const name = `recsize${process.pid}`;
const nc = await connect({ servers: SERVERS });
const kvm = new Kvm(nc);
const children = [];
const rows = [];
console.log(`start ${utc()} UTC, load ${load()}, node ${process.version}`);
try {
  let kv = null;
  let measuring = Promise.resolve();
  const done = new Promise((resolve) => {
    for (let i = 0; i < INSTANCES; i++) {
      const child = fork(HOST, [
        JSON.stringify({
          job: JOB,
          options: {
            parallelism: INSTANCES,
            maxParallelism: Number(a['max-parallelism']),
            args: { n: String(n), hold: String(n + 1), keys: a.keys, dir, rate: String(rate) },
            checkpointing: {
              interval: Number(a.interval),
              dir: path.join(dir, 'checkpoints'),
              incremental: true,
              fullEvery: Number(a['full-every']),
            },
            cluster: { servers: [SERVERS], name, instances: INSTANCES },
          },
        }),
      ]);
      children.push(child);
      child.on('message', (m) => {
        if (m.kind === 'error' || m.kind === 'result') {
          console.log(`instance ${i} ended: ${m.kind === 'error' ? m.message : m.status}`);
          measuring = measuring.then(resolve);
        }
        if (m.kind === 'restarting' || m.kind === 'warning' || (m.kind === 'deployed' && m.attempt > 0))
          console.log(`instance ${i}: ${m.kind}${m.message ? ` ${m.message}` : ''}`);
        if (m.kind !== 'checkpoint') return;
        measuring = measuring.then(async () => {
          if (rows.length >= checkpoints) return;
          kv ??= await kvm.open(coordinatorBucket(name));
          const entry = await kv.get(CHECKPOINT_KEY);
          if (!entry) return;
          const record = JSON.parse(new TextDecoder().decode(entry.value));
          const handles = Object.values(record.tasks).reduce(
            (sum, t) => sum + t.operators.reduce((s, op) => s + op.chunks.length, 0),
            0,
          );
          const row = { checkpointId: record.checkpointId, bytes: entry.value.length, handles };
          rows.push(row);
          console.log(
            `checkpoint ${row.checkpointId}: record ${row.bytes} bytes, ${row.handles} chunk handles (${(row.bytes / row.handles).toFixed(0)} B each)`,
          );
          if (rows.length >= checkpoints) resolve();
        });
      });
    }
  });
  await done;
} finally {
  for (const c of children) c.kill('SIGKILL');
  for (const bucket of [membersBucket(name), coordinatorBucket(name)])
    await kvm
      .open(bucket)
      .then((kv) => kv.destroy())
      .catch(() => undefined);
  await nc.close();
  rmSync(dir, { recursive: true, force: true });
}
const last = rows.at(-1);
console.log(
  `end ${utc()} UTC, load ${load()}; largest record ${Math.max(...rows.map((r) => r.bytes))} bytes; ` +
    `per delta ≈ ${((last.bytes - rows[0].bytes) / Math.max(1, rows.length - 1)).toFixed(0)} bytes more`,
);
mkdirSync(path.join(here, '../results'), { recursive: true });
writeFileSync(
  path.join(here, '../results/record-size.json'),
  JSON.stringify({ args: a, node: process.version, at: new Date().toISOString(), rows }, null, 2),
);
