/**
 * Cluster membership against the real NATS JetStream server (127.0.0.1:4222), and `weir cluster
 * status` on it:
 * (a) three members see each other join; one stops heartbeating (halt: as if killed) and the
 *     others see it leave by timeout, never earlier than the timeout after its last beat they saw;
 *     a fourth joins and is seen; a graceful leave is seen as `left`;
 * (b) the CLI prints the members (the halted one stale) and the coordinator with its lease
 *     revision, as text and --json; an unknown cluster exits 1, a bad name 2.
 * Synchronised on membership events only. Each test deletes its buckets.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ClusterMembership } from '../../dist/cluster/cluster-membership.js';
import { CoordinatorLease } from '../../dist/cluster/coordinator-lease.js';
import { natsTestCluster, NATS_SERVERS as SERVERS } from '../fixtures/cluster/nats-test-cluster.js';
import { ROOT } from './cli-process.js';

// Every member lives in this test process, so one stall of its event loop longer than the timeout
// (GC, a busy machine: CI runs two test files at once) would time out a live member and fail the
// membership checks; 3 s (beats every 1 s) costs the leave case 2 s more than 1 s did.
const TIMEOUT_MS = 3000;

type Leave = { instanceId: string; reason: 'left' | 'timeout'; last: { seenAt: number } };

/** Resolves when `m` has seen every id in `ids` live. */
async function sees(m: ClusterMembership, ids: readonly string[]): Promise<void> {
  const has = (): boolean => ids.every((id) => m.members().some((x) => x.record.instanceId === id));
  while (!has()) await once(m, 'join');
}

/** Resolves with `m`'s leave event for `id` (at the moment it is emitted). */
function leaveOf(m: ClusterMembership, id: string): Promise<Leave & { at: number }> {
  return new Promise((resolve) => {
    const on = (e: Leave): void => {
      if (e.instanceId !== id) return;
      m.off('leave', on);
      resolve({ ...e, at: performance.now() });
    };
    m.on('leave', on);
  });
}

async function weirCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [
      path.join(ROOT, 'bin/weir.js'),
      ...args,
    ]);
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('cluster membership against NATS', () => {
  const nats = natsTestCluster();

  it('join, leave by timeout, a late join, a graceful leave; `weir cluster status` shows them and the coordinator', async () => {
    const name = nats.newCluster('members');
    const join = (id: string): Promise<ClusterMembership> =>
      ClusterMembership.join({ servers: SERVERS, name, timeoutMs: TIMEOUT_MS, instanceId: id });
    const [a, b, c] = await Promise.all([join('a'), join('b'), join('c')]);
    let d: ClusterMembership | undefined;
    const lease = await CoordinatorLease.open({ servers: SERVERS, name, instanceId: 'a', timeoutMs: 30_000 });
    try {
      const errors: Error[] = [];
      for (const m of [a, b, c]) m.on('error', (e) => errors.push(e));
      await Promise.all([a, b, c].map((m) => sees(m, ['a', 'b', 'c'])));

      // c stops beating as a killed process would; a and b time it out.
      const leaves = [leaveOf(a, 'c'), leaveOf(b, 'c')];
      await c.halt();
      for (const left of await Promise.all(leaves)) {
        expect(left.reason).toBe('timeout');
        // Never early: at least the timeout after the last beat this reader saw.
        expect(left.at - left.last.seenAt).toBeGreaterThan(TIMEOUT_MS);
        console.log(
          `leave of c seen ${Math.round(left.at - left.last.seenAt)} ms after its last beat (timeout ${TIMEOUT_MS} ms)`,
        );
      }
      expect(
        a
          .members()
          .map((m) => m.record.instanceId)
          .sort(),
      ).toEqual(['a', 'b']);

      // d joins late: a and b see it, and d sees a and b (after one beat each: they predate it).
      d = await join('d');
      await Promise.all([sees(a, ['d']), sees(b, ['d']), sees(d, ['a', 'b', 'd'])]);
      expect(
        d
          .members()
          .map((m) => m.record.instanceId)
          .sort(),
      ).toEqual(['a', 'b', 'd']);

      await lease.step();
      expect(lease.isCoordinator()).toBe(true);

      const json = await weirCli([
        'cluster',
        'status',
        '--cluster',
        SERVERS,
        '--cluster-name',
        name,
        '--json',
      ]);
      expect(json.code).toBe(0);
      const status = JSON.parse(json.stdout) as {
        ok: boolean;
        members: {
          instanceId: string;
          pid: number;
          host: string;
          live: boolean;
          lastHeartbeatAgeMs: number;
        }[];
        coordinator: { instanceId: string; leaseRevision: number; epoch: number };
      };
      expect(status.ok).toBe(true);
      const byId = new Map(status.members.map((m) => [m.instanceId, m]));
      expect([...byId.keys()].sort()).toEqual(['a', 'b', 'c', 'd']);
      expect(byId.get('c')!.live).toBe(false); // halted: its key stays until max_age, stale
      expect(byId.get('a')!.pid).toBe(process.pid);
      expect(status.coordinator).toMatchObject({
        instanceId: 'a',
        leaseRevision: lease.epoch,
        epoch: lease.epoch,
      });

      const text = await weirCli(['cluster', 'status', '--cluster', SERVERS, '--cluster-name', name]);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^ {2}c {2}host .* pid \d+ {2}last heartbeat \d+ ms ago {2}STALE/m);
      expect(text.stdout).toMatch(
        new RegExp(`^coordinator: a {2}lease revision ${lease.epoch} {2}epoch ${lease.epoch}`, 'm'),
      );

      // b leaves gracefully: seen at once as `left`.
      const bLeft = leaveOf(a, 'b');
      await b.leave();
      expect((await bLeft).reason).toBe('left');
      expect(errors).toEqual([]);
    } finally {
      await lease.close();
      for (const m of [a, b, c, d]) await m?.leave().catch(() => undefined); // already left or halted
    }
  });

  it('`weir cluster status`: an unknown cluster exits 1 naming it, a bad name or missing flag exits 2', async () => {
    const missing = await weirCli([
      'cluster',
      'status',
      '--cluster',
      SERVERS,
      '--cluster-name',
      `none_${process.pid}`,
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no such cluster/);
    const bad = await weirCli(['cluster', 'status', '--cluster', SERVERS, '--cluster-name', 'a.b']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not a cluster name/);
    const noFlag = await weirCli(['cluster', 'status', '--cluster-name', 'x']);
    expect(noFlag.code).toBe(2);
    expect(noFlag.stderr).toMatch(/--cluster URL is required/);
  });
});
