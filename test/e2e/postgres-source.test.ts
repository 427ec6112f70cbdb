/**
 * sources.postgres end to end against the real PostgreSQL (127.0.0.1:5432, database `test`): a
 * table of N rows (id, key = id mod KEYS, value = id) scanned by key `id` -> keyed running sum ->
 * sinks.postgres exactly-once. Every table is the test's own and is dropped afterwards. Where a
 * test acts mid-run, the sources hold half-way until the test writes a flag file (args.hold).
 * (a) p=2 with 3 hash splits, a throw after two source snapshots: the rows are exact;
 * (b) the same with the worker exiting (process.exit): exact;
 * (c) cancelled at p=2 once rows were committed, restored from the latest checkpoint at p=3 (the
 *     split entries redistributed): exact, and the second run read only what was left;
 * (d) `weir run` killed with SIGKILL once rows were committed, rerun with --restore latest: exact;
 * (e) every connection to the database (source and sink, through an in-test TCP proxy) cut once
 *     rows were committed, then accepted again: the job recovers and the rows are exact.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startJob } from '../../dist/index.js';
import { ROOT, weir } from './cli-process.js';
import { expectExactRunningSums, fixture, whenCommitted } from './helpers.js';
import { PG_CONNECTION, sumsTables } from './pg-sums-tables.js';
import { tcpProxy } from './tcp-proxy.js';

const N = 20_000;
const KEYS = 10;

describe('sources.postgres end to end', () => {
  const tables = sumsTables();
  const inputs: string[] = [];
  const dirs: string[] = [];
  let seq = 0;
  afterAll(async () => {
    for (const t of inputs) await tables.db.query(`DROP TABLE IF EXISTS ${t}`);
    await tables.dropAll();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function inputTable(): Promise<string> {
    const name = `weir_test_pgsrc_${process.pid}_${seq++}_${Date.now()}`;
    inputs.push(name);
    await tables.db.query(
      `CREATE TABLE ${name} (id bigint PRIMARY KEY, key integer NOT NULL, value integer NOT NULL)`,
    );
    await tables.db.query(
      `INSERT INTO ${name} SELECT g, g % ${KEYS}, g FROM generate_series(0, ${N - 1}) AS g`,
    );
    return name;
  }

  function jobArgs(table: string, out: string, extra: Record<string, string> = {}): Record<string, string> {
    return { n: String(N), connection: PG_CONNECTION, table, out, ...extra };
  }

  for (const failure of ['throw', 'exit'] as const) {
    it(`(${failure === 'throw' ? 'a' : 'b'}) p=2, 3 splits, a worker ${failure} after a checkpoint: exact`, async () => {
      const table = await inputTable();
      const out = await tables.create('weir_test_pgsrc_out');
      const client = await startJob(fixture('postgres-source-pipelines.mjs'), {
        parallelism: 2,
        restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
        checkpointing: { interval: 100, mode: 'exactly-once' },
        args: jobArgs(table, out, { splits: '3', failure }),
      });
      const result = await client.done;
      expect(result.restarts).toBe(1);
      expectExactRunningSums(await tables.rows(out), N, KEYS);
    }, 180_000);
  }

  it('(c) cancelled at p=2 once rows were committed, restored at p=3: exact', async () => {
    const table = await inputTable();
    const out = await tables.create('weir_test_pgsrc_out');
    const dir = mkdtempSync(join(tmpdir(), 'weir-pgsrc-'));
    dirs.push(dir);
    const hold = join(dir, 'go');
    const args = jobArgs(table, out, { hold });
    const first = await startJob(fixture('postgres-source-pipelines.mjs'), {
      parallelism: 2,
      args,
      checkpointing: { interval: 100, mode: 'exactly-once', dir },
    });
    const firstDone = first.done.then(
      () => 'finished',
      (e: unknown) => e,
    );
    await whenCommitted(first, async () => (await tables.rows(out)).length > 0);
    await first.cancel();
    expect(String(await firstDone)).toMatch(/cancelled/);
    const before = (await tables.rows(out)).length;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(N);

    writeFileSync(hold, '');
    const second = await startJob(fixture('postgres-source-pipelines.mjs'), {
      parallelism: 3,
      args,
      checkpointing: { interval: 100, mode: 'exactly-once', dir },
      restoreFrom: 'latest',
    });
    const result = await second.done;
    expect(result.plan.vertices.every((v) => v.parallelism === 3)).toBe(true);
    // the restored cursors were past the start: the second run read only what they left
    const emitted = result.metrics.operators.find((o) => o.name === 'rows')?.recordsOut ?? 0;
    expect(emitted).toBeGreaterThan(0);
    expect(emitted).toBeLessThan(N);
    expectExactRunningSums(await tables.rows(out), N, KEYS);
  }, 180_000);

  it('(d) weir run killed with SIGKILL, then --restore latest: exact', async () => {
    const table = await inputTable();
    const out = await tables.create('weir_test_pgsrc_out');
    const dir = mkdtempSync(join(tmpdir(), 'weir-pgsrc-kill-'));
    dirs.push(dir);
    const args = [
      'run',
      join(ROOT, 'test/fixtures/jobs/postgres-source-pipelines.mjs'),
      '--parallelism',
      '2',
    ];
    args.push('--checkpoint-interval', '100', '--checkpoint-dir', join(dir, 'ckpt'), '--verbose');
    const hold = join(dir, 'go');
    for (const [k, v] of Object.entries(jobArgs(table, out, { hold }))) args.push('--arg', `${k}=${v}`);
    const first = weir(args);
    // Kill once some rows were committed (each line of stderr is a chance to look).
    while ((await tables.rows(out)).length === 0) {
      expect(first.child.exitCode).toBe(null);
      await first.next();
    }
    first.child.kill('SIGKILL');
    expect(await first.exit).toBe(null);
    const before = (await tables.rows(out)).length;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(N);

    writeFileSync(hold, '');
    const second = weir([...args, '--restore', 'latest']);
    expect(await second.exit).toBe(0);
    expect(second.stderr).toMatch(/restored from checkpoint \d+/);
    expectExactRunningSums(await tables.rows(out), N, KEYS);
  }, 180_000);

  it('(e) every connection to the database cut mid-run and accepted again: exact', async () => {
    const table = await inputTable();
    const out = await tables.create('weir_test_pgsrc_out');
    const dir = mkdtempSync(join(tmpdir(), 'weir-pgsrc-cut-'));
    dirs.push(dir);
    const hold = join(dir, 'go');
    const proxy = await tcpProxy(5432);
    try {
      const client = await startJob(fixture('postgres-source-pipelines.mjs'), {
        parallelism: 2,
        restartStrategy: { type: 'fixed-delay', attempts: 5, delay: 0 },
        checkpointing: { interval: 100, mode: 'exactly-once' },
        args: {
          ...jobArgs(table, out, { hold }),
          connection: `postgres://root@127.0.0.1:${proxy.port}/test`,
        },
      });
      let acceptedAtCut = -1;
      void whenCommitted(client, async () => (await tables.rows(out)).length > 0).then(() => {
        acceptedAtCut = proxy.accepted;
        return proxy
          .cut()
          .then(() => proxy.restore())
          .then(() => writeFileSync(hold, ''));
      });
      await client.done;
      expect(acceptedAtCut).toBeGreaterThanOrEqual(0); // the cut happened
      expect(proxy.accepted).toBeGreaterThan(acceptedAtCut); // connected again after the cut
      expectExactRunningSums(await tables.rows(out), N, KEYS);
    } finally {
      await proxy.close();
    }
  }, 180_000);
});
