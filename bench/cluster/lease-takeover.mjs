// Failure detection and coordinator takeover on the real NATS server, default timeout (3 s):
// per round a fresh cluster of 3 instances (membership + lease loop, real clocks), the
// coordinator is halted (no leave, no release: as if killed) at a random phase of its beat, and
// the survivors' first `leave` of it and first `acquired` are timed from the halt. Prints
// min / median / max over the rounds and the load average.
//   npm run build && node bench/cluster/lease-takeover.mjs [rounds=5] [timeoutMs=3000]
// (Membership and lease only; the job takeover is bench/cluster/takeover.mjs.)
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { ClusterMembership } from '../../dist/cluster/cluster-membership.js';
import { coordinatorBucket, membersBucket } from '../../dist/cluster/cluster-options.js';
import { CoordinatorLease } from '../../dist/cluster/coordinator-lease.js';

const SERVERS = 'nats://127.0.0.1:4222';
const rounds = Number(process.argv[2] ?? 5);
const timeoutMs = Number(process.argv[3] ?? 3000);
const nc = await connect({ servers: SERVERS });
const detect = [];
const takeover = [];
let flaps = 0;
for (let r = 0; r < rounds; r++) {
  const name = `bench_takeover_${process.pid}_${r}`;
  const nodes = [];
  for (let i = 0; i < 3; i++) {
    const m = await ClusterMembership.join({ servers: SERVERS, name, timeoutMs, instanceId: `n${i}` });
    const lease = await CoordinatorLease.open({ servers: SERVERS, name, instanceId: `n${i}`, timeoutMs });
    nodes.push({ m, lease });
  }
  for (const n of nodes)
    n.lease.on('lost', (e) => {
      flaps++;
      console.error(`lost: ${e.message}`);
    });
  const first = Promise.race(nodes.map((n) => once(n.lease, 'acquired')));
  for (const { lease } of nodes) lease.start();
  await first;
  // Every instance sees all three (a key that predates a reader waits for one more beat).
  for (const n of nodes) while (n.m.members().length < 3) await once(n.m, 'join');
  await new Promise((res) => setTimeout(res, Math.random() * timeoutMs));
  // The holder now (under heavy load a lease can change hands before the halt: counted as flaps).
  let holder = nodes.find((n) => n.lease.isCoordinator());
  if (!holder) {
    await Promise.race(nodes.map((n) => once(n.lease, 'acquired')));
    holder = nodes.find((n) => n.lease.isCoordinator());
  }
  const others = nodes.filter((n) => n !== holder);
  const left = Promise.race(
    others.map(
      (n) =>
        new Promise((res) =>
          n.m.on('leave', (e) => e.instanceId === holder.m.instanceId && res(performance.now())),
        ),
    ),
  );
  const acquired = Promise.race(others.map((n) => once(n.lease, 'acquired').then(() => performance.now())));
  const haltAt = performance.now();
  await holder.m.halt();
  holder.lease.removeAllListeners('lost');
  await holder.lease.close();
  detect.push((await left) - haltAt);
  takeover.push((await acquired) - haltAt);
  for (const n of others) {
    await n.lease.close();
    await n.m.leave();
  }
  const kvm = new Kvm(nc);
  for (const b of [membersBucket(name), coordinatorBucket(name)]) await (await kvm.open(b)).destroy();
}
await nc.close();
const stat = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${Math.round(s[0])} / median ${Math.round(s[Math.floor(s.length / 2)])} / max ${Math.round(s.at(-1))} ms`;
};
console.log(
  `${new Date().toISOString()} load ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}, timeout ${timeoutMs} ms, ${rounds} rounds`,
);
console.log(`leave seen after the halt:       ${stat(detect)}`);
console.log(`lease acquired after the halt:   ${stat(takeover)}`);
console.log(`leases lost before a halt (flaps): ${flaps}`);
