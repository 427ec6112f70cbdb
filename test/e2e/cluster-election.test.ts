/**
 * Coordinator election against the real NATS JetStream server (127.0.0.1:4222), with every
 * contender on a manual clock, so no test step waits on real time:
 * (a) scripted: a holder paused (clock frozen, no renewals) is taken over; its commit then fails
 *     on the server with CoordinatorLeaseLostError('superseded'), and a holder whose own clock ran
 *     past its validity refuses locally ('expired'); a release lets another acquire at once;
 * (b) seeded random schedules (pauses, dropped renewals, clock rates): every successful commit
 *     belongs to the newest epoch acquired before it, and each epoch's commits to one holder.
 * Each test deletes its buckets.
 */
import { Kvm } from '@nats-io/kv';
import { describe, expect, it } from 'vitest';
import { coordinatorBucket } from '../../dist/cluster/cluster-options.js';
import { CoordinatorLease } from '../../dist/cluster/coordinator-lease.js';
import { CoordinatorLeaseLostError } from '../../dist/errors.js';
import { prng } from '../fixtures/channels/stress-sequence.js';
import { natsTestCluster, NATS_SERVERS as SERVERS } from '../fixtures/cluster/nats-test-cluster.js';

const LEASE_MS = 1000;

/** A contender's monotonic clock: moves only when the test says. */
class ManualClock {
  t = 0;
  readonly now = (): number => this.t;
}

describe('coordinator lease against NATS', () => {
  const nats = natsTestCluster();
  const newCluster = (): string => nats.newCluster('election');

  async function contenders(
    name: string,
    n: number,
  ): Promise<{ lease: CoordinatorLease; clock: ManualClock }[]> {
    const out: { lease: CoordinatorLease; clock: ManualClock }[] = [];
    for (let i = 0; i < n; i++) {
      const clock = new ManualClock();
      const lease = await CoordinatorLease.open({
        servers: SERVERS,
        name,
        instanceId: `c${i}`,
        timeoutMs: LEASE_MS,
        now: clock.now,
      });
      out.push({ lease, clock });
    }
    return out;
  }

  it('a paused holder that was taken over cannot commit; an expired one refuses; a release hands over at once', async () => {
    const name = newCluster();
    const [a, b] = await contenders(name, 2);
    try {
      await a.lease.step();
      expect(a.lease.isCoordinator()).toBe(true);
      const epochA = a.lease.epoch!;
      expect(await a.lease.commit('checkpoint', 'a1')).toBeGreaterThan(epochA);

      // b reads the lease, then a pauses: its clock stands still and it renews nothing.
      await b.lease.step();
      expect(b.lease.isCoordinator()).toBe(false);
      await expect(b.lease.commit('checkpoint', 'b0')).rejects.toMatchObject({ reason: 'not-holder' });
      b.clock.t += LEASE_MS; // the lease's full length passes on b's clock without a renewal
      await b.lease.step();
      expect(b.lease.isCoordinator()).toBe(true);
      expect(b.lease.epoch).toBeGreaterThan(epochA);

      // a resumes believing it is coordinator (its clock never moved); the server refuses.
      expect(a.lease.isCoordinator()).toBe(true);
      const lost: CoordinatorLeaseLostError[] = [];
      a.lease.on('lost', (e) => lost.push(e));
      const stale = await a.lease.commit('checkpoint', 'a2').catch((e: unknown) => e);
      expect(stale).toBeInstanceOf(CoordinatorLeaseLostError);
      expect(stale).toMatchObject({
        reason: 'superseded',
        epoch: epochA,
        code: 'ERR_WEIR_COORDINATOR_LEASE_LOST',
      });
      expect(lost.map((e) => e.reason)).toEqual(['superseded']);
      expect(a.lease.isCoordinator()).toBe(false);
      await b.lease.commit('checkpoint', 'b1');
      const kv = await new Kvm(nats.nc()).open(coordinatorBucket(name));
      expect((await kv.get('checkpoint'))!.string()).toBe('b1');

      // b's own clock passes its validity without a renewal: it refuses before asking the server.
      b.clock.t += LEASE_MS;
      await expect(b.lease.commit('checkpoint', 'b2')).rejects.toMatchObject({ reason: 'expired' });
      expect((await kv.get('checkpoint'))!.string()).toBe('b1');

      // b acquires again (its old revision unchanged for a lease length), then releases: a takes over at once.
      await b.lease.step();
      b.clock.t += LEASE_MS;
      await b.lease.step();
      expect(b.lease.isCoordinator()).toBe(true);
      await b.lease.release();
      await a.lease.step();
      expect(a.lease.isCoordinator()).toBe(true);
      expect(await a.lease.commit('checkpoint', 'a3')).toBeGreaterThan(0);
    } finally {
      await a.lease.close();
      await b.lease.close();
    }
  });

  for (const seed of [1, 2, 3]) {
    it(`seeded schedule ${seed}: at most one holder commits per epoch, and never after a newer acquisition`, async () => {
      const random = prng(seed);
      const name = newCluster();
      const cs = await contenders(name, 3);
      const acquisitions: { seq: number; holder: number }[] = [];
      const commits: { seq: number; epoch: number; holder: number }[] = [];
      const refusals = new Map<string, number>();
      for (const [i, { lease }] of cs.entries())
        lease.on('acquired', ({ epoch }) => acquisitions.push({ seq: epoch, holder: i }));
      const pausedFor = cs.map(() => 0);
      try {
        for (let round = 0; round < 250; round++) {
          await Promise.all(
            cs.map(async ({ lease, clock }, i) => {
              if (pausedFor[i] > 0) {
                pausedFor[i]--; // paused: clock frozen, no steps
              } else {
                clock.t += Math.floor((LEASE_MS / 8) * (0.8 + 0.4 * random())); // rates differ by ±20%
                if (random() < 0.06) pausedFor[i] = 1 + Math.floor(random() * 12);
                else if (random() < 0.7) await lease.step(); // else: a renewal (or poll) dropped
              }
              // Everyone tries to commit, paused ones included (a pause ending mid-commit).
              if (random() < 0.7) {
                const epoch = lease.epoch;
                try {
                  const seq = await lease.commit('checkpoint', JSON.stringify({ holder: i, round }));
                  commits.push({ seq, epoch: epoch!, holder: i });
                } catch (e) {
                  if (!(e instanceof CoordinatorLeaseLostError)) throw e;
                  refusals.set(e.reason, (refusals.get(e.reason) ?? 0) + 1);
                }
              }
            }),
          );
        }
      } finally {
        for (const { lease } of cs) await lease.close();
      }
      const holderOf = new Map(acquisitions.map((a) => [a.seq, a.holder]));
      for (const c of commits) {
        expect(holderOf.get(c.epoch)).toBe(c.holder);
        const newest = Math.max(...acquisitions.filter((a) => a.seq < c.seq).map((a) => a.seq));
        expect(newest, `commit at ${c.seq} of epoch ${c.epoch}`).toBe(c.epoch);
      }
      // The schedule did exercise takeovers and refusals (deterministic for the seed's decisions;
      // which contender wins a race is the server's choice, so only lower bounds).
      expect(new Set(acquisitions.map((a) => a.seq)).size).toBeGreaterThan(1);
      expect(commits.length).toBeGreaterThan(0);
      console.log(
        `seed ${seed}: ${acquisitions.length} acquisitions, ${commits.length} commits, refusals ${JSON.stringify(Object.fromEntries(refusals))}`,
      );
    });
  }
});
