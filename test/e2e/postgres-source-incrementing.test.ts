/**
 * sources.postgres in incrementing mode (`incrementing: { column }`, unbounded) against the real
 * PostgreSQL (127.0.0.1:5432, database `test`); every table is the test's own and is dropped after.
 * (a) reader: rows committed out of id order by concurrent transactions (ids taken, a later id
 *     committed first) are all read, in id order, none skipped; a reader restored from a snapshot
 *     emits exactly the rows after it, including rows inserted after the snapshot;
 * (b) reader: typed errors for a missing table, a missing column and a non-integer column;
 * (c) job: p=2, 3 hash splits, a throw after two source snapshots, half of the rows inserted by
 *     concurrent transactions while the job runs -> keyed running sum -> sinks.postgres
 *     exactly-once: the output is exact;
 * (d) reader: lag() is the ids behind the column's greatest value (from `min - 1` before the first
 *     row), 0 once caught up;
 * (e) reader: a transaction holding id 1 (INSERT, uncommitted) and one holding id 2 (taken with
 *     nextval after pg_current_xact_id(), not yet written) hold the reader back while ids 3.. commit
 *     and several probes pass (seen through lag()); once both commit every id is read in order;
 * (f) reader, the documented limit: an id taken by nextval() in its own statement and written by a
 *     later transaction, after greater ids were read, is never read.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type PostgresSourceOptions,
  PostgresSourceSchemaError,
  PostgresTableNotFoundError,
  sources,
  startJob,
} from '../../dist/index.js';
import { expectExactRunningSums, fixture, whenCommitted } from './helpers.js';
import { PG_CONNECTION, sumsTables } from './pg-sums-tables.js';

type Row = Record<string, unknown>;
type Reader = ReturnType<ReturnType<typeof sources.postgres<Row>>['createReader']>;

const N = 20_000;
const KEYS = 10;

/** Polls until `want` records were emitted; waits on the reader's wake-up when idle. */
/**
 * Resolves once the reader's lag is `value`: the reader has probed the table since it changed.
 * Checks every 5 ms (a state to observe, not a time to wait); the test's timeout bounds it.
 */
async function lagIs(reader: Reader, value: number): Promise<void> {
  while (reader.lag?.()?.value !== value) {
    const r = reader.poll({ collect: () => expect.unreachable('a row while waiting for a probe') }, 1);
    if (r.state === 'end') throw new Error('an incrementing reader ended');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function take(reader: Reader, want: number): Promise<Row[]> {
  const rows: Row[] = [];
  while (rows.length < want) {
    const r = reader.poll({ collect: (v) => rows.push(v) }, want - rows.length);
    if (r.state === 'end') throw new Error('an incrementing reader ended');
    if (r.state === 'idle') await (r.wake ?? new Promise((resolve) => setTimeout(resolve, r.ms)));
  }
  return rows;
}

function reader(
  options: Omit<PostgresSourceOptions, 'connection'>,
  restoredState?: unknown[],
  subtaskIndex = 0,
  parallelism = 1,
): Reader {
  return sources
    .postgres<Row>({ connection: PG_CONNECTION, ...options })
    .createReader({ subtaskIndex, parallelism, attempt: 0, restoredState } as never);
}

describe('sources.postgres incrementing mode', () => {
  const tables = sumsTables();
  // Its own pool: the concurrent inserting transactions need more connections than the tables' pool has.
  const db = new pg.Pool({ connectionString: PG_CONNECTION, max: 6 });
  const inputs: string[] = [];
  let seq = 0;
  afterAll(async () => {
    for (const t of inputs) await db.query(`DROP TABLE IF EXISTS ${t}`);
    await tables.dropAll();
    await db.end();
  });

  async function table(columns = 'id bigserial PRIMARY KEY, key integer NOT NULL, value integer NOT NULL') {
    const name = `weir_test_pginc_${process.pid}_${seq++}_${Date.now()}`;
    inputs.push(name);
    await db.query(`CREATE TABLE ${name} (${columns})`);
    return name;
  }

  /**
   * Inserts values from..to-1 (key = value mod KEYS) in `txs` concurrent transactions, each taking
   * ids in turn in batches of 100, committed in reverse order of their first id: later ids commit
   * first, while earlier ones are still uncommitted.
   */
  async function insertConcurrently(name: string, from: number, to: number, txs = 4): Promise<void> {
    const clients = await Promise.all(Array.from({ length: txs }, () => db.connect()));
    try {
      for (const c of clients) await c.query('BEGIN');
      let t = 0;
      for (let v = from; v < to; v += 100) {
        const end = Math.min(to, v + 100);
        await clients[t].query(
          `INSERT INTO ${name} (key, value) SELECT g % ${KEYS}, g FROM generate_series(${v}, ${end - 1}) AS g ORDER BY g`,
        );
        t = (t + 1) % txs;
      }
      for (const c of [...clients].reverse()) await c.query('COMMIT');
    } finally {
      for (const c of clients) c.release();
    }
  }

  it('(a) rows committed out of id order are all read in id order; a restore emits exactly the rest', async () => {
    const name = await table();
    const options = { table: name, incrementing: { column: 'id', pollIntervalMs: 5 }, batchRows: 300 };
    const first = reader(options);
    let state: unknown[];
    const got: Row[] = [];
    try {
      await insertConcurrently(name, 0, 2000);
      got.push(...(await take(first, 1500)));
      state = first.snapshotState(1);
    } finally {
      first.close?.();
    }
    await insertConcurrently(name, 2000, 4000);
    const second = reader(options, state);
    try {
      got.push(...(await take(second, 2500)));
      // Nothing more: a poll finds no row (the reader is idle, not ended).
      expect(second.poll({ collect: () => expect.unreachable('a row past the end') }, 10).state).toBe('idle');
    } finally {
      second.close?.();
    }
    const ids = got.map((r) => Number(r.id));
    expect(ids).toEqual(Array.from({ length: 4000 }, (_, i) => i + 1));
    const values = got.map((r) => r.value as number).sort((a, b) => a - b);
    expect(values).toEqual(Array.from({ length: 4000 }, (_, i) => i));
  });

  it('(d) lag() counts the ids behind the greatest value, from min - 1 before the first row', async () => {
    const name = await table();
    await db.query(
      `INSERT INTO ${name} (key, value) SELECT g % ${KEYS}, g FROM generate_series(1, 1000) AS g`,
    );
    await db.query(`DELETE FROM ${name} WHERE id <= 200`);
    const r = reader({ table: name, incrementing: { column: 'id', pollIntervalMs: 5 } });
    try {
      // Nothing emitted: ids 201..1000 are behind (the helper fails on any emitted row).
      await lagIs(r, 800);
      expect((await take(r, 300)).map((row) => Number(row.id))).toEqual(
        Array.from({ length: 300 }, (_, i) => 201 + i),
      );
      expect(r.lag?.()).toEqual({ value: 500, unit: 'records' });
      await db.query(
        `INSERT INTO ${name} (key, value) SELECT g % ${KEYS}, g FROM generate_series(1, 500) AS g`,
      );
      await take(r, 1000);
      expect(r.lag?.()).toEqual({ value: 0, unit: 'records' });
    } finally {
      r.close?.();
    }
  });

  it('(e) transactions holding ids (an INSERT, a nextval after pg_current_xact_id()) hold the reader back', async () => {
    const name = await table();
    const r = reader({ table: name, incrementing: { column: 'id', pollIntervalMs: 5 } });
    const inserting = await db.connect();
    const holding = await db.connect();
    try {
      await inserting.query('BEGIN');
      await inserting.query(`INSERT INTO ${name} (key, value) VALUES (1, 1)`); // id 1
      await holding.query('BEGIN');
      await holding.query('SELECT pg_current_xact_id()');
      const taken = await holding.query(`SELECT nextval(pg_get_serial_sequence('${name}', 'id'))::int AS id`);
      expect(taken.rows[0].id).toBe(2);
      await db.query(
        `INSERT INTO ${name} (key, value) SELECT g % ${KEYS}, g FROM generate_series(3, 200) AS g`,
      );
      // Four more probes, each seeing one more id (ids 3..200 visible: lag = max - (3 - 1)): a
      // reader reading straight to max, or past a bound ignoring either transaction, would have
      // read 3..200 by the fourth (two probes make a max safe, the read follows its probe).
      for (let id = 201; id <= 204; id++) {
        await db.query(`INSERT INTO ${name} (key, value) VALUES (${id % KEYS}, ${id})`);
        await lagIs(r, id - 2);
      }
      expect(
        r.poll({ collect: () => expect.unreachable('a row past a running transaction') }, 10).state,
      ).toBe('idle');
      await inserting.query('COMMIT');
      await holding.query(`INSERT INTO ${name} (id, key, value) VALUES (2, 2, 2)`);
      await holding.query('COMMIT');
      expect((await take(r, 204)).map((row) => Number(row.id))).toEqual(
        Array.from({ length: 204 }, (_, i) => i + 1),
      );
    } finally {
      inserting.release();
      holding.release();
      r.close?.();
    }
  });

  it('(f) limit: an id taken by nextval() in its own statement and written after greater ids were read is lost', async () => {
    const name = await table();
    const r = reader({ table: name, incrementing: { column: 'id', pollIntervalMs: 5 } });
    try {
      const taken = await db.query(`SELECT nextval(pg_get_serial_sequence('${name}', 'id'))::int AS id`);
      expect(taken.rows[0].id).toBe(1);
      await db.query(
        `INSERT INTO ${name} (key, value) SELECT g % ${KEYS}, g FROM generate_series(2, 101) AS g`,
      );
      expect((await take(r, 100)).map((row) => Number(row.id))).toEqual(
        Array.from({ length: 100 }, (_, i) => i + 2),
      );
      await db.query(`INSERT INTO ${name} (id, key, value) VALUES (1, 1, 1)`);
      await db.query(`INSERT INTO ${name} (key, value) VALUES (2, 102)`); // id 102
      // The reader is past id 1: the next row it reads is 102, and id 1 never comes.
      expect((await take(r, 1)).map((row) => Number(row.id))).toEqual([102]);
      expect(r.lag?.()).toEqual({ value: 0, unit: 'records' });
    } finally {
      r.close?.();
    }
  });

  async function failure(options: Omit<PostgresSourceOptions, 'connection'>): Promise<unknown> {
    const r = reader(options);
    try {
      await take(r, 1);
    } catch (error) {
      return error;
    } finally {
      r.close?.();
    }
    throw new Error('the reader emitted a row instead of failing');
  }

  it('(b) a missing table, a missing column and a non-integer column are typed errors', async () => {
    const missing = `weir_test_pginc_missing_${process.pid}`;
    const e1 = await failure({ table: missing, incrementing: { column: 'id' } });
    expect(e1).toBeInstanceOf(PostgresTableNotFoundError);
    expect(String(e1)).toContain(missing);
    const t = await table('id bigint PRIMARY KEY, t text NOT NULL UNIQUE, at timestamptz NOT NULL UNIQUE');
    await db.query(`INSERT INTO ${t} VALUES (1, 'a', now())`);
    const cases: [string, RegExp][] = [
      ['nope', /column "nope" does not exist/],
      ['t', /incrementing column "t" has type text; it must be smallint, integer or bigint/],
      ['at', /incrementing column "at" has type timestamp with time zone/],
    ];
    for (const [column, message] of cases) {
      const error = await failure({ table: t, incrementing: { column, pollIntervalMs: 5 } });
      expect(error).toBeInstanceOf(PostgresSourceSchemaError);
      expect(String(error)).toMatch(message);
    }
  });

  it('(c) job: p=2, 3 splits, a throw after a checkpoint, rows inserted while it runs: exact', async () => {
    const name = await table();
    await db.query(
      `INSERT INTO ${name} (key, value) SELECT g % ${KEYS}, g FROM generate_series(0, ${N / 2 - 1}) AS g ORDER BY g`,
    );
    const out = await tables.create('weir_test_pginc_out');
    const client = await startJob(fixture('postgres-source-pipelines.mjs'), {
      parallelism: 2,
      restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
      checkpointing: { interval: 100, mode: 'exactly-once' },
      args: {
        n: String(N),
        connection: PG_CONNECTION,
        table: name,
        out,
        splits: '3',
        incrementing: 'true',
        failure: 'throw',
        at: '0.25',
      },
    });
    let restarts = 0;
    client.on('restarting', () => restarts++);
    const done = client.done.catch((error: unknown) => error);
    const count = async () => Number((await db.query(`SELECT count(*) AS n FROM ${out}`)).rows[0].n);
    await whenCommitted(client, async () => (await count()) >= N / 2);
    await insertConcurrently(name, N / 2, N);
    await whenCommitted(client, async () => (await count()) >= N);
    await client.cancel();
    expect(await done).toMatchObject({ name: 'JobCancelledError' });
    expect(restarts).toBe(1);
    expectExactRunningSums(await tables.rows(out), N, KEYS);
  }, 180_000);
});
