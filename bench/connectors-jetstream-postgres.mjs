// JetStream -> keyed count -> PostgreSQL exactly-once (examples/jetstream-to-postgres.mjs), checkpoints
// every 1 s, bounded, p=2: `npm run build && node bench/connectors-jetstream-postgres.mjs [n]`.
// Publishes n orders to a fresh stream, runs the job, checks the table and removes everything.
// records/s includes job start-up and the final checkpoint.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { runJob } from '../dist/index.js';

const name = `weir_ex_${process.pid}`;
const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name, subjects: [`${name}.>`] });
const js = jsm.jetstream();
const N = Number(process.argv[2] ?? 200000);
let t0 = performance.now();
for (let i = 0; i < N; i += 1000) {
  const ps = [];
  for (let k = i; k < i + 1000; k++)
    ps.push(js.publish(`${name}.${k % 4}`, JSON.stringify({ customer: `c${k % 1000}`, amount: 1 })));
  await Promise.all(ps);
}
console.log('published', N, 'in', Math.round(performance.now() - t0), 'ms');
const db = new pg.Pool({ connectionString: 'postgres://root@127.0.0.1:5432/test' });
await db.query(`CREATE TABLE ${name} (customer text PRIMARY KEY, orders int, amount numeric)`);
try {
  t0 = performance.now();
  await runJob(new URL('../examples/jetstream-to-postgres.mjs', import.meta.url).pathname, {
    parallelism: 2,
    checkpointing: { interval: 1000, mode: 'exactly-once' },
    args: {
      stream: name,
      subjects: [0, 1, 2, 3].map((i) => `${name}.${i}`).join(','),
      table: name,
      bounded: 'true',
    },
  });
  const ms = performance.now() - t0;
  const q = await db.query(`SELECT count(*) AS n, sum(orders) AS o FROM ${name}`);
  console.log('job', Math.round(ms), 'ms', Math.round(N / (ms / 1000)), 'records/s', q.rows[0]);
} finally {
  await db.query(`DROP TABLE ${name}`);
  await db.query(`DELETE FROM weir_sink_commits WHERE sink_id LIKE $1`, [`${name}:%`]);
  await db.end();
  await jsm.streams.delete(name);
  await nc.close();
}
