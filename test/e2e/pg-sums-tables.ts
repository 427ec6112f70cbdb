/**
 * PostgreSQL tables of running sums for the connector tests (127.0.0.1:5432, database `test`):
 * each test makes its own table, reads its rows, and everything is dropped at the end, with the
 * exactly-once sink's marker rows for those tables.
 */
import pg from 'pg';
import type { RunningSum } from './helpers.js';

export const PG_CONNECTION = 'postgres://root@127.0.0.1:5432/test';

export interface SumsTables {
  readonly db: pg.Pool;
  /** A new table (key, sum, count) named `<prefix>_<pid>_<n>_<time>`; `upsert`: key is the primary key. */
  create(prefix: string, options?: { upsert?: boolean }): Promise<string>;
  /** Every row of a table, sums as numbers. */
  rows(name: string): Promise<RunningSum[]>;
  /** Drops every table made here and its marker rows, and closes the pool. */
  dropAll(): Promise<void>;
}

export function sumsTables(connectionString = PG_CONNECTION): SumsTables {
  const db = new pg.Pool({ connectionString, max: 2 });
  const names: string[] = [];
  let seq = 0;
  return {
    db,
    async create(prefix, options = {}) {
      const name = `${prefix}_${process.pid}_${seq++}_${Date.now()}`;
      names.push(name);
      await db.query(
        `CREATE TABLE ${name} (key integer NOT NULL, sum bigint NOT NULL, count integer NOT NULL${options.upsert ? ', PRIMARY KEY (key)' : ''})`,
      );
      return name;
    },
    async rows(name) {
      const r = await db.query<{ key: number; sum: string; count: number }>(
        `SELECT key, sum, count FROM ${name}`,
      );
      return r.rows.map((x) => ({ key: x.key, sum: Number(x.sum), count: x.count }));
    },
    async dropAll() {
      for (const t of names.splice(0)) {
        await db.query(`DROP TABLE IF EXISTS ${t}`);
        await db
          .query('DELETE FROM weir_sink_commits WHERE sink_id LIKE $1', [`${t}:%`])
          .catch(() => undefined); // the marker table exists only once a sink committed
      }
      await db.end();
    },
  };
}
