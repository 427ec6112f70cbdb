/**
 * Which NATS transport should carry a remote edge: core NATS subjects (weir's own credits and
 * sequence numbers) or a JetStream stream (durable, replayable)? Measures, in one process with
 * two connections (publisher, subscriber), messages/s of `--bytes` (default 2 KiB: one batch of
 * 256 small records) from publish to delivery, interleaved rounds:
 * - core: `publish` + a subscription; every 64th message the subscriber answers on a credit
 *   subject and the publisher keeps at most 256 messages outstanding (the remote edge's shape);
 * - jetstream file / memory: `js.publish` with up to 256 acks outstanding, consumed by an ordered
 *   consumer (`consume`), one stream per round, deleted after it.
 *
 * Run: node --import tsx bench/cluster/nats-transport.ts [--n 20000] [--bytes 2048] [--rounds 3]
 */
import os from 'node:os';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}
const N = arg('--n', 20_000);
const BYTES = arg('--bytes', 2048);
const ROUNDS = arg('--rounds', 3);
const SERVER = process.env.NATS_URL ?? '127.0.0.1:4222';
const payload = new Uint8Array(BYTES).fill(7);

async function core(pub: NatsConnection, sub: NatsConnection, tag: string): Promise<number> {
  const data = `bench.transport.${tag}.data`;
  const credit = `bench.transport.${tag}.credit`;
  let acked = 0;
  let wake: (() => void) | null = null;
  const creditSub = pub.subscribe(credit, {
    callback: (_e, m) => {
      acked = new DataView(m.data.buffer, m.data.byteOffset).getUint32(0, true);
      wake?.();
    },
  });
  let received = 0;
  const done = new Promise<void>((resolve) => {
    sub.subscribe(data, {
      max: N,
      callback: () => {
        received++;
        if (received % 64 === 0 || received === N) {
          const b = new Uint8Array(4);
          new DataView(b.buffer).setUint32(0, received, true);
          sub.publish(credit, b);
        }
        if (received === N) resolve();
      },
    });
  });
  await sub.flush();
  await pub.flush();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    while (i - acked >= 256) await new Promise<void>((r) => (wake = r));
    pub.publish(data, payload);
  }
  await done;
  const ms = performance.now() - t0;
  creditSub.unsubscribe();
  return (N / ms) * 1000;
}

async function js(
  pub: NatsConnection,
  sub: NatsConnection,
  tag: string,
  storage: 'file' | 'memory',
): Promise<number> {
  const jsm = await jetstreamManager(pub);
  const name = `bench_transport_${tag}`;
  await jsm.streams.add({ name, subjects: [`bench.js.${tag}`], storage: storage as never });
  try {
    const c = await jetstream(sub).consumers.get(name); // ordered consumer
    let received = 0;
    const iter = await c.consume({ max_messages: 1024 });
    const done = (async () => {
      for await (const _m of iter) {
        if (++received === N) break;
      }
    })();
    const j = jetstream(pub);
    const t0 = performance.now();
    const inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < N; i++) {
      inFlight.push(j.publish(`bench.js.${tag}`, payload));
      if (inFlight.length >= 256) await inFlight.shift();
    }
    await Promise.all(inFlight);
    await done;
    return (N / (performance.now() - t0)) * 1000;
  } finally {
    await jsm.streams.delete(name);
  }
}

const pub = await connect({ servers: SERVER });
const sub = await connect({ servers: SERVER });
const tag = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const results: Record<string, number[]> = { core: [], 'jetstream file': [], 'jetstream memory': [] };
for (let r = 0; r < ROUNDS; r++) {
  results.core.push(await core(pub, sub, `${tag}_${r}`));
  results['jetstream file'].push(await js(pub, sub, `${tag}_f${r}`, 'file'));
  results['jetstream memory'].push(await js(pub, sub, `${tag}_m${r}`, 'memory'));
}
await pub.close();
await sub.close();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `${new Date().toISOString()} load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} · N=${N} × ${BYTES} B, ${ROUNDS} rounds`,
);
for (const [mode, xs] of Object.entries(results)) {
  const m = median(xs);
  console.log(
    `${mode.padEnd(18)} ${Math.round(m).toString().padStart(8)} msgs/s  ${((m * BYTES) / 1e6).toFixed(1).padStart(6)} MB/s  (${xs.map((x) => Math.round(x)).join(', ')})`,
  );
}
