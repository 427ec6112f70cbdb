// A/B of two PostgreSQL insert paths for sinks.postgres, interleaved in one run: 100 000 rows
// (key int, value bigint) in one transaction, as
//   prepared: 2 000-row multi-row INSERTs, the named prepared statement sinks.postgres uses now;
//   unnest:   one INSERT ... SELECT * FROM unnest($1::int[], $2::bigint[]) per 20 000 rows
//             (one parameter per column: one parse, and one array literal per column to build).
// Prints per variant the median rows/s and the median client CPU µs per row (process.cpuUsage:
// what the Node side spends), over 5 rounds after one warm-up, and the ratios unnest/prepared.
//   npm run build && node bench/connectors/postgres-insert-unnest-ab.mjs
import pg from 'pg';
import { insertStatement } from '../../dist/connectors/postgres-sink.js';

const db = new pg.Pool({ connectionString: 'postgres://root@127.0.0.1:5432/test', max: 1 });
const t = `weir_ab_unnest_${process.pid}`;
await db.query(`CREATE TABLE ${t} (key int, value bigint)`);
const N = 100000;
const PER = 2000;
const UNNEST_PER = 20000;
const cols = ['key', 'value'];
const rows = Array.from({ length: N }, (_, i) => [i % 1000, i]);
const text = insertStatement(`"${t}"`, cols, PER, undefined);
async function prepared(c) {
  for (let i = 0; i < N; i += PER) {
    const ch = rows.slice(i, i + PER);
    await c.query({ name: `weir_ab_${PER}`, text, values: ch.flat() });
  }
}
const unnestText = `INSERT INTO "${t}" ("key", "value") SELECT * FROM unnest($1::int[], $2::bigint[])`;
async function unnest(c) {
  for (let i = 0; i < N; i += UNNEST_PER) {
    const ch = rows.slice(i, i + UNNEST_PER);
    const columns = cols.map((_, j) => ch.map((r) => r[j]));
    await c.query({ name: 'weir_ab_unnest', text: unnestText, values: columns });
  }
}
const res = { prepared: { rate: [], cpu: [] }, unnest: { rate: [], cpu: [] } };
for (let r = 0; r < 6; r++)
  for (const [k, f] of r % 2
    ? [
        ['prepared', prepared],
        ['unnest', unnest],
      ]
    : [
        ['unnest', unnest],
        ['prepared', prepared],
      ]) {
    const c = await db.connect();
    await c.query('BEGIN');
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await f(c);
    await c.query('COMMIT');
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    c.release();
    const { rows: count } = await db.query(`SELECT count(*)::int AS n FROM ${t}`);
    if (count[0].n !== N) throw new Error(`${k} inserted ${count[0].n} rows, not ${N}`);
    await db.query(`TRUNCATE ${t}`);
    if (r > 0) {
      res[k].rate.push((N / ms) * 1000);
      res[k].cpu.push((cpu.user + cpu.system) / N);
    }
  }
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const line = (k) => `${k}: ${Math.round(med(res[k].rate))} rows/s, ${med(res[k].cpu).toFixed(2)} µs CPU/row`;
console.log(line('prepared'));
console.log(line('unnest'));
console.log(
  `unnest/prepared: rate ${(med(res.unnest.rate) / med(res.prepared.rate)).toFixed(2)}x, ` +
    `client CPU per row ${(med(res.unnest.cpu) / med(res.prepared.cpu)).toFixed(2)}x`,
);
console.log(JSON.stringify(res));
await db.query(`DROP TABLE ${t}`);
await db.end();
