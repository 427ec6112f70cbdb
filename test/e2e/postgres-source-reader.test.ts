/**
 * The sources.postgres reader driven directly (no job) against the real PostgreSQL
 * (127.0.0.1:5432, database `test`); every table is the test's own and is dropped afterwards.
 * - lag(): the rows counted at start minus the rows emitted, 0 at the end;
 * - a reader restored from a snapshot taken after k rows emits exactly the rows after them;
 * - a composite key with repeated leading values, in 3 splits over 2 subtasks: every row once;
 * - typed errors: a missing table, a missing column, a nullable key, a non-unique key, a key
 *   type with no ordering.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type PostgresSourceOptions,
  PostgresSourceSchemaError,
  PostgresTableNotFoundError,
  sources,
} from '../../dist/index.js';
import { PG_CONNECTION } from './pg-sums-tables.js';

type Row = Record<string, unknown>;
type Reader = ReturnType<ReturnType<typeof sources.postgres<Row>>['createReader']>;

/** Polls until `want` records were emitted (or the end); waits on the reader's wake-up when idle. */
async function take(
  reader: Reader,
  want = Number.POSITIVE_INFINITY,
): Promise<{ rows: Row[]; ended: boolean }> {
  const rows: Row[] = [];
  for (;;) {
    if (rows.length >= want) return { rows, ended: false };
    const r = reader.poll({ collect: (v) => rows.push(v) }, Math.min(want - rows.length, 500));
    if (r.state === 'end') return { rows, ended: true };
    if (r.state === 'idle') await (r.wake ?? new Promise((resolve) => setTimeout(resolve, r.ms)));
  }
}

function reader(
  options: Omit<PostgresSourceOptions, 'connection'>,
  subtaskIndex = 0,
  parallelism = 1,
  restoredState?: unknown[],
): Reader {
  return sources
    .postgres<Row>({ connection: PG_CONNECTION, ...options })
    .createReader({ subtaskIndex, parallelism, attempt: 0, restoredState } as never);
}

describe('sources.postgres reader', () => {
  const db = new pg.Pool({ connectionString: PG_CONNECTION, max: 2 });
  const tables: string[] = [];
  let seq = 0;
  afterAll(async () => {
    for (const t of tables) await db.query(`DROP TABLE IF EXISTS ${t}`);
    await db.end();
  });

  async function table(columns: string, fill?: string): Promise<string> {
    const name = `weir_test_pgsrc_r_${process.pid}_${seq++}_${Date.now()}`;
    tables.push(name);
    await db.query(`CREATE TABLE ${name} (${columns})`);
    if (fill !== undefined) await db.query(`INSERT INTO ${name} ${fill}`);
    return name;
  }

  it('lag() is the rows counted at start minus those emitted; a restore resumes right after the last emitted row', async () => {
    const N = 5000;
    const k = 1234;
    const t = await table(
      'id integer PRIMARY KEY, v text NOT NULL',
      `SELECT g, 'v' || g FROM generate_series(1, ${N}) g`,
    );
    const first = reader({ table: t, key: 'id' });
    try {
      expect(first.lag?.()).toBeUndefined(); // nothing counted yet
      const head = await take(first, k);
      expect(head.rows.map((r) => r.id)).toEqual(Array.from({ length: k }, (_, i) => i + 1));
      expect(first.lag?.()).toEqual({ value: N - k, unit: 'records' });
      const snapshot = first.snapshotState(1);

      const second = reader({ table: t, key: 'id' }, 0, 1, snapshot);
      try {
        const rest = await take(second);
        expect(rest.ended).toBe(true);
        expect(rest.rows.map((r) => r.id)).toEqual(Array.from({ length: N - k }, (_, i) => k + i + 1));
        expect(rest.rows[0]).toEqual({ id: k + 1, v: `v${k + 1}` });
        expect(second.lag?.()).toEqual({ value: 0, unit: 'records' });
      } finally {
        second.close?.();
      }
      const tail = await take(first);
      expect(tail.ended).toBe(true);
      expect(first.lag?.()).toEqual({ value: 0, unit: 'records' });
    } finally {
      first.close?.();
    }
  });

  it('a composite key in 3 splits over 2 subtasks: every row once', async () => {
    const t = await table(
      'a text NOT NULL, b bigint NOT NULL, PRIMARY KEY (a, b)',
      `SELECT 'k' || (g % 7), g FROM generate_series(1, 3000) g`,
    );
    const seen: string[] = [];
    for (const subtask of [0, 1]) {
      const r = reader({ table: t, key: ['a', 'b'], splits: 3, batchRows: 100 }, subtask, 2);
      try {
        const { rows, ended } = await take(r);
        expect(ended).toBe(true);
        for (const row of rows) seen.push(`${row.a}/${row.b}`);
        expect(r.snapshotState(1)).toHaveLength(subtask === 0 ? 2 : 1);
      } finally {
        r.close?.();
      }
    }
    expect(seen).toHaveLength(3000);
    expect(new Set(seen).size).toBe(3000);
  });

  async function failure(options: Omit<PostgresSourceOptions, 'connection'>): Promise<unknown> {
    const r = reader(options);
    try {
      await take(r);
    } catch (error) {
      return error;
    } finally {
      r.close?.();
    }
    throw new Error('the reader ended without an error');
  }

  it('a missing table is a PostgresTableNotFoundError naming it', async () => {
    const name = `weir_test_pgsrc_missing_${process.pid}`;
    const error = await failure({ table: name, key: 'id' });
    expect(error).toBeInstanceOf(PostgresTableNotFoundError);
    expect(String(error)).toContain(name);
  });

  it('a missing column, a nullable key, a non-unique key and an unordered key are PostgresSourceSchemaErrors', async () => {
    const t = await table('id integer PRIMARY KEY, n integer, d integer NOT NULL, p point NOT NULL');
    const cases: [Omit<PostgresSourceOptions, 'connection'>, RegExp][] = [
      [{ table: t, key: 'id', columns: ['nope'] }, /column "nope" does not exist/],
      [{ table: t, key: 'nope' }, /column "nope" does not exist/],
      [{ table: t, key: 'n' }, /key column "n" is nullable/],
      [{ table: t, key: 'd' }, /the key \(d\) is not unique/],
      [{ table: t, key: ['id', 'p'] }, /the key \(id, p\) has a type with no ordering/],
    ];
    for (const [options, message] of cases) {
      const error = await failure(options);
      expect(error).toBeInstanceOf(PostgresSourceSchemaError);
      expect(String(error)).toMatch(message);
      expect((error as PostgresSourceSchemaError).failureKind).toBe('fatal');
    }
  });
});
