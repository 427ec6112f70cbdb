/**
 * sinks.jetstream against the real NATS JetStream server (127.0.0.1:4222). Each test creates its
 * own stream and deletes it afterwards.
 * (a) sequence -> keyed running sum -> sinks.jetstream, exactly-once, a throw after a checkpoint:
 *     the stream holds every (key, count) exactly once, final sums exact, at p=1 and p=2;
 * (b) a commit retried with the same committable (a failure between pre-commit and a commit that
 *     had partly or wholly published): the stream's message count is exact, via Nats-Msg-Id;
 * (c) at-least-once publishes through: nothing missing after a throw;
 * (d) a subject no stream captures fails with a typed error naming the subject;
 * (e) `weir run` killed with SIGKILL after messages were committed, rerun with --restore latest:
 *     the stream holds every message exactly once (restored commits de-duplicated by id);
 * (f) every connection to the server dropped mid-run (an in-test TCP proxy) once messages were
 *     committed, and accepted again: the stream holds every message exactly once.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
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
import { tcpProxy } from './tcp-proxy.js';

const SERVERS = 'nats://127.0.0.1:4222';
const N = 20_000;
const KEYS = 10;

type Sum = RunningSum;
const expectExact = (sums: readonly Sum[], n: number): void => expectExactRunningSums(sums, n, KEYS);

describe('sinks.jetstream end to end', () => {
  let nc: NatsConnection;
  const streams: string[] = [];
  beforeAll(async () => {
    nc = await connect({ servers: SERVERS });
  });
  afterAll(async () => {
    const jsm = await jetstreamManager(nc);
    for (const s of streams) await jsm.streams.delete(s);
    await nc.close();
  });

  async function outputStream(): Promise<string> {
    const stream = `weir_test_sink_${process.pid}_${streams.length}_${Date.now()}`;
    streams.push(stream);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${stream}.>`] });
    return stream;
  }

  /** Every message in the stream, decoded. */
  async function readAll<T>(stream: string): Promise<T[]> {
    const jsm = await jetstreamManager(nc);
    const total = (await jsm.streams.info(stream)).state.messages;
    const out: T[] = [];
    if (total === 0) return out;
    const consumer = await jsm.jetstream().consumers.get(stream);
    const messages = await consumer.consume();
    for await (const m of messages) {
      out.push(m.json<T>());
      if (out.length === total) break;
    }
    await messages.close();
    return out;
  }

  async function run(args: Record<string, string>, options: JobOptions) {
    const client = await startJob(fixture('service-pipelines.mjs'), {
      restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
      ...options,
      args: {
        n: String(N),
        keys: String(KEYS),
        source: 'sequence',
        sink: 'jetstream',
        servers: SERVERS,
        ...args,
      },
    });
    return client.done;
  }

  for (const parallelism of [1, 2]) {
    it(`(a) exactly-once, p=${parallelism}, a throw after a checkpoint: every message once`, async () => {
      const stream = await outputStream();
      const result = await run(
        { subject: `${stream}.sums`, failure: 'throw' },
        { parallelism, checkpointing: { interval: 100, mode: 'exactly-once' } },
      );
      expect(result.restarts).toBe(1);
      expectExact(await readAll<Sum>(stream), N);
    });
  }

  it('(b) a commit retried after a failure between pre-commit and commit: exact count', async () => {
    const stream = await outputStream();
    const sink = sinks.jetstream({ servers: SERVERS, subject: `${stream}.x` });
    const wctx = {
      subtaskIndex: 0,
      parallelism: 1,
      attempt: 0,
      operatorName: 'js',
      checkpointingMode: 'exactly-once' as const,
      restoredCheckpointId: undefined,
      sinkName: 'jetstream',
    };
    const writer = sink.createWriter(wctx);
    for (let i = 0; i < 2500; i++) writer.write({ key: i, sum: i, count: 1 });
    const tx = await writer.preCommit(3);
    expect(tx).toBeDefined();
    const cctx = { checkpointId: 3, subtaskIndex: 0, retry: 0, restored: false, sinkName: 'jetstream' };
    // the first commit published only part (simulated: a prefix of the committable), then "crashed"
    const first = sink.createCommitter(wctx);
    await first.commit(
      { ...tx!, subjects: tx!.subjects.slice(0, 1000), payloads: tx!.payloads.slice(0, 1000) },
      cctx,
    );
    await first.close?.();
    // the restored attempt (a new committer) commits the whole committable, twice
    const again = sink.createCommitter(wctx);
    await again.commit(tx!, { ...cctx, restored: true });
    await again.commit(tx!, { ...cctx, restored: true, retry: 1 });
    await again.close?.();
    const got = await readAll<Sum>(stream);
    expect(got.map((s) => s.key)).toEqual(Array.from({ length: 2500 }, (_, i) => i));
  });

  it('(c) at-least-once publishes through: nothing missing after a throw', async () => {
    const stream = await outputStream();
    const result = await run(
      { subject: `${stream}.sums`, failure: 'throw' },
      { parallelism: 2, checkpointing: { interval: 100, mode: 'at-least-once' } },
    );
    expect(result.restarts).toBe(1);
    const got = await readAll<Sum>(stream);
    expect(got.length).toBeGreaterThanOrEqual(N);
    const seen = new Set(got.map((s) => `${s.key}/${s.count}`));
    for (const [key, e] of expectedSums(N, KEYS))
      for (let c = 1; c <= e.count; c++) expect(seen.has(`${key}/${c}`)).toBe(true);
  });

  it('(d) a subject no stream captures: a typed error naming the subject', async () => {
    const subject = `weir_test_nostream_${process.pid}_${Date.now()}.x`;
    const promise = run({ subject, n: '50' }, { parallelism: 1, restartStrategy: { type: 'none' } });
    await expect(promise).rejects.toThrow(
      new RegExp(`jetstream sink: subject "${subject.replace('.', '\\.')}"`),
    );
  });
  it('(e) weir run killed with SIGKILL, then --restore latest: every message once', async () => {
    const stream = await outputStream();
    const dir = mkdtempSync(path.join(tmpdir(), 'weir-js-kill-'));
    try {
      const args = ['run', path.join(ROOT, 'test/fixtures/jobs/service-pipelines.mjs'), '--parallelism', '2'];
      args.push('--checkpoint-interval', '100', '--checkpoint-dir', path.join(dir, 'ckpt'), '--verbose');
      const jobArgs = {
        n: String(N),
        keys: String(KEYS),
        source: 'sequence',
        sink: 'jetstream',
        servers: SERVERS,
      };
      for (const [k, v] of Object.entries({
        ...jobArgs,
        subject: `${stream}.sums`,
        hold: path.join(dir, 'release'),
      }))
        args.push('--arg', `${k}=${v}`);
      const first = weir(args);
      const jsm = await jetstreamManager(nc);
      // kill once some messages were committed (the sources hold half-way until 'release' exists)
      while ((await jsm.streams.info(stream)).state.messages === 0) {
        expect(first.child.exitCode).toBe(null);
        await first.next();
      }
      first.child.kill('SIGKILL');
      expect(await first.exit).toBe(null);
      const before = (await jsm.streams.info(stream)).state.messages;
      expect(before).toBeLessThan(N);

      writeFileSync(path.join(dir, 'release'), '');
      const second = weir([...args, '--restore', 'latest']);
      expect(await second.exit).toBe(0);
      expect(second.stderr).toMatch(/restored from checkpoint \d+/);
      expectExact(await readAll<Sum>(stream), N);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('(f) every connection dropped mid-run and accepted again: every message once', async () => {
    const stream = await outputStream();
    const jsm = await jetstreamManager(nc);
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
          source: 'sequence',
          sink: 'jetstream',
          servers: `nats://127.0.0.1:${proxy.port}`,
          subject: `${stream}.sums`,
          hold: hold.path,
        },
      });
      // Cut once messages were committed, so later commits straddle the cut: the sources hold
      // half-way until the cut is over.
      let acceptedAtCut = -1;
      void whenCommitted(client, async () => (await jsm.streams.info(stream)).state.messages > 0).then(() => {
        acceptedAtCut = proxy.accepted;
        return proxy
          .cut()
          .then(() => proxy.restore())
          .then(() => hold.release());
      });
      await client.done;
      expect(acceptedAtCut).toBeGreaterThanOrEqual(0); // the cut happened
      expect(proxy.accepted).toBeGreaterThan(acceptedAtCut); // connected again after the cut
      expectExact(await readAll<Sum>(stream), N);
    } finally {
      hold.dispose();
      await proxy.close();
    }
  }, 180_000);
});
