/**
 * `SourceReader.lag()` against a known backlog, and how it is exported:
 * - sources.log: a reader that emitted k of N appended records lags N - k; M more appended, it
 *   lags N + M - k;
 * - sources.jetstream (the real server, 127.0.0.1:4222): the same, once the reader has observed
 *   the new messages (the broker reports pending counts with deliveries);
 * - a running JetStream job's `/metrics`: its lag is the gauge `weir_source_lag_records`, not an
 *   operator counter, and every metric family has exactly one type.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLog, type SourceReader, sources, startJob } from '../../dist/index.js';
import { fixture } from './helpers.js';
import { parseExposition } from './prometheus-exposition.js';

const SERVERS = 'nats://127.0.0.1:4222';
const CTX = { subtaskIndex: 0, parallelism: 1, attempt: 0, restoredState: undefined } as never;

/** Polls until `want` records were emitted; waits on the reader's wake-up (or its delay) when idle. */
async function take(reader: SourceReader<unknown>, want: number): Promise<unknown[]> {
  const out: unknown[] = [];
  while (out.length < want) {
    const r = reader.poll({ collect: (v) => out.push(v) }, want - out.length);
    if (r.state === 'end') throw new Error(`the reader ended after ${out.length} of ${want} records`);
    if (r.state === 'idle') await (r.wake ?? new Promise((resolve) => setTimeout(resolve, r.ms)));
  }
  return out;
}

/** Resolves once `reader.lag()` reads `value` (the reader learns of new messages asynchronously). */
async function lagReaches(reader: SourceReader<unknown>, value: number): Promise<void> {
  while (reader.lag?.()?.value !== value) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('source lag', () => {
  const dirs: string[] = [];
  const streams: string[] = [];
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await connect({ servers: SERVERS });
  });
  afterAll(async () => {
    const jsm = await jetstreamManager(nc);
    for (const s of streams) await jsm.streams.delete(s);
    await nc.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** A new stream holding `n` JSON messages { i } on `<stream>.x`. */
  async function stream(n: number): Promise<string> {
    const name = `weir_test_lag_${process.pid}_${streams.length}_${Date.now()}`;
    streams.push(name);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name, subjects: [`${name}.>`] });
    await publish(name, 0, n);
    return name;
  }

  async function publish(name: string, from: number, n: number): Promise<void> {
    const js = (await jetstreamManager(nc)).jetstream();
    await Promise.all(
      Array.from({ length: n }, (_, i) => js.publish(`${name}.x`, JSON.stringify({ i: from + i }))),
    );
  }

  it('sources.log: lag is appended minus emitted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weir-lag-'));
    dirs.push(dir);
    const log = openLog(join(dir, 'log'));
    try {
      const topic = log.topic<{ i: number }>('in', { partitions: 1 });
      topic.appendSync(Array.from({ length: 1000 }, (_, i) => ({ i })));
      const reader = sources.log<{ i: number }>({ dir: join(dir, 'log'), topic: 'in' }).createReader(CTX);
      try {
        expect(reader.lag?.()).toEqual({ value: 1000, unit: 'records' });
        expect(await take(reader, 300)).toHaveLength(300);
        expect(reader.lag?.()).toEqual({ value: 700, unit: 'records' });
        topic.appendSync(Array.from({ length: 200 }, (_, i) => ({ i: 1000 + i })));
        expect(reader.lag?.()).toEqual({ value: 900, unit: 'records' });
        expect(await take(reader, 900)).toHaveLength(900);
        expect(reader.lag?.()).toEqual({ value: 0, unit: 'records' });
      } finally {
        reader.close?.();
      }
    } finally {
      await log.close();
    }
  });

  it('sources.jetstream: lag is published minus emitted, once the reader observed the messages', async () => {
    const name = await stream(1000);
    const reader = sources.jetstream({ servers: SERVERS, stream: name }).createReader(CTX);
    try {
      expect(reader.lag?.()).toBeUndefined(); // nothing delivered yet
      const head = (await take(reader, 300)) as { i: number }[];
      expect(head.map((r) => r.i)).toEqual(Array.from({ length: 300 }, (_, i) => i));
      // Every delivery carries the broker's count of messages after it, and the reader adds what
      // it buffered: the sum is the same whatever the consumer has delivered so far.
      expect(reader.lag?.()).toEqual({ value: 700, unit: 'records' });
      await publish(name, 1000, 200);
      await lagReaches(reader, 900);
      expect(await take(reader, 900)).toHaveLength(900);
      expect(reader.lag?.()).toEqual({ value: 0, unit: 'records' });
    } finally {
      reader.close?.();
    }
  });

  it('/metrics: the JetStream lag is the gauge weir_source_lag_records; one type per family', async () => {
    const N = 500;
    const name = await stream(N);
    const client = await startJob(fixture('jetstream-lag.mjs'), {
      dashboard: true,
      metricsInterval: 100,
      args: { servers: SERVERS, stream: name },
    });
    try {
      // Scrape after each metrics sample until the source has emitted everything and its lag is 0.
      let text = '';
      for (;;) {
        await once(client, 'metrics');
        text = await (await fetch(`${client.dashboardUrl}metrics`)).text();
        const { samples } = parseExposition(text);
        const out = samples.find(
          (s) => s.name === 'weir_records_out_total' && s.labels.operator === 'events',
        );
        const lag = samples.find(
          (s) => s.name === 'weir_source_lag_records' && s.labels.operator === 'events',
        );
        if (out?.value === N && lag?.value === 0) break;
      }
      const typeLines = text.split('\n').filter((l) => l.startsWith('# TYPE '));
      const families = typeLines.map((l) => l.split(' ')[2]);
      expect(new Set(families).size).toBe(families.length); // no family declared twice
      const { samples, types } = parseExposition(text);
      expect(types.get('weir_source_lag_records')).toBe('gauge');
      // every sample belongs to a declared family (histogram samples by their suffixes)
      for (const s of samples)
        expect(types.has(s.name.replace(/_(bucket|sum|count)$/, '')) || types.has(s.name)).toBe(true);
      const counters = samples.filter(
        (s) => s.name === 'weir_operator_counter_total' && s.labels.operator === 'events',
      );
      expect(counters.map((s) => s.labels.counter)).not.toContain('consumerLag');
    } finally {
      await client.cancel();
      await client.done.catch(() => undefined);
    }
  });
});
