// A/B of the PostgreSQL sink's commit path, interleaved in one run: 100 000 rows (key int, value
// bigint) in one transaction, as the sink's named prepared 2 000-row INSERTs vs COPY (text format)
// into a temporary table (ON COMMIT DROP) followed by one INSERT ... SELECT from it (the shape an
// upsert-capable commit would take). Prints the median rows/s and client CPU µs per row of 5
// rounds after one warm-up, and the ratios copy/prepared.
// pg-copy-streams is a dependency of weir (the sink COPYs large commits):
//   node bench/connectors/postgres-insert-copy-ab.mjs

import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

const db = new pg.Pool({ connectionString: 'postgres://root@127.0.0.1:5432/test', max: 1 });
const t = `weir_ab_copy_${process.pid}`;
await db.query(`CREATE TABLE ${t} (key int, value bigint)`);
const N = 100000,
  PER = 2000;
const rows = Array.from({ length: N }, (_, i) => [i % 1000, i]);
const vals = Array.from({ length: PER }, (_, r) => `($${2 * r + 1}, $${2 * r + 2})`).join(', ');
const text = `INSERT INTO "${t}" ("key", "value") VALUES ${vals}`;
async function prepared(c) {
  for (let i = 0; i < N; i += PER)
    await c.query({ name: 'p2000', text, values: rows.slice(i, i + PER).flat() });
}
async function copy(c) {
  // temp table then INSERT ... SELECT, as an upsert-capable commit would do
  await c.query(`CREATE TEMP TABLE weir_stage (LIKE "${t}") ON COMMIT DROP`);
  const chunks = [];
  for (let i = 0; i < N; i += 10000) {
    let s = '';
    for (let k = i; k < Math.min(N, i + 10000); k++) s += `${rows[k][0]}\t${rows[k][1]}\n`;
    chunks.push(s);
  }
  await pipeline(Readable.from(chunks), c.query(copyFrom(`COPY weir_stage ("key", "value") FROM STDIN`)));
  await c.query(`INSERT INTO "${t}" ("key", "value") SELECT "key", "value" FROM weir_stage`);
}
const res = { prepared: { rate: [], cpu: [] }, copy: { rate: [], cpu: [] } };
for (let r = 0; r < 6; r++)
  for (const [k, f] of r % 2
    ? [
        ['prepared', prepared],
        ['copy', copy],
      ]
    : [
        ['copy', copy],
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
    const { rows: n } = await db.query(`SELECT count(*)::int AS n FROM ${t}`);
    if (n[0].n !== N) throw new Error(`${k}: ${n[0].n}`);
    await db.query(`TRUNCATE ${t}`);
    if (r > 0) {
      res[k].rate.push((N / ms) * 1000);
      res[k].cpu.push((cpu.user + cpu.system) / N);
    }
  }
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
for (const k of ['prepared', 'copy'])
  console.log(k, Math.round(med(res[k].rate)), 'rows/s', med(res[k].cpu).toFixed(2), 'us CPU/row');
console.log(
  'copy/prepared rate',
  (med(res.copy.rate) / med(res.prepared.rate)).toFixed(2),
  'cpu',
  (med(res.copy.cpu) / med(res.prepared.cpu)).toFixed(2),
);
console.log(JSON.stringify(res));
await db.query(`DROP TABLE ${t}`);
await db.end();
