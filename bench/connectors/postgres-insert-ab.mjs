// A/B of one PostgreSQL insert path, interleaved in one run: 100 000 rows (key int, value bigint)
// in 2 000-row multi-row INSERTs in one transaction, each statement sent as text (parsed and
// planned by the server every time) vs as the named prepared statement sinks.postgres uses for
// full chunks. Prints the medians of 5 rounds (after one warm-up) and their ratio.
//   npm run build && node bench/connectors/postgres-insert-ab.mjs
import pg from 'pg';
import { insertStatement } from '../../dist/connectors/postgres-sink.js';

const db = new pg.Pool({ connectionString: 'postgres://root@127.0.0.1:5432/test', max: 1 });
const t = `weir_ab_${process.pid}`;
await db.query(`CREATE TABLE ${t} (key int, value bigint)`);
const N = 100000,
  PER = 2000,
  cols = ['key', 'value'];
const rows = Array.from({ length: N }, (_, i) => [i % 1000, i]);
const text = insertStatement(`"${t}"`, cols, PER, undefined);
async function plain(c) {
  for (let i = 0; i < N; i += PER) {
    const ch = rows.slice(i, i + PER);
    await c.query(insertStatement(`"${t}"`, cols, ch.length, undefined), ch.flat());
  }
}
async function prepared(c) {
  for (let i = 0; i < N; i += PER) {
    const ch = rows.slice(i, i + PER);
    await c.query({ name: `weir_ab_${PER}`, text, values: ch.flat() });
  }
}
const res = { plain: [], prepared: [] };
for (let r = 0; r < 6; r++)
  for (const [k, f] of r % 2
    ? [
        ['plain', plain],
        ['prepared', prepared],
      ]
    : [
        ['prepared', prepared],
        ['plain', plain],
      ]) {
    const c = await db.connect();
    await c.query('BEGIN');
    const t0 = performance.now();
    await f(c);
    await c.query('COMMIT');
    const ms = performance.now() - t0;
    c.release();
    await db.query(`TRUNCATE ${t}`);
    if (r > 0) res[k].push((N / ms) * 1000);
  }
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
console.log(
  'plain',
  Math.round(med(res.plain)),
  'prepared',
  Math.round(med(res.prepared)),
  'ratio',
  (med(res.prepared) / med(res.plain)).toFixed(2),
  res,
);
await db.query(`DROP TABLE ${t}`);
await db.end();
