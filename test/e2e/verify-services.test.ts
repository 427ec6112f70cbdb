// `weir verify` on jobs that write to the service sinks (PostgreSQL, Redis stream, JetStream): it
// reads back what each sink committed (`readCommitted()`) before and after every run. A correct
// job passes with its failures fired and the whole output compared; a job keeping its sums in a
// plain variable is caught from what each service holds (changed records after a SIGKILL and
// restore), naming the sink; an upsert-mode sink is refused by name; a database that cannot be
// read is a VerifyReadBackError. Every table and stream has a unique name and is dropped at the
// end. The SIGKILL tests pass args.hold, so the failure run's source holds the end of its input
// until the kill lands (see verify-gated-source.mjs). The tests wait on verifyJob only.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  VerifyReadBackError,
  type VerifyReport,
  VerifyUnsupportedSinkError,
  verifyJob,
} from '../../dist/index.js';
import { fixture } from './helpers.js';

const PG = 'postgres://root@127.0.0.1:5432/test';
const REDIS = 'redis://127.0.0.1:6379';
const NATS = 'nats://127.0.0.1:4222';
const suffix = `${process.pid}_${Date.now()}`;
const tables: string[] = [];
const streams: string[] = [];
const natsStreams: string[] = [];
const dirs: string[] = [];
let db: pg.Pool;
let redis: Redis;
let nc: NatsConnection;

beforeAll(async () => {
  db = new pg.Pool({ connectionString: PG, max: 1 });
  redis = new Redis(REDIS);
  nc = await connect({ servers: NATS });
});

afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const t of tables) {
    await db.query(`DROP TABLE IF EXISTS ${t}`);
    await db.query('DELETE FROM weir_sink_commits WHERE sink_id LIKE $1', [`${t}:%`]).catch(() => undefined);
  }
  await db.end();
  if (streams.length > 0) await redis.del(...streams);
  await redis.quit();
  const jsm = await jetstreamManager(nc);
  for (const s of natsStreams) await jsm.streams.delete(s).catch(() => undefined);
  await nc.close();
});

function table(name: string): string {
  const t = `verify_${name}_${suffix}`;
  tables.push(t);
  return t;
}

/** Fixture args for a sink of `type` with a new unique table, stream or subject (cleaned up after). */
async function sinkArgs(
  type: 'postgres' | 'redisStream' | 'jetstream',
  name: string,
): Promise<Record<string, string>> {
  if (type === 'postgres') return { sink: 'postgres', table: table(name) };
  if (type === 'redisStream') {
    const stream = `verify-redis-${name}-${suffix}`;
    streams.push(stream);
    return { sink: 'redis', url: REDIS, stream };
  }
  const stream = `verify_js_${name}_${suffix}`;
  natsStreams.push(stream);
  await (await jetstreamManager(nc)).streams.add({ name: stream, subjects: [`${stream}.>`] });
  return { sink: 'jetstream', servers: NATS, subject: `${stream}.sums` };
}

/** A new empty directory for the fixtures' args.hold (removed after the tests). */
function holdDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'weir-verify-services-'));
  dirs.push(d);
  const hold = path.join(d, 'hold');
  mkdirSync(hold);
  return hold;
}

/** The sink's verdict; the report must name exactly that one sink. */
function onlySink(report: VerifyReport) {
  expect(report.sinks).toHaveLength(1);
  return report.sinks[0];
}

describe('weir verify: service sinks read back', () => {
  it('passes a correct job writing to sinks.postgres under throw and exit failures', async () => {
    const t = table('ok');
    const report = await verifyJob(fixture('verify-services.mjs'), {
      args: { sink: 'postgres', table: t },
      kinds: ['throw', 'exit'],
      failures: 2,
      seed: 3,
    });
    expect(report.verdict).toBe('pass');
    if (report.verdict === 'non-deterministic') throw new Error('unreachable');
    expect(report.failures.filter((f) => f.fired).length).toBeGreaterThanOrEqual(1);
    const sink = onlySink(report);
    expect(sink).toMatchObject({ type: 'postgres', status: 'ok' });
    // Three runs wrote into the one table; each run's own 3000 rows were compared.
    expect(sink.difference).toMatchObject({ referenceRecords: 3000, actualRecords: 3000, lostCount: 0 });
    expect(Number((await db.query(`SELECT count(*) AS n FROM ${t}`)).rows[0].n)).toBe(9000);
  }, 300_000);

  it.each([
    ['sinks.postgres', 'postgres'],
    ['sinks.redisStream', 'redisStream'],
    ['sinks.jetstream', 'jetstream'],
  ] as const)(
    'catches state in a plain variable from what %s committed (SIGKILL and restore)',
    async (_, type) => {
      // Seed 11: the kill comes after the attempt's second checkpoint (see verify-sigkill.test.ts);
      // args.hold: the end of the input waits for it.
      const report = await verifyJob(fixture('verify-services.mjs'), {
        args: { ...(await sinkArgs(type, 'plain')), plain: '1', hold: holdDir() },
        kinds: ['sigkill'],
        failures: 1,
        seed: 11,
      });
      expect(report.verdict).toBe('fail');
      if (report.verdict === 'non-deterministic') throw new Error('unreachable');
      expect(report.failures[0]).toMatchObject({ kind: 'sigkill', fired: true });
      const sink = onlySink(report);
      expect(sink).toMatchObject({ type, status: 'differs' });
      expect(sink.sink).toMatch(new RegExp(type === 'redisStream' ? 'redis' : type, 'i'));
      // Sums restarted from 0 after the restore: values the reference never had, in place of its own.
      expect(sink.difference!.unexpectedCount).toBeGreaterThan(0);
      expect(sink.difference!.lostCount).toBeGreaterThan(0);
    },
    300_000,
  );

  it('refuses an upsert-mode sinks.postgres by name before running anything', async () => {
    const t = table('upsert');
    const error = await verifyJob(fixture('verify-services.mjs'), {
      args: { sink: 'postgres', table: t, upsert: '1' },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VerifyUnsupportedSinkError);
    expect((error as VerifyUnsupportedSinkError).sinkType).toBe('postgres');
    expect((error as Error).message).toMatch(/upsert/);
    // Nothing ran: the sink never created its table.
    expect((await db.query('SELECT to_regclass($1)::text AS t', [t])).rows[0].t).toBeNull();
  });

  it('reports a database it cannot read back as a VerifyReadBackError naming the sink', async () => {
    const error = await verifyJob(fixture('verify-services.mjs'), {
      args: { sink: 'postgres', table: table('down'), connection: 'postgres://root@127.0.0.1:1/test' },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VerifyReadBackError);
    expect((error as VerifyReadBackError).sink).toMatch(/postgres/);
  });

  it('passes a correct job writing to sinks.redisStream (XRANGE read-back)', async () => {
    const stream = `verify-redis-${suffix}`;
    streams.push(stream);
    const report = await verifyJob(fixture('verify-services.mjs'), {
      args: { sink: 'redis', url: REDIS, stream },
      kinds: ['throw', 'exit'],
      failures: 1,
      seed: 3,
    });
    expect(report.verdict).toBe('pass');
    const sink = onlySink(report);
    expect(sink).toMatchObject({ type: 'redisStream', status: 'ok' });
    expect(sink.difference).toMatchObject({ referenceRecords: 3000, actualRecords: 3000 });
    expect(await redis.xlen(stream)).toBe(9000);
  }, 300_000);

  it('passes a correct job writing to sinks.jetstream (subject read-back)', async () => {
    const name = `verify_js_${suffix}`;
    natsStreams.push(name);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name, subjects: [`${name}.>`] });
    const report = await verifyJob(fixture('verify-services.mjs'), {
      args: { sink: 'jetstream', servers: NATS, subject: `${name}.sums` },
      kinds: ['throw', 'exit'],
      failures: 1,
      seed: 3,
    });
    expect(report.verdict).toBe('pass');
    const sink = onlySink(report);
    expect(sink).toMatchObject({ type: 'jetstream', status: 'ok' });
    expect(sink.difference).toMatchObject({ referenceRecords: 3000, actualRecords: 3000 });
    expect((await jsm.streams.info(name)).state.messages).toBe(9000);
  }, 300_000);
});
