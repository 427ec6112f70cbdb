/**
 * sources.jetstream against the real NATS JetStream server (127.0.0.1:4222), in real jobs
 * (dist/, worker threads). Each test creates its own stream and deletes it afterwards.
 * (a) bounded stream of 3 subjects -> keyed running sum -> collect, a throw after a checkpoint:
 *     exact at p=1 and p=2 (subjects split over subtasks);
 * (b) cancelled at p=2 once rows were committed to PostgreSQL, restored at p=3 from the latest
 *     checkpoint: the rows are exact, and the second run emitted only what the restored
 *     positions left;
 * (c) a missing stream is a typed error naming it; bounded mode ends;
 * (d) the connection to the server dropped mid-run (in-test TCP proxy): the reader recovers
 *     (client reconnect, or task failure and restore) and the output is exact;
 * (e) `weir run` (JetStream -> PostgreSQL) killed with SIGKILL once rows were committed, rerun
 *     with --restore latest: the rows are exact (each split re-read from its checkpointed
 *     sequence; a re-read from the start would insert duplicate rows).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobOptions, startJob } from '../../dist/index.js';
import { ROOT, weir } from './cli-process.js';
import { expectExactRunningSums, fixture, holdFlag, type RunningSum, whenCommitted } from './helpers.js';
import { PG_CONNECTION, sumsTables } from './pg-sums-tables.js';
import { tcpProxy } from './tcp-proxy.js';

const SERVERS = 'nats://127.0.0.1:4222';
const PG = PG_CONNECTION;
const N = 30_000;
const KEYS = 10;

type Sum = RunningSum;
const expectExact = (sums: readonly Sum[], n: number): void => expectExactRunningSums(sums, n, KEYS);

describe('sources.jetstream end to end', () => {
  let nc: NatsConnection;
  const pgTables = sumsTables(PG);
  const streams: string[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    nc = await connect({ servers: SERVERS });
  });
  afterAll(async () => {
    const jsm = await jetstreamManager(nc);
    for (const s of streams) await jsm.streams.delete(s);
    await nc.close();
    await pgTables.dropAll();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** A fresh stream holding {key, value} for value 0..N-1 on subjects <name>.0/1/2 (value mod 3). */
  async function inputStream(): Promise<{ stream: string; subjects: string }> {
    const stream = `weir_test_src_${process.pid}_${streams.length}_${Date.now()}`;
    streams.push(stream);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${stream}.>`] });
    const js = jsm.jetstream();
    const pending: Promise<unknown>[] = [];
    for (let v = 0; v < N; v++) {
      pending.push(js.publish(`${stream}.${v % 3}`, JSON.stringify({ key: v % KEYS, value: v })));
      if (pending.length === 1000) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
    const info = await jsm.streams.info(stream);
    expect(info.state.messages).toBe(N);
    return { stream, subjects: [0, 1, 2].map((i) => `${stream}.${i}`).join(',') };
  }

  async function run(args: Record<string, string>, options: JobOptions) {
    const restoredFrom: (number | undefined)[] = [];
    const client = await startJob(fixture('service-pipelines.mjs'), {
      restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
      ...options,
      args: {
        n: String(N),
        keys: String(KEYS),
        servers: SERVERS,
        source: 'jetstream',
        sink: 'collect',
        ...args,
      },
    });
    client.on('deployed', (e: { attempt: number; restoredFrom?: number }) => {
      if (e.attempt > 0) restoredFrom.push(e.restoredFrom);
    });
    return { result: await client.done, restoredFrom };
  }

  for (const parallelism of [1, 2]) {
    it(`(a) bounded, 3 subjects, p=${parallelism}, a throw after a checkpoint: exact`, async () => {
      const { stream, subjects } = await inputStream();
      const { result, restoredFrom } = await run(
        { stream, subjects, failure: 'throw' },
        { parallelism, checkpointing: { interval: 100, mode: 'exactly-once' } },
      );
      expect(result.restarts).toBe(1);
      expect(typeof restoredFrom[0]).toBe('number');
      expectExact(result.sinks.sums as Sum[], N);
    });
  }

  it('(a) one split (no filter subjects): bounded mode reads the whole stream and ends', async () => {
    const { stream } = await inputStream();
    const { result } = await run(
      { stream },
      { parallelism: 2, checkpointing: { interval: 100, mode: 'exactly-once' } },
    );
    expect(result.restarts).toBe(0);
    expectExact(result.sinks.sums as Sum[], N);
  });

  it('(b) cancelled at p=2 after a checkpoint, restored at p=3: every message read once', async () => {
    // The output goes to PostgreSQL (exactly-once, idempotent commits across processes), whose
    // committed rows are readable from outside: the first run is cancelled once rows were
    // committed (so the restored checkpoint holds source positions past the start), and the rows
    // after the second run must be exact. (A collect sink cannot carry this: what the first
    // run's client received is not in the second run's result.)
    const { stream, subjects } = await inputStream();
    const dir = mkdtempSync(join(tmpdir(), 'weir-e2e-js-'));
    dirs.push(dir);
    const table = await pgTables.create('weir_test_js_pg');
    const rows = (): Promise<Sum[]> => pgTables.rows(table);
    const args = {
      n: String(N),
      keys: String(KEYS),
      servers: SERVERS,
      source: 'jetstream',
      sink: 'postgres',
      connection: PG,
      table,
      stream,
      subjects,
      hold: join(dir, 'release'), // the sources hold half-way until this file exists
    };
    const first = await startJob(fixture('service-pipelines.mjs'), {
      parallelism: 2,
      args,
      checkpointing: { interval: 100, mode: 'exactly-once', dir },
    });
    // Cancel once some rows were committed.
    const firstDone = first.done.then(
      () => 'finished',
      (e: unknown) => e,
    );
    await whenCommitted(first, async () => (await rows()).length > 0);
    await first.cancel();
    expect(String(await firstDone)).toMatch(/cancelled/);
    const before = (await rows()).length;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(N);

    writeFileSync(join(dir, 'release'), '');
    const second = await startJob(fixture('service-pipelines.mjs'), {
      parallelism: 3,
      args,
      checkpointing: { interval: 100, mode: 'exactly-once', dir },
      restoreFrom: 'latest',
    });
    const result = await second.done;
    // the restored positions were past the start: the second run read only what they left
    const emitted = result.metrics.operators.find((o) => o.name === 'events')?.recordsOut ?? 0;
    expect(emitted).toBeGreaterThan(0);
    expect(emitted).toBeLessThan(N);
    expectExact(await rows(), N);
  }, 180_000);

  it('(c) a missing stream is a typed error naming it', async () => {
    const stream = `weir_test_missing_${process.pid}_${Date.now()}`;
    const client = await startJob(fixture('service-pipelines.mjs'), {
      parallelism: 1,
      restartStrategy: { type: 'none' },
      args: { n: '1', keys: '1', servers: SERVERS, source: 'jetstream', sink: 'collect', stream },
    });
    await expect(client.done).rejects.toThrow(new RegExp(`JetStream stream "${stream}" does not exist`));
  });
  it('(d) the connection dropped mid-run and back: exact', async () => {
    const { stream, subjects } = await inputStream();
    const proxy = await tcpProxy(4222);
    const hold = holdFlag();
    try {
      const client = await startJob(fixture('service-pipelines.mjs'), {
        parallelism: 2,
        restartStrategy: { type: 'fixed-delay', attempts: 5, delay: 0 },
        checkpointing: { interval: 100, mode: 'exactly-once' },
        args: {
          n: String(N),
          keys: String(KEYS),
          servers: `nats://127.0.0.1:${proxy.port}`,
          source: 'jetstream',
          sink: 'collect',
          stream,
          subjects,
          hold: hold.path,
        },
      });
      let checkpoints = 0;
      let cut = false;
      client.on('checkpoint', () => {
        if (++checkpoints === 2) {
          cut = true;
          // drop every connection, then accept new ones again, then let the sources (holding
          // half-way, so the cut lands mid-run) read the rest
          void proxy
            .cut()
            .then(() => proxy.restore())
            .then(() => hold.release());
        }
      });
      const result = await client.done;
      expect(cut).toBe(true);
      expect(proxy.accepted).toBeGreaterThan(2); // the readers connected again
      expectExact(result.sinks.sums as Sum[], N);
    } finally {
      hold.dispose();
      await proxy.close();
    }
  });

  it('(e) weir run killed with SIGKILL, then --restore latest: rows exact', async () => {
    const { stream, subjects } = await inputStream();
    const dir = mkdtempSync(join(tmpdir(), 'weir-js-src-kill-'));
    dirs.push(dir);
    const table = await pgTables.create('weir_test_js_kill');
    const rows = (): Promise<Sum[]> => pgTables.rows(table);
    const args = ['run', join(ROOT, 'test/fixtures/jobs/service-pipelines.mjs'), '--parallelism', '2'];
    args.push('--checkpoint-interval', '100', '--checkpoint-dir', join(dir, 'ckpt'), '--verbose');
    for (const [k, v] of Object.entries({
      n: String(N),
      keys: String(KEYS),
      servers: SERVERS,
      source: 'jetstream',
      sink: 'postgres',
      connection: PG,
      table,
      stream,
      subjects,
      hold: join(dir, 'release'), // the sources hold half-way until this file exists
    }))
      args.push('--arg', `${k}=${v}`);
    const first = weir(args);
    // Kill once some rows were committed (each line of stderr is a chance to look).
    while ((await rows()).length === 0) {
      expect(first.child.exitCode).toBe(null);
      await first.next();
    }
    first.child.kill('SIGKILL');
    expect(await first.exit).toBe(null);
    const before = (await rows()).length;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(N);

    writeFileSync(join(dir, 'release'), '');
    const second = weir([...args, '--restore', 'latest']);
    expect(await second.exit).toBe(0);
    expect(second.stderr).toMatch(/restored from checkpoint \d+/);
    expectExact(await rows(), N);
  }, 180_000);
});
