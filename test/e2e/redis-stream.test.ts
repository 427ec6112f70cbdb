/**
 * sources.redisStream and sinks.redisStream against the real Redis server (127.0.0.1:6379). Each
 * test uses its own stream keys and deletes them (and its marker keys) afterwards.
 * (a) a bounded Redis stream -> keyed running sum -> sinks.redisStream, exactly-once, a throw after
 *     a checkpoint: the output stream holds every (key, count) exactly once, final sums exact;
 * (b) a commit repeated with the same committable appends nothing the second time (Lua + marker);
 * (c) a missing input stream is a typed error naming it;
 * (d) `weir run` (source and sink Redis) killed with SIGKILL once entries were committed, rerun with
 *     --restore latest: the output holds every (key, count) exactly once (the source re-read from
 *     its checkpointed entry ID, the sink's restored commits skipped by their marker);
 * (e) every connection to Redis dropped mid-run (an in-test TCP proxy, source and sink behind
 *     it) and accepted again: the output is exact;
 * (f) unbounded (`XREAD BLOCK`), p=2, a throw after a checkpoint, half of the entries added while
 *     the job runs: the output is exact; after cancel no connection of the source is left.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { sinks, startJob } from '../../dist/index.js';
import { sourceConnectionName } from '../../src/connectors/redis-stream-source.js';
import { ROOT, weir } from './cli-process.js';
import { expectedSums, finalByKey, fixture, holdFlag, whenCommitted } from './helpers.js';
import { tcpProxy } from './tcp-proxy.js';

const URL = 'redis://127.0.0.1:6379';
const N = 20_000;
const KEYS = 10;

interface Sum {
  key: number;
  sum: number;
  count: number;
}

describe('Redis stream connectors end to end', () => {
  const redis = new Redis(URL);
  const keys: string[] = [];
  let seq = 0;
  afterAll(async () => {
    for (const k of keys) await redis.del(k);
    const markers = await redis.keys(`weir:sink:weir_test_rs_${process.pid}_*`);
    if (markers.length > 0) await redis.del(...markers);
    await redis.quit();
  });

  function key(): string {
    const k = `weir_test_rs_${process.pid}_${seq++}_${Date.now()}`;
    keys.push(k);
    return k;
  }

  async function readAll<T>(stream: string): Promise<T[]> {
    const entries = await redis.xrange(stream, '-', '+');
    return entries.map(([, fields]) => JSON.parse(fields[1]) as T);
  }

  /** Adds { key, value } for value from..to-1 to `input`. */
  async function addEntries(input: string, from: number, to: number): Promise<void> {
    for (; from < to; from += 1000) {
      const p = redis.pipeline();
      for (let v = from; v < Math.min(to, from + 1000); v++)
        p.xadd(input, '*', 'data', JSON.stringify({ key: v % KEYS, value: v }));
      await p.exec();
    }
  }

  /** A fresh input stream holding { key, value } for value 0..N-1. */
  async function inputStream(): Promise<string> {
    const input = key();
    await addEntries(input, 0, N);
    return input;
  }

  /**
   * service-pipelines.mjs from Redis stream `input` through the keyed running sum to Redis stream
   * `out`, exactly-once at p=2, with a throw after a checkpoint (3 restarts); `args` add to the
   * job's arguments.
   */
  function startRedisSums(input: string, out: string, args: Record<string, string> = {}) {
    return startJob(fixture('service-pipelines.mjs'), {
      parallelism: 2,
      restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
      checkpointing: { interval: 100, mode: 'exactly-once' },
      args: {
        n: String(N),
        keys: String(KEYS),
        source: 'redis',
        sink: 'redis',
        url: URL,
        stream: input,
        out,
        failure: 'throw',
        ...args,
      },
    });
  }

  /** The output stream holds every running sum exactly once and the exact final sums. */
  async function expectExactOutput(out: string): Promise<void> {
    const sums = await readAll<Sum>(out);
    expect(new Set(sums.map((s) => `${s.key}/${s.count}`)).size).toBe(N);
    expect(sums).toHaveLength(N);
    const finals = finalByKey(sums, (s) => s.count);
    for (const [k, e] of expectedSums(N, KEYS)) expect(finals.get(k)).toEqual({ key: k, ...e });
  }

  it('(a) bounded source -> running sum -> sink, exactly-once, p=2, a throw after a checkpoint: exact', async () => {
    const input = await inputStream();
    const out = key();
    const client = await startRedisSums(input, out);
    const result = await client.done;
    expect(result.restarts).toBe(1);
    await expectExactOutput(out);
  });

  it('(b) a repeated commit appends nothing twice', async () => {
    const out = key();
    const sink = sinks.redisStream({ url: URL, stream: out });
    const wctx = {
      subtaskIndex: 0,
      parallelism: 1,
      attempt: 0,
      operatorName: 'rs',
      checkpointingMode: 'exactly-once' as const,
      restoredCheckpointId: undefined,
      sinkName: 'redisStream',
    };
    const writer = sink.createWriter(wctx);
    for (let i = 0; i < 100; i++) writer.write({ i });
    const tx = await writer.preCommit(4);
    const cctx = { checkpointId: 4, subtaskIndex: 0, retry: 0, restored: false, sinkName: 'redisStream' };
    const committer = sink.createCommitter(wctx);
    await committer.commit(tx!, cctx);
    await committer.commit(tx!, { ...cctx, retry: 1 });
    const again = sink.createCommitter(wctx);
    await again.commit(tx!, { ...cctx, restored: true });
    await committer.close?.();
    await again.close?.();
    keys.push(tx!.markerKey);
    expect((await readAll<{ i: number }>(out)).map((r) => r.i)).toEqual(
      Array.from({ length: 100 }, (_, i) => i),
    );
  });

  it('(c) a missing input stream is a typed error naming it', async () => {
    const input = key();
    const client = await startJob(fixture('service-pipelines.mjs'), {
      parallelism: 1,
      restartStrategy: { type: 'none' },
      args: { n: '1', keys: '1', source: 'redis', sink: 'collect', url: URL, stream: input },
    });
    await expect(client.done).rejects.toThrow(
      new RegExp(`redis stream "${input}": the stream does not exist`),
    );
  });

  it('(d) weir run killed with SIGKILL, then --restore latest: every entry once', async () => {
    const input = await inputStream();
    const out = key();
    const dir = mkdtempSync(path.join(tmpdir(), 'weir-rs-kill-'));
    try {
      const args = ['run', path.join(ROOT, 'test/fixtures/jobs/service-pipelines.mjs'), '--parallelism', '2'];
      args.push('--checkpoint-interval', '100', '--checkpoint-dir', path.join(dir, 'ckpt'), '--verbose');
      const jobArgs = { n: String(N), keys: String(KEYS), source: 'redis', sink: 'redis', url: URL };
      for (const [k, v] of Object.entries({
        ...jobArgs,
        stream: input,
        out,
        hold: path.join(dir, 'release'),
      }))
        args.push('--arg', `${k}=${v}`);
      const first = weir(args);
      // Kill once some entries were committed (each line of stderr is a chance to look).
      while ((await redis.xlen(out)) === 0) {
        expect(first.child.exitCode).toBe(null);
        await first.next();
      }
      first.child.kill('SIGKILL');
      expect(await first.exit).toBe(null);
      const before = await redis.xlen(out);
      expect(before).toBeGreaterThan(0);
      expect(before).toBeLessThan(N);

      writeFileSync(path.join(dir, 'release'), ''); // the first run's sources held half-way
      const second = weir([...args, '--restore', 'latest']);
      expect(await second.exit).toBe(0);
      expect(second.stderr).toMatch(/restored from checkpoint \d+/);
      await expectExactOutput(out);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('(e) every connection to Redis dropped mid-run and accepted again: exact', async () => {
    const input = await inputStream();
    const out = key();
    const proxy = await tcpProxy(6379);
    const hold = holdFlag();
    try {
      const client = await startJob(fixture('service-pipelines.mjs'), {
        parallelism: 2,
        restartStrategy: { type: 'fixed-delay', attempts: 5, delay: 0 },
        checkpointing: { interval: 100, mode: 'exactly-once' },
        args: {
          n: String(N),
          keys: String(KEYS),
          source: 'redis',
          sink: 'redis',
          url: `redis://127.0.0.1:${proxy.port}`,
          stream: input,
          out,
          hold: hold.path,
        },
      });
      // Cut once entries were committed (so a commit and the source's reads straddle the cut): the
      // sources hold half-way until the cut is over.
      let acceptedAtCut = -1;
      void whenCommitted(client, async () => (await redis.xlen(out)) > 0).then(() => {
        acceptedAtCut = proxy.accepted;
        return proxy
          .cut()
          .then(() => proxy.restore())
          .then(() => hold.release());
      });
      await client.done;
      expect(acceptedAtCut).toBeGreaterThanOrEqual(0); // the cut happened
      expect(proxy.accepted).toBeGreaterThan(acceptedAtCut); // connected again after the cut
      await expectExactOutput(out);
    } finally {
      hold.dispose();
      await proxy.close();
    }
  }, 180_000);

  it('(f) unbounded, p=2, a throw after a checkpoint, entries added while it runs: exact, no connection left', async () => {
    const input = key();
    await addEntries(input, 0, N / 2);
    const out = key();
    const client = await startRedisSums(input, out, { unbounded: 'true', at: '0.25' });
    let restarts = 0;
    client.on('restarting', () => restarts++);
    const done = client.done.catch((error: unknown) => error);
    // The first half read (and the injected failure, at a quarter, recovered from): the source is
    // caught up and waits in XREAD when the second half arrives.
    await whenCommitted(client, async () => (await redis.xlen(out)) >= N / 2);
    await addEntries(input, N / 2, N);
    await whenCommitted(client, async () => (await redis.xlen(out)) >= N);
    await client.cancel();
    expect(await done).toMatchObject({ name: 'JobCancelledError' });
    expect(restarts).toBe(1);
    await expectExactOutput(out);
    // The server drops a closed connection when it reads the close: look until it has (no
    // deadline of its own: a connection the source never closes fails at the test's timeout).
    const name = `name=${sourceConnectionName(input)} `;
    while (((await redis.client('LIST')) as string).includes(name))
      await new Promise((r) => setTimeout(r, 50));
  }, 180_000);
});
