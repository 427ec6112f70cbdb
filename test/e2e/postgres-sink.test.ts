/**
 * sinks.postgres against the real PostgreSQL server (postgres://root@127.0.0.1:5432/test), in real
 * jobs (dist/, worker threads) and a `weir run` process. Each test creates its own tables and
 * drops them (and its marker rows) afterwards.
 * (a) sequence -> keyed running sum -> postgres (plain INSERT), exactly-once, a throw after a
 *     checkpoint: every (key, count) row exactly once, final sums exact, at p=1 and p=2;
 * (b) the same in upsert mode: one row per key holding the exact final sum and count;
 * (c) a commit repeated with the same committable (a crash between commit and its
 *     acknowledgement) writes nothing the second time: the marker row;
 * (d) `weir run` killed with SIGKILL after checkpoints completed, rerun with --restore latest:
 *     rows exact;
 * (e) a missing table is a typed error naming it; at-least-once writes through, nothing missing;
 * (f) the database connection cut mid-run (an in-test TCP proxy): commits fail, the job restarts,
 *     and once the connection is back the rows are exact.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobOptions, sinks, startJob } from '../../dist/index.js';
import { ROOT, weir } from './cli-process.js';
import {
  expectExactRunningSums,
  expectedSums,
  fixture,
  holdFlag,
  type RunningSum,
  whenCommitted,
} from './helpers.js';
import { PG_CONNECTION, sumsTables } from './pg-sums-tables.js';
import { tcpProxy } from './tcp-proxy.js';

const CONNECTION = PG_CONNECTION;
const N = 30_000;
const KEYS = 10;

type Sum = RunningSum;
const expectExact = (sums: readonly Sum[], n: number): void => expectExactRunningSums(sums, n, KEYS);

describe('sinks.postgres end to end', () => {
  const pgTables = sumsTables(CONNECTION);
  const db = pgTables.db;
  const dirs: string[] = [];
  beforeAll(async () => {
    await db.query('SELECT 1');
  });
  afterAll(async () => {
    await pgTables.dropAll();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const table = (upsert: boolean): Promise<string> => pgTables.create('weir_test_pg', { upsert });
  /** The writer and committer context of subtask 0 of a p=1 exactly-once job, for direct calls. */
  const wctx = {
    subtaskIndex: 0,
    parallelism: 1,
    attempt: 0,
    operatorName: 'pg',
    checkpointingMode: 'exactly-once' as const,
    restoredCheckpointId: undefined,
    sinkName: 'postgres',
  };
  const rows = (name: string): Promise<Sum[]> => pgTables.rows(name);

  async function run(args: Record<string, string>, options: JobOptions) {
    const restoredFrom: (number | undefined)[] = [];
    const client = await startJob(fixture('service-pipelines.mjs'), {
      restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
      ...options,
      args: {
        n: String(N),
        keys: String(KEYS),
        source: 'sequence',
        sink: 'postgres',
        connection: CONNECTION,
        ...args,
      },
    });
    client.on('deployed', (e: { attempt: number; restoredFrom?: number }) => {
      if (e.attempt > 0) restoredFrom.push(e.restoredFrom);
    });
    return { result: await client.done, restoredFrom };
  }

  for (const parallelism of [1, 2]) {
    it(`(a) exactly-once INSERT, p=${parallelism}, a throw after a checkpoint: every row once`, async () => {
      const name = await table(false);
      const { result, restoredFrom } = await run(
        { table: name, failure: 'throw' },
        { parallelism, checkpointing: { interval: 100, mode: 'exactly-once' } },
      );
      expect(result.restarts).toBe(1);
      expect(typeof restoredFrom[0]).toBe('number');
      expectExact(await rows(name), N);
    });
  }

  it('(b) exactly-once upsert, p=2, a throw after a checkpoint: one exact row per key', async () => {
    const name = await table(true);
    const { result } = await run(
      { table: name, failure: 'throw', upsert: '1' },
      { parallelism: 2, checkpointing: { interval: 100, mode: 'exactly-once' } },
    );
    expect(result.restarts).toBe(1);
    const got = (await rows(name)).sort((a, b) => a.key - b.key);
    expect(got).toEqual(
      [...expectedSums(N, KEYS)].map(([key, e]) => ({ key, ...e })).sort((a, b) => a.key - b.key),
    );
  });

  it('(c) a repeated commit of the same committable writes nothing twice', async () => {
    const name = await table(false);
    const sink = sinks.postgres({ connection: CONNECTION, table: name });
    const writer = sink.createWriter(wctx);
    for (let i = 0; i < 5; i++) writer.write({ key: i, sum: i, count: 1 });
    const tx = await writer.preCommit(7);
    expect(tx).toBeDefined();
    await writer.close?.();
    const committer = sink.createCommitter(wctx);
    const cctx = { checkpointId: 7, subtaskIndex: 0, retry: 0, restored: false, sinkName: 'postgres' };
    await committer.commit(tx!, cctx);
    await committer.commit(tx!, { ...cctx, retry: 1 });
    // and again from a new committer (a new process after --restore), as a restored commit
    const again = sink.createCommitter(wctx);
    await again.commit(tx!, { ...cctx, restored: true });
    await committer.close?.();
    await again.close?.();
    expect((await rows(name)).map((r) => r.key).sort()).toEqual([0, 1, 2, 3, 4]);
  });

  it('(c) two commits of the same first committable at once (a cancelled attempt still committing while the restored one re-commits) write it once', async () => {
    // Both committers are held inside their transactions by a SHARE lock on the table (it blocks
    // INSERT, not the marker check), so both have checked the marker before either commits: the
    // window in which a cancelled attempt's commit overlapped its restored successor's and a
    // fresh marker (no row yet to lock) let both insert.
    const name = await table(false);
    const app = `weir-test-race-${process.pid}-${Date.now()}`;
    const connection = { connectionString: CONNECTION, application_name: app };
    const sink = sinks.postgres({ connection, table: name });
    const writer = sink.createWriter(wctx);
    for (let i = 0; i < 5; i++) writer.write({ key: i, sum: i, count: 1 });
    const tx = await writer.preCommit(3);
    await writer.close?.();
    const cctx = { checkpointId: 3, subtaskIndex: 0, retry: 0, restored: false, sinkName: 'postgres' };
    const first = sink.createCommitter(wctx);
    const second = sink.createCommitter(wctx);
    const locker = await db.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${name} IN SHARE MODE`);
      const commits = [first.commit(tx!, cctx), second.commit(tx!, { ...cctx, restored: true })];
      // Both transactions are waiting for a lock (the table's, or the other's marker row).
      for (;;) {
        const r = await db.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
          [app],
        );
        if (Number(r.rows[0].n) >= 2) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await locker.query('COMMIT');
      await Promise.all(commits);
    } finally {
      locker.release();
      await first.close?.();
      await second.close?.();
    }
    expect((await rows(name)).map((r) => r.key).sort()).toEqual([0, 1, 2, 3, 4]);
  });

  it('(d) weir run killed with SIGKILL, then --restore latest: rows exact', async () => {
    const name = await table(false);
    const dir = mkdtempSync(path.join(tmpdir(), 'weir-pg-kill-'));
    dirs.push(dir);
    const args = ['run', path.join(ROOT, 'test/fixtures/jobs/service-pipelines.mjs'), '--parallelism', '2'];
    args.push('--checkpoint-interval', '100', '--checkpoint-dir', path.join(dir, 'ckpt'), '--verbose');
    for (const [k, v] of Object.entries({
      n: String(N),
      keys: String(KEYS),
      source: 'sequence',
      sink: 'postgres',
      connection: CONNECTION,
      table: name,
      hold: path.join(dir, 'release'), // the sources hold half-way until this file exists
    }))
      args.push('--arg', `${k}=${v}`);
    const first = weir(args);
    // Kill without warning once some rows were committed (each line of stderr is a chance to look).
    while ((await rows(name)).length === 0) {
      expect(first.child.exitCode).toBe(null);
      await first.next();
    }
    first.child.kill('SIGKILL');
    expect(await first.exit).toBe(null);
    const before = (await rows(name)).length;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(N);

    writeFileSync(path.join(dir, 'release'), '');
    const second = weir([...args, '--restore', 'latest']);
    expect(await second.exit).toBe(0);
    expect(second.stderr).toMatch(/restored from checkpoint \d+/);
    expectExact(await rows(name), N);
  });

  it('(e) a missing table is a typed error naming it', async () => {
    const name = `weir_test_pg_missing_${process.pid}_${Date.now()}`;
    const client = await startJob(fixture('service-pipelines.mjs'), {
      parallelism: 1,
      restartStrategy: { type: 'none' },
      // No checkpointing: the table check is awaited by the pre-commit at end of input, whose
      // rejection fails the task. (With checkpointing, a pre-commit rejection also declines the
      // checkpoint, and with tolerableFailures 0 the job may fail first with the coordinator's
      // CheckpointFailureThresholdError, the typed error only in its cause chain.)
      args: {
        n: '100',
        keys: '3',
        source: 'sequence',
        sink: 'postgres',
        connection: CONNECTION,
        table: name,
      },
    });
    await expect(client.done).rejects.toThrow(new RegExp(`PostgreSQL table "${name}" does not exist`));
  });

  it('(e) at-least-once writes through: a throw after a checkpoint loses nothing', async () => {
    const name = await table(false);
    const { result } = await run(
      { table: name, failure: 'throw' },
      { parallelism: 2, checkpointing: { interval: 100, mode: 'at-least-once' } },
    );
    expect(result.restarts).toBe(1);
    const got = await rows(name);
    expect(got.length).toBeGreaterThanOrEqual(N);
    const seen = new Set(got.map((s) => `${s.key}/${s.count}`));
    for (const [key, e] of expectedSums(N, KEYS))
      for (let c = 1; c <= e.count; c++) expect(seen.has(`${key}/${c}`)).toBe(true);
  });
  it('(f) the connection to the database cut mid-run, restored at the restart: rows exact', async () => {
    const name = await table(false);
    const proxy = await tcpProxy(5432);
    const hold = holdFlag();
    try {
      const client = await startJob(fixture('service-pipelines.mjs'), {
        parallelism: 2,
        restartStrategy: { type: 'fixed-delay', attempts: 5, delay: 0 },
        checkpointing: { interval: 100, mode: 'exactly-once' },
        args: {
          n: String(N),
          keys: String(KEYS),
          source: 'sequence',
          sink: 'postgres',
          connection: `postgres://root@127.0.0.1:${proxy.port}/test`,
          table: name,
          hold: hold.path,
        },
      });
      let restarts = 0;
      client.on('restarting', () => {
        // the cut made a commit fail for good (after its retries): reconnect before the restore
        if (restarts++ === 0) void proxy.restore();
      });
      // cut once some rows are committed
      let cutAt = -1;
      await whenCommitted(client, async () => (cutAt = (await rows(name)).length) > 0);
      await proxy.cut();
      // the sources held half-way (so the cut lands mid-run); the rest now goes through the cut
      hold.release();
      const result = await client.done;
      expect(cutAt).toBeGreaterThan(0);
      expect(cutAt).toBeLessThan(N);
      expect(result.restarts).toBeGreaterThanOrEqual(1);
      expectExact(await rows(name), N);
    } finally {
      hold.dispose();
      await proxy.close();
    }
  });
});
