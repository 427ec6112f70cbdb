/**
 * sinks.postgres commits of at least COPY_MIN_ROWS rows go through COPY into a temporary table and
 * one INSERT ... SELECT; smaller ones through multi-row INSERTs. Against the real PostgreSQL
 * (127.0.0.1:5432, database `test`), the same awkward values (NULLs, tabs, newlines, backslashes,
 * JSON, bytea, arrays, dates) written both ways give the same table; the COPY path upserts too.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { COPY_MIN_ROWS } from '../../dist/connectors/postgres-sink.js';
import { sinks } from '../../dist/index.js';
import { PG_CONNECTION } from './pg-sums-tables.js';

const COLUMNS = 'id integer PRIMARY KEY, t text, j jsonb, b bytea, ts timestamptz, arr integer[], n integer';

/** Row i: every column but `id` varies, with the characters COPY's text format escapes. */
function record(i: number, round = 0): Record<string, unknown> {
  return {
    id: i,
    t: i % 5 === 0 ? null : `r${round} tab\there\nnew\\line\r${i} 'q' "d" \\N`,
    j: { i, s: 'a\tb\\c\n', nested: [1, null, 'x'] },
    b: Buffer.from([i & 255, 0, 92, 9, 10]),
    ts: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)),
    arr: [i, -i, 0],
    n: i % 3 === 0 ? null : i + round,
  };
}

describe('sinks.postgres: COPY for large commits', () => {
  const db = new pg.Pool({ connectionString: PG_CONNECTION, max: 2 });
  const tables: string[] = [];
  let seq = 0;
  afterAll(async () => {
    for (const t of tables) {
      await db.query(`DROP TABLE IF EXISTS ${t}`);
      await db
        .query('DELETE FROM weir_sink_commits WHERE sink_id LIKE $1', [`${t}:%`])
        .catch(() => undefined);
    }
    await db.end();
  });

  async function table(): Promise<string> {
    const name = `weir_test_pgcopy_${process.pid}_${seq++}_${Date.now()}`;
    tables.push(name);
    await db.query(`CREATE TABLE ${name} (${COLUMNS})`);
    return name;
  }

  /** Writes `commits` (lists of records) through one writer and committer, one checkpoint each. */
  async function write(name: string, commits: Record<string, unknown>[][], upsert = false): Promise<void> {
    const sink = sinks.postgres({
      connection: PG_CONNECTION,
      table: name,
      ...(upsert ? { upsertKey: ['id'] } : {}),
    });
    const wctx = {
      subtaskIndex: 0,
      parallelism: 1,
      attempt: 0,
      operatorName: 'copy',
      checkpointingMode: 'exactly-once' as const,
      restoredCheckpointId: undefined,
      sinkName: 'postgres',
    };
    const writer = sink.createWriter(wctx);
    const committer = sink.createCommitter(wctx);
    try {
      let checkpointId = 0;
      for (const records of commits) {
        for (const r of records) writer.write(r);
        checkpointId++;
        const tx = await writer.preCommit(checkpointId);
        await committer.commit(tx!, {
          checkpointId,
          subtaskIndex: 0,
          retry: 0,
          restored: false,
          sinkName: 'postgres',
        });
      }
    } finally {
      await writer.close?.();
      await committer.close?.();
    }
  }

  const dump = async (name: string): Promise<string[]> =>
    (await db.query<{ r: string }>(`SELECT ${name}::text AS r FROM ${name} ORDER BY id`)).rows.map(
      (x) => x.r,
    );

  it('the same rows through COPY and through INSERTs give the same table', async () => {
    const n = COPY_MIN_ROWS + 500;
    const records = Array.from({ length: n }, (_, i) => record(i));
    const viaCopy = await table();
    const viaInsert = await table();
    await write(viaCopy, [records]); // one commit of n >= COPY_MIN_ROWS rows
    const half = Math.ceil(n / 2); // two commits below COPY_MIN_ROWS
    await write(viaInsert, [records.slice(0, half), records.slice(half)]);
    const a = await dump(viaCopy);
    expect(a).toHaveLength(n);
    expect(a).toEqual(await dump(viaInsert));
    const row = await db.query(`SELECT * FROM ${viaCopy} WHERE id = 7`);
    expect(row.rows[0]).toEqual({ ...record(7), n: 7 });
  });

  it('upserts through COPY', async () => {
    const n = COPY_MIN_ROWS;
    const name = await table();
    await write(
      name,
      [Array.from({ length: n }, (_, i) => record(i)), Array.from({ length: n }, (_, i) => record(i, 1))],
      true,
    );
    const rows = await db.query<{ id: number; n: number | null }>(`SELECT id, n FROM ${name} ORDER BY id`);
    expect(rows.rows).toHaveLength(n);
    expect(rows.rows.map((r) => r.n)).toEqual(
      Array.from({ length: n }, (_, i) => (i % 3 === 0 ? null : i + 1)),
    );
  });
});
