/**
 * A connection to a cluster's NATS server and its two KV buckets (`cluster-options.ts`). The NATS
 * libraries load here, on first use (`client-libraries.ts`), never at `import 'weir'`.
 */

import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { loadNats, loadNatsKv } from '../connectors/client-libraries.js';
import { ClusterError } from '../errors.js';
import {
  coordinatorBucket,
  MEMBER_KEY_TTL_MS,
  membersBucket,
  type ResolvedClusterOptions,
} from './cluster-options.js';

export interface ClusterConnection {
  readonly name: string;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly members: KV;
  readonly coordinator: KV;
  close(): Promise<void>;
}

/** JetStream's error code for a failed expected-sequence check (the CAS of KV `create`/`update`). */
export const WRONG_LAST_SEQUENCE = 10071;

/** True when `error` is the server refusing a write whose expected sequence did not match. */
export function isWrongLastSequence(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === WRONG_LAST_SEQUENCE;
}

/**
 * JetStream's answers to a stream created while another client creates the same one: "subjects
 * overlap with an existing stream" (10065) and "stream name already in use" (10058). Members of one
 * cluster start together and each creates the buckets, so the server can see several identical
 * creates at once; under load one of them may be refused with either code though the stream it
 * asked for now exists. Creating again then finds the identical stream and succeeds.
 */
export const CONCURRENT_CREATE_CODES: ReadonlySet<number> = new Set([10065, 10058]);

/** Attempts a bucket create makes before a refusal of `CONCURRENT_CREATE_CODES` is final. */
export const CREATE_ATTEMPTS = 5;

/**
 * Runs `create` until it succeeds, retrying (after `pauseMs(attempt)`) only the refusals a concurrent
 * create of the same bucket causes, at most `CREATE_ATTEMPTS` times. Any other error, or the last
 * refusal, is thrown as is: a bucket that exists with a different configuration stays an error.
 */
export async function createConcurrently<T>(
  create: () => Promise<T>,
  pause: (attempt: number) => Promise<void> = (attempt) =>
    new Promise((resolve) => setTimeout(resolve, 20 * attempt)),
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await create();
    } catch (cause) {
      const code = (cause as { code?: unknown } | null)?.code;
      if (attempt >= CREATE_ATTEMPTS || typeof code !== 'number' || !CONCURRENT_CREATE_CODES.has(code))
        throw cause;
      await pause(attempt);
    }
  }
}

/**
 * Connects and opens (or, with `create`, creates) both buckets. Without `create`, a cluster whose
 * buckets do not exist is a `ClusterError` saying so (the status command must not create one).
 */
export async function openCluster(
  o: ResolvedClusterOptions,
  { create, role }: { create: boolean; role: string },
): Promise<ClusterConnection> {
  const [{ transport, jetstream }, { Kvm }] = await Promise.all([loadNats(), loadNatsKv()]);
  let nc: NatsConnection;
  try {
    nc = await transport.connect({ servers: [...o.servers], name: `weir:cluster:${o.name}:${role}` });
  } catch (cause) {
    throw new ClusterError(o.name, `connecting to ${o.servers.join(', ')}`, String(cause), { cause });
  }
  try {
    const js = jetstream.jetstream(nc);
    const kvm = new Kvm(js);
    let members: KV;
    let coordinator: KV;
    if (create) {
      members = await createConcurrently(() =>
        kvm.create(membersBucket(o.name), { history: 1, ttl: MEMBER_KEY_TTL_MS }),
      );
      coordinator = await createConcurrently(() => kvm.create(coordinatorBucket(o.name), { history: 1 }));
    } else {
      const jsm = await jetstream.jetstreamManager(nc);
      for (const bucket of [membersBucket(o.name), coordinatorBucket(o.name)]) {
        try {
          await jsm.streams.info(`KV_${bucket}`);
        } catch (cause) {
          if ((cause as { code?: unknown }).code === 10059)
            throw new ClusterError(o.name, 'opening', `no such cluster (bucket ${bucket} does not exist)`);
          throw cause;
        }
      }
      members = await kvm.open(membersBucket(o.name));
      coordinator = await kvm.open(coordinatorBucket(o.name));
    }
    return { name: o.name, nc, js, members, coordinator, close: () => nc.close() };
  } catch (cause) {
    await nc.close().catch(() => undefined); // the error below says what failed; closing is best effort
    if (cause instanceof ClusterError) throw cause;
    throw new ClusterError(o.name, create ? 'creating its buckets' : 'opening its buckets', String(cause), {
      cause,
    });
  }
}

/** Deletes both buckets of cluster `name` (tests; an operator's clean-up). */
export async function destroyCluster(conn: ClusterConnection): Promise<void> {
  await conn.members.destroy();
  await conn.coordinator.destroy();
}
