/**
 * The broker and database client libraries, loaded on first use.
 *
 * Every worker thread imports weir (the job module does), so a top-level `import` of `ioredis`,
 * `pg` or the NATS client would load all of them into every thread of every job, whether the job
 * uses a connector or not: ~0.1–0.45 s of start-up per library and thread on the 2-core machine
 * (`node -e "import('ioredis')"`: 447 ms, `pg` 94–230 ms, the two NATS packages ~150 ms each, at
 * load ~9), paid again by every new thread a restart starts. Each connector calls its loader where
 * it first connects (always asynchronous), so a job pays only for the clients it uses. Types stay
 * static (`import type`), erased at build time.
 */

import type * as NatsJetStream from '@nats-io/jetstream';
import type * as NatsKv from '@nats-io/kv';
import type * as NatsTransport from '@nats-io/transport-node';
import type * as IoRedis from 'ioredis';
import type Pg from 'pg';
import type * as PgCopyStreams from 'pg-copy-streams';

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load().catch((error: unknown) => {
      loaded = undefined; // a failed load (e.g. the package missing) is retried by the next call
      throw error;
    });
    return loaded;
  };
}

/** `ioredis`. */
export const loadIoredis: () => Promise<typeof IoRedis> = once(() => import('ioredis'));

/** `pg` (its default export: Pool, Client, types). */
export const loadPg: () => Promise<typeof Pg> = once(async () => (await import('pg')).default);

/** `pg-copy-streams`' `from` (COPY … FROM STDIN), used by the PostgreSQL sink's large commits. */
export const loadPgCopyFrom: () => Promise<typeof PgCopyStreams.from> = once(
  async () => (await import('pg-copy-streams')).from,
);

export interface NatsLibraries {
  readonly transport: typeof NatsTransport;
  readonly jetstream: typeof NatsJetStream;
}

let natsLoaded: NatsLibraries | null = null;

/** The NATS transport (`connect`) and JetStream API. */
export const loadNats: () => Promise<NatsLibraries> = once(async () => {
  const [transport, jetstream] = await Promise.all([
    import('@nats-io/transport-node'),
    import('@nats-io/jetstream'),
  ]);
  natsLoaded = { transport, jetstream };
  return natsLoaded;
});

/** The NATS libraries if loaded (an error thrown by them implies they are), else null. */
export function natsIfLoaded(): NatsLibraries | null {
  return natsLoaded;
}

/**
 * The NATS JetStream KV API (`Kvm`), used by the scale-out cluster (`src/cluster`): membership
 * heartbeats and the coordinator lease. Loaded like the others, so `import 'weir'` does not.
 */
export const loadNatsKv: () => Promise<typeof NatsKv> = once(() => import('@nats-io/kv'));
