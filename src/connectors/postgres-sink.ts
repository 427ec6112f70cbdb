/**
 * `sinks.postgres({ connection, table, upsertKey?, columns?, createTable?, writer?, markerTable? })`:
 * writes records as rows of a PostgreSQL table. A committing sink (`src/api/committing-sink.ts`).
 *
 * Exactly-once (checkpointing `exactly-once`): the rows written since the last barrier are the
 * checkpoint's committable (stored in the checkpoint). Once the checkpoint completed, the committer
 * writes them in ONE transaction together with an upsert of a marker row in `weir_sink_commits`
 * keyed by `<writer>/<nonce>/<subtask>` holding the checkpoint id: a commit that finds the marker
 * already at or past its checkpoint does nothing, so a commit retried after a crash (also in
 * another process after `--restore latest`) writes nothing twice. The nonce is random per writer
 * instance and travels in the committable: a fresh start of the same job never mistakes its
 * checkpoint 1 for an older run's. One marker row per (writer instance, subtask) remains; they are
 * small, and may be deleted once the job that wrote them is gone.
 *
 * Upsert mode (`upsertKey`): `INSERT ... ON CONFLICT (upsertKey) DO UPDATE` of the other columns;
 * the committable keeps only the last row per key (a keyed aggregate's latest value), which also
 * bounds its size by the number of keys changed in the checkpoint interval.
 *
 * At-least-once (or no checkpointing): write-through. Rows are inserted in batches as they arrive
 * (every {@link CHUNK_ROWS} rows and at every barrier, one statement at a time in order); a
 * barrier's pre-commit resolves once every insert issued so far is done, so a checkpoint never
 * covers rows that are not in the table. After a restart, rows after the restored checkpoint are
 * written again (duplicates, or the same values again in upsert mode).
 *
 * Inserts are multi-row statements of at most {@link CHUNK_ROWS} rows (and 65535 parameters);
 * full-size ones are named prepared statements ({@link InsertStatements}). An exactly-once commit
 * of at least {@link COPY_MIN_ROWS} rows instead COPYs them into a temporary table and inserts
 * them from there in one statement ({@link copyRows}).
 * Each writer and each committer uses one connection (a `pg.Pool` of size 1), so the database
 * sees at most 2 connections per subtask; a slow database slows the commits, and a slow commit
 * holds back later commits of that subtask (memory: the staged committables). Failures: a commit
 * is retried with backoff (`commitRetry`), then the task fails and the job restarts from its
 * latest checkpoint and commits its committables again; a database that stays down fails the job
 * once the restart strategy gives up. Nothing is lost on the way, nothing is written twice.
 *
 * Why one file: the SQL it issues (statement builders, COPY encoding, the marker table), the
 * committer and the two writers (staging for exactly-once, write-through otherwise) are one
 * connector's contract; every piece is used only here, and the exactly-once argument (marker and
 * rows in one transaction) reads across them.
 */

import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type {
  CommitContext,
  CommitRetryOptions,
  Committer,
  CommittingSink,
  CommittingSinkWriter,
} from '../api/committing-sink.js';
import { InvalidOptionError, PostgresSinkError, PostgresTableNotFoundError } from '../errors.js';
import { loadPg, loadPgCopyFrom } from './client-libraries.js';
import { custom } from './custom-sink.js';
import { WriteThroughWriter } from './write-through-writer.js';

export interface PostgresSinkOptions {
  /** A connection string (`postgres://user@host:5432/db`) or a `pg` client configuration. */
  readonly connection: string | pg.ClientConfig;
  /** The target table, optionally schema-qualified (`schema.table`). Must exist unless `createTable`. */
  readonly table: string;
  /** Upsert on these columns (`ON CONFLICT (...) DO UPDATE`); they need a unique index. */
  readonly upsertKey?: readonly string[];
  /** Columns to write, from the record's fields of the same names (default: the first record's fields). */
  readonly columns?: readonly string[];
  /** Create the table when missing: column name -> SQL type; `upsertKey` becomes its primary key. */
  readonly createTable?: Readonly<Record<string, string>>;
  /** Name under which commit markers are kept (default `<table>:<operator name>`). */
  readonly writer?: string;
  /** The marker table (default `weir_sink_commits`; created when missing). */
  readonly markerTable?: string;
  readonly commitRetry?: CommitRetryOptions;
}

/** Committable of one checkpoint of one subtask. */
export interface PostgresTransaction {
  /** Marker row id: `<writer>/<nonce>/<subtask>`. */
  readonly markerId: string;
  readonly columns: readonly string[];
  readonly rows: readonly unknown[][];
}

/** Rows per INSERT statement (also bounded by PostgreSQL's 65535 parameters). */
export const CHUNK_ROWS = 2000;
const MAX_PARAMS = 65535;
/**
 * A commit of at least this many rows goes through COPY into a temporary table and one
 * `INSERT ... SELECT` from it, instead of multi-row INSERTs: 1.42x the rate at 0.41x the client
 * CPU for 100 000 rows (bench/README.md, "connectors"); below it the temporary table's creation
 * costs more than it saves.
 */
export const COPY_MIN_ROWS = 4 * CHUNK_ROWS;
/** Rows per chunk of COPY text handed to the stream. */
const COPY_CHUNK_ROWS = 5000;

/**
 * The driver's own text conversion of a parameter (dates in its time zone setting, arrays as array
 * literals, objects as JSON, Buffers as they are), so that a COPY writes exactly what the same
 * value as an INSERT parameter writes. Not in pg's typings; a stable part of its API since v7.
 */
let pgPrepareValue: ((value: unknown) => string | Buffer | null) | undefined;
function prepareValue(value: unknown): string | Buffer | null {
  // Loaded on first use, like the driver itself (see client-libraries.ts).
  pgPrepareValue ??= (
    createRequire(import.meta.url)('pg/lib/utils.js') as {
      prepareValue(value: unknown): string | Buffer | null;
    }
  ).prepareValue;
  return pgPrepareValue(value);
}

export function postgres<T extends Record<string, unknown>>(
  options: PostgresSinkOptions,
): CommittingSink<T, PostgresTransaction> {
  const o = options ?? ({} as PostgresSinkOptions);
  if (typeof o.connection !== 'string' && (typeof o.connection !== 'object' || o.connection === null)) {
    throw new InvalidOptionError(
      'sinks.postgres.connection',
      'must be a connection string or a pg client config',
    );
  }
  if (typeof o.table !== 'string' || o.table.length === 0) {
    throw new InvalidOptionError(
      'sinks.postgres.table',
      `must be a non-empty string, got ${String(o.table)}`,
    );
  }
  const names = (v: unknown, option: string): readonly string[] | undefined => {
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.length === 0 || v.some((c) => typeof c !== 'string' || c === '')) {
      throw new InvalidOptionError(`sinks.postgres.${option}`, 'must be a non-empty array of column names');
    }
    if (new Set(v).size !== v.length)
      throw new InvalidOptionError(`sinks.postgres.${option}`, 'names a column twice');
    return v;
  };
  const upsertKey = names(o.upsertKey, 'upsertKey');
  const columns = names(o.columns, 'columns');
  if (upsertKey && columns && upsertKey.some((k) => !columns.includes(k))) {
    throw new InvalidOptionError('sinks.postgres.upsertKey', 'every key column must be one of columns');
  }
  if (o.createTable !== undefined) {
    const types = o.createTable;
    if (typeof types !== 'object' || types === null || Object.keys(types).length === 0) {
      throw new InvalidOptionError('sinks.postgres.createTable', 'must map column names to SQL types');
    }
    for (const k of upsertKey ?? []) {
      if (!(k in types))
        throw new InvalidOptionError('sinks.postgres.createTable', `has no type for key column ${k}`);
    }
  }
  const table = quoteName(o.table);
  const markerTable = quoteName(o.markerTable ?? 'weir_sink_commits');
  const sink = custom<T, PostgresTransaction>({
    name: 'postgres',
    ...(o.commitRetry ? { commitRetry: o.commitRetry } : {}),
    createWriter(ctx) {
      const pool = newPool(o.connection, o.table);
      const ready = pool.then((p) => prepareTable(p, o.table, table, o.createTable, upsertKey));
      const markerId = `${o.writer ?? `${o.table}:${ctx.operatorName}`}/${randomBytes(6).toString('hex')}/${ctx.subtaskIndex}`;
      const shape = { table: o.table, columns, upsertKey };
      return ctx.checkpointingMode === 'exactly-once'
        ? new StagingWriter<T>(pool, ready, markerId, shape)
        : new DirectWriter<T>(pool, ready, table, shape);
    },
    createCommitter(): Committer<PostgresTransaction> {
      // Connected lazily: under at-least-once nothing is staged and nothing committed.
      let pool: Promise<pg.Pool> | null = null;
      let markers: Promise<void> | null = null;
      const statements = new InsertStatements();
      return {
        async commit(tx, cctx) {
          pool ??= newPool(o.connection, o.table).catch((error: unknown) => {
            pool = null;
            throw error;
          });
          const p = await pool;
          markers ??= createMarkerTable(p, markerTable);
          await markers.catch((error: unknown) => {
            markers = null;
            throw error;
          });
          await commitTransaction(p, statements, table, markerTable, o.table, tx, cctx, upsertKey);
        },
        async close() {
          await (await pool?.catch(() => null))?.end();
        },
      };
    },
  });
  const readColumns = columns ?? (o.createTable ? Object.keys(o.createTable) : undefined);
  return {
    ...sink,
    type: 'postgres',
    readCommitted: () => readCommittedRows(o.connection, o.table, table, readColumns),
    ...(upsertKey ? { committedOutput: 'latest-per-key' as const } : {}),
  };
}

/**
 * Every row of the table (`SELECT <columns> FROM <table>`, `*` when the columns are neither
 * configured nor given by `createTable`), as objects of the selected columns, in no order. For
 * `weir verify` (main thread, after a run). In upsert mode these are the latest rows per key.
 * Values come back as the driver parses them (bigint and numeric as strings, timestamps as
 * Dates). A missing table has no rows; any other failure (database down) throws a PostgresSinkError.
 */
async function readCommittedRows(
  connection: string | pg.ClientConfig,
  name: string,
  quoted: string,
  columns: readonly string[] | undefined,
): Promise<unknown[]> {
  const pool = await newPool(connection, name);
  try {
    const cols = columns ? columns.map(quoteName).join(', ') : '*';
    const r = await pool.query<Record<string, unknown>>(`SELECT ${cols} FROM ${quoted}`);
    return r.rows;
  } catch (error) {
    // Like a file sink's missing directory: no table yet (the sink creates it), nothing committed.
    if (pgCode(error) === '42P01') return [];
    throw sinkError(name, 'reading back the committed rows', error);
  } finally {
    await pool.end();
  }
}

/** `a.b` -> `"a"."b"`, with embedded quotes doubled. */
export function quoteName(name: string): string {
  return name
    .split('.')
    .map((part) => `"${part.replaceAll('"', '""')}"`)
    .join('.');
}

/**
 * A multi-row INSERT of `rows` (one statement; the caller chunks), with `ON CONFLICT (key) DO
 * UPDATE` of the other columns in upsert mode (`DO NOTHING` when every column is a key).
 */
export function insertStatement(
  table: string,
  columns: readonly string[],
  rowCount: number,
  upsertKey: readonly string[] | undefined,
): string {
  const cols = columns.map(quoteName).join(', ');
  const values: string[] = [];
  let p = 1;
  for (let r = 0; r < rowCount; r++) {
    const row: string[] = [];
    for (let c = 0; c < columns.length; c++) row.push(`$${p++}`);
    values.push(`(${row.join(', ')})`);
  }
  let sql = `INSERT INTO ${table} (${cols}) VALUES ${values.join(', ')}`;
  if (upsertKey !== undefined) {
    const rest = columns.filter((c) => !upsertKey.includes(c));
    sql += ` ON CONFLICT (${upsertKey.map(quoteName).join(', ')}) DO `;
    sql +=
      rest.length === 0
        ? 'NOTHING'
        : `UPDATE SET ${rest.map((c) => `${quoteName(c)} = EXCLUDED.${quoteName(c)}`).join(', ')}`;
  }
  return sql;
}

/** Rows per statement for `columnCount` columns: {@link CHUNK_ROWS}, or fewer to stay under 65535 parameters. */
export function rowsPerStatement(columnCount: number): number {
  return Math.max(1, Math.min(CHUNK_ROWS, Math.floor(MAX_PARAMS / columnCount)));
}

/** Keeps the last row of every key (upsert mode: one statement may not update a row twice). */
export function lastPerKey(
  columns: readonly string[],
  rows: unknown[][],
  key: readonly string[],
): unknown[][] {
  const idx = key.map((k) => columns.indexOf(k));
  const byKey = new Map<string, unknown[]>();
  for (const row of rows) {
    const k = idx.length === 1 ? String(row[idx[0]]) : JSON.stringify(idx.map((i) => row[i]));
    byKey.delete(k); // re-insert: keep the order of last writes
    byKey.set(k, row);
  }
  return [...byKey.values()];
}

/**
 * Named prepared statements for full-size chunks, one per statement text (the name is a hash of
 * it, so two texts never share a name on one connection). Parsing and planning a 2 000-row
 * INSERT costs the server more than executing it: prepared once per connection, full chunks went
 * 1.5-1.6x faster than the same statement sent as text (bench/README.md, "connectors"). Partial
 * chunks (the tail of a commit) go as text, so at most one statement per shape is prepared.
 * Owned by one writer or committer (no module-level state).
 */
export class InsertStatements {
  readonly #byShape = new Map<string, pg.QueryConfig>();

  /** The prepared statement (without values) for a full chunk of `rowCount` rows. */
  full(
    table: string,
    columns: readonly string[],
    rowCount: number,
    upsertKey: readonly string[] | undefined,
  ) {
    const shape = `${table}|${columns.join(',')}|${rowCount}|${upsertKey?.join(',') ?? ''}`;
    let q = this.#byShape.get(shape);
    if (q === undefined) {
      const text = insertStatement(table, columns, rowCount, upsertKey);
      q = { name: `weir_ins_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text };
      this.#byShape.set(shape, q);
    }
    return q;
  }
}

async function insertRows(
  client: pg.Pool | pg.PoolClient,
  statements: InsertStatements,
  table: string,
  columns: readonly string[],
  rows: readonly unknown[][],
  upsertKey: readonly string[] | undefined,
): Promise<void> {
  const per = rowsPerStatement(columns.length);
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    const values = chunk.flat();
    if (chunk.length === per)
      await client.query({ ...statements.full(table, columns, per, upsertKey), values });
    else await client.query(insertStatement(table, columns, chunk.length, upsertKey), values);
  }
}

/**
 * One field of COPY's text format: `\N` for NULL, else the driver's text form of the value with
 * backslash, newline, carriage return and tab escaped; a Buffer (bytea) as `\\x<hex>`.
 */
export function copyField(value: unknown): string {
  const v = value === undefined ? null : prepareValue(value);
  if (v === null) return '\\N';
  const text = Buffer.isBuffer(v) ? `\\x${v.toString('hex')}` : v;
  return /[\\\n\r\t]/.test(text)
    ? text.replace(/[\\\n\r\t]/g, (c) =>
        c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t',
      )
    : text;
}

/** `rows` as COPY text chunks of {@link COPY_CHUNK_ROWS} rows. */
export function* copyText(rows: readonly unknown[][]): Generator<string> {
  for (let i = 0; i < rows.length; i += COPY_CHUNK_ROWS) {
    let chunk = '';
    const end = Math.min(rows.length, i + COPY_CHUNK_ROWS);
    for (let r = i; r < end; r++) {
      const row = rows[r];
      for (let c = 0; c < row.length; c++) chunk += (c === 0 ? '' : '\t') + copyField(row[c]);
      chunk += '\n';
    }
    yield chunk;
  }
}

/**
 * Inserts `rows` inside the caller's transaction by COPY into a temporary table dropped at commit,
 * then one `INSERT ... SELECT` (with the same `ON CONFLICT` clause as the multi-row INSERTs). The
 * temporary table has the written columns' types (no constraints: a NOT NULL column left to its
 * default stays out of it), so each value is parsed by the column's own type.
 */
async function copyRows(
  client: pg.PoolClient,
  table: string,
  columns: readonly string[],
  rows: readonly unknown[][],
  upsertKey: readonly string[] | undefined,
): Promise<void> {
  const stage = 'weir_sink_stage';
  const cols = columns.map(quoteName).join(', ');
  await client.query(
    `CREATE TEMP TABLE ${stage} ON COMMIT DROP AS SELECT ${cols} FROM ${table} WITH NO DATA`,
  );
  const copyFrom = await loadPgCopyFrom();
  await pipeline(Readable.from(copyText(rows)), client.query(copyFrom(`COPY ${stage} (${cols}) FROM STDIN`)));
  const insert = insertStatement(table, columns, 1, upsertKey).replace(
    /VALUES \([^)]*\)/,
    `SELECT ${cols} FROM ${stage}`,
  );
  await client.query(insert);
}

/** A pool of one connection (`pg` loads on first use). */
async function newPool(connection: string | pg.ClientConfig, table: string): Promise<pg.Pool> {
  const pg = await loadPg();
  const pool = new pg.Pool({
    ...(typeof connection === 'string' ? { connectionString: connection } : connection),
    max: 1,
  });
  // An idle connection that breaks emits 'error' on the pool; unhandled, it would crash the
  // process. The next query reconnects (and fails, and is retried, if the database is down).
  pool.on('error', (error) => {
    console.warn(`weir: sinks.postgres (${table}): idle connection failed:`, error.message);
  });
  return pool;
}

/** PostgreSQL error code, if any. */
function pgCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? (error as { code?: string }).code : undefined;
}

function sinkError(table: string, what: string, error: unknown): Error {
  if (error instanceof PostgresTableNotFoundError || error instanceof PostgresSinkError) return error;
  if (pgCode(error) === '42P01') return new PostgresTableNotFoundError(table, { cause: error });
  return new PostgresSinkError(table, `${what}: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}

/** Checks the table exists (creating it with `createTable`); a missing one is a typed error naming it. */
async function prepareTable(
  pool: pg.Pool,
  name: string,
  quoted: string,
  createTable: Readonly<Record<string, string>> | undefined,
  upsertKey: readonly string[] | undefined,
): Promise<void> {
  try {
    if (createTable !== undefined) {
      const cols = Object.entries(createTable).map(([c, type]) => `${quoteName(c)} ${type}`);
      if (upsertKey) cols.push(`PRIMARY KEY (${upsertKey.map(quoteName).join(', ')})`);
      await createIfMissing(pool, `CREATE TABLE IF NOT EXISTS ${quoted} (${cols.join(', ')})`);
    }
    const r = await pool.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [quoted]);
    if (r.rows[0]?.t == null) throw new PostgresTableNotFoundError(name);
  } catch (error) {
    throw sinkError(name, 'checking the table', error);
  }
}

/** `CREATE ... IF NOT EXISTS` is not safe under concurrency: a lost race is a unique violation. */
async function createIfMissing(pool: pg.Pool, sql: string): Promise<void> {
  try {
    await pool.query(sql);
  } catch (error) {
    const code = pgCode(error);
    if (code !== '23505' && code !== '42P07') throw error;
  }
}

function createMarkerTable(pool: pg.Pool, markerTable: string): Promise<void> {
  return createIfMissing(
    pool,
    `CREATE TABLE IF NOT EXISTS ${markerTable} (sink_id text PRIMARY KEY, checkpoint_id bigint NOT NULL, ` +
      'committed_at timestamptz NOT NULL DEFAULT now())',
  );
}

/**
 * Commits one checkpoint's rows and its marker in one transaction, unless the marker shows it
 * committed already. Two committers of one marker serialise on its row: a cancelled attempt's
 * commit still in flight while the restored attempt re-commits the same committable (the
 * cancelled task does not wait for its commit). A `SELECT ... FOR UPDATE` alone did not: before
 * a marker's first commit there is no row to lock, both transactions passed the check and both
 * inserted the rows. So the marker row is claimed first, by an upsert that inserts it (checkpoint
 * 0) or locks it; the second transaction waits on its unique key and then sees the first's
 * checkpoint (READ COMMITTED: each statement reads what committed before it; under a stricter
 * isolation level the second fails with a serialisation error and its retry skips).
 */
async function commitTransaction(
  pool: pg.Pool,
  statements: InsertStatements,
  table: string,
  markerTable: string,
  tableName: string,
  tx: PostgresTransaction,
  ctx: CommitContext,
  upsertKey: readonly string[] | undefined,
): Promise<void> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw sinkError(tableName, `connecting to commit checkpoint ${ctx.checkpointId}`, error);
  }
  let broken = false;
  try {
    await client.query('BEGIN');
    // Claims the marker row before anything else: an existing row is locked (DO UPDATE), a new
    // one is inserted with checkpoint 0, so a second committer of the same marker waits on the
    // row's unique key until this transaction ends and then reads what it committed.
    const m = await client.query<{ checkpoint_id: string }>(
      `INSERT INTO ${markerTable} (sink_id, checkpoint_id) VALUES ($1, 0) ` +
        'ON CONFLICT (sink_id) DO UPDATE SET sink_id = EXCLUDED.sink_id RETURNING checkpoint_id',
      [tx.markerId],
    );
    if (Number(m.rows[0].checkpoint_id) >= ctx.checkpointId) {
      await client.query('ROLLBACK');
      return;
    }
    if (tx.rows.length >= COPY_MIN_ROWS) await copyRows(client, table, tx.columns, tx.rows, upsertKey);
    else await insertRows(client, statements, table, tx.columns, tx.rows, upsertKey);
    await client.query(
      `INSERT INTO ${markerTable} (sink_id, checkpoint_id) VALUES ($1, $2) ` +
        'ON CONFLICT (sink_id) DO UPDATE SET checkpoint_id = EXCLUDED.checkpoint_id, committed_at = now()',
      [tx.markerId, ctx.checkpointId],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      // The connection is gone: the server rolls the transaction back when it notices.
      broken = true;
      console.warn(`weir: sinks.postgres (${tableName}): rollback failed:`, rollbackError);
    });
    throw sinkError(tableName, `committing checkpoint ${ctx.checkpointId}`, error);
  } finally {
    client.release(broken);
  }
}

interface TableShape {
  readonly table: string;
  readonly columns: readonly string[] | undefined;
  readonly upsertKey: readonly string[] | undefined;
}

/** Turns records into rows of the sink's columns (the first record's fields when not configured). */
class RowMapper {
  columns: readonly string[] | undefined;
  readonly #derived: boolean;
  constructor(readonly shape: TableShape) {
    this.columns = shape.columns;
    this.#derived = shape.columns === undefined;
  }

  row(record: Record<string, unknown>): unknown[] {
    if (typeof record !== 'object' || record === null) {
      throw new PostgresSinkError(
        this.shape.table,
        `a record must be an object with the columns as fields, got ${typeof record}`,
      );
    }
    if (this.columns === undefined) {
      this.columns = Object.keys(record);
      if (this.shape.upsertKey?.some((k) => !this.columns!.includes(k))) {
        throw new PostgresSinkError(this.shape.table, `the records have no field for every upsertKey column`);
      }
    }
    const cols = this.columns;
    if (this.#derived && Object.keys(record).length !== cols.length) {
      throw new PostgresSinkError(
        this.shape.table,
        `record fields ${JSON.stringify(Object.keys(record))} differ from the columns ${JSON.stringify(cols)} ` +
          'taken from the first record; pass columns to choose them',
      );
    }
    const out = new Array<unknown>(cols.length);
    for (let i = 0; i < cols.length; i++) out[i] = record[cols[i]] ?? null;
    return out;
  }
}

/** Exactly-once: rows wait in memory until the barrier, then travel in the checkpoint. */
class StagingWriter<T extends Record<string, unknown>>
  implements CommittingSinkWriter<T, PostgresTransaction>
{
  #rows: unknown[][] = [];
  readonly #mapper: RowMapper;
  /** The table check, then the end of the pool it used; awaited by every pre-commit. */
  #checked: Promise<void> | null = null;

  constructor(
    readonly pool: Promise<pg.Pool>,
    readonly ready: Promise<void>,
    readonly markerId: string,
    readonly shape: TableShape,
  ) {
    this.#mapper = new RowMapper(shape);
    // Observed by preCommit; this keeps an early failure from being an unhandled rejection.
    ready.catch(() => undefined);
  }

  write(record: T): void {
    this.#rows.push(this.#mapper.row(record));
  }

  async preCommit(): Promise<PostgresTransaction | undefined> {
    let rows = this.#rows;
    this.#rows = [];
    this.#checked ??= this.ready.then(async () => (await this.pool).end());
    await this.#checked;
    if (rows.length === 0) return undefined;
    const columns = this.#mapper.columns!;
    if (this.shape.upsertKey) rows = lastPerKey(columns, rows, this.shape.upsertKey);
    return { markerId: this.markerId, columns, rows };
  }

  async close(): Promise<void> {
    if (this.#checked === null) await (await this.pool.catch(() => null))?.end();
    else await this.#checked.catch(() => undefined);
  }
}

/** At-least-once / no checkpointing: inserts in order as rows arrive (see WriteThroughWriter). */
class DirectWriter<T extends Record<string, unknown>> extends WriteThroughWriter<T, unknown[]> {
  readonly #mapper: RowMapper;
  readonly #statements = new InsertStatements();

  constructor(
    readonly pool: Promise<pg.Pool>,
    ready: Promise<void>,
    readonly table: string,
    readonly shape: TableShape,
  ) {
    super(CHUNK_ROWS, ready);
    this.#mapper = new RowMapper(shape);
  }

  protected item(record: T): unknown[] {
    return this.#mapper.row(record);
  }

  protected override compact(rows: unknown[][]): unknown[][] {
    return this.shape.upsertKey ? lastPerKey(this.#mapper.columns!, rows, this.shape.upsertKey) : rows;
  }

  protected async send(rows: unknown[][]): Promise<void> {
    return insertRows(
      await this.pool,
      this.#statements,
      this.table,
      this.#mapper.columns!,
      rows,
      this.shape.upsertKey,
    );
  }

  protected sendError(error: unknown): unknown {
    return sinkError(this.shape.table, 'inserting', error);
  }

  protected async closeClient(): Promise<void> {
    await (await this.pool.catch(() => null))?.end();
  }
}
