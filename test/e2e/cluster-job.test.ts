/**
 * A job formed by THREE processes through the public `cluster` option, against the machine's
 * NATS server (127.0.0.1:4222): test/fixtures/jobs/split-sum.mjs (sequence → map | keyBy →
 * running sum → exactly-once collect sink) at parallelism 3, each instance a child process
 * running test/fixtures/cluster/cluster-instance.mjs (startJob with `cluster: { servers, name,
 * instances: 3 }` and one shared checkpoint directory). The instances find each other, the lease
 * holder assigns one source and one sum subtask to each, hash edges cross processes as remote
 * flows, and checkpoints are coordinated over NATS and committed through the lease's fence.
 *
 * Synchronised on flag files and IPC only: every source holds after `hold` records (writing
 * `held-<subtask>`), the test waits for the first checkpoint committed after all three held,
 * then releases the sources. Exactly-once is checked on the sinks' side: the union of what the
 * three instances' sink subtasks delivered is exactly the running sums of the input, no
 * duplicate, nothing lost.
 *
 * Kill cases (a non-coordinator member, then the coordinator): after that checkpoint the victim
 * gets SIGKILL; the survivors time it out (`timeoutMs` KILL_TIMEOUT_MS), the lease holder reassigns over
 * them, both redeploy restoring the last committed checkpoint; only then are the sources released.
 * Sink side: every transaction committed by any instance (each instance reports its deliveries as
 * they happen, so the victim's arrive before it dies), counted once by its id, is exactly the
 * running sums. Cleanup: the cluster's two KV buckets are deleted, children killed, the directory
 * removed.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clusterCommand } from '../../src/cli/cluster-command.js';
import { resolveClusterOptions } from '../../src/cluster/cluster-options.js';
import { type ClusterStatus, readClusterStatus } from '../../src/cluster/cluster-status.js';
import { CheckpointStorage } from '../../src/state/storage/checkpoint-storage.js';
import { ROOT } from './cli-process.js';
import {
  cleanupsAfterEach,
  clusterName,
  committedOnce,
  forkInstance,
  releaseToEnd,
  NATS_SERVERS as SERVERS,
  tempDir,
  untilHeld,
} from './cluster-instances.js';
import { InstanceLog as Log } from './cluster-log.js';
import { expectExactRunningSums } from './helpers.js';

const HOST = path.join(ROOT, 'test/fixtures/cluster/cluster-instance.mjs');
const JOB = pathToFileURL(path.join(ROOT, 'test/fixtures/jobs/split-sum.mjs')).href;
const N = 6000;
const HOLD = 500;
const KEYS = 10;
const INSTANCES = 3;

const cleanups = cleanupsAfterEach();

/** Starts `INSTANCES` instances of split-sum.mjs on a fresh cluster; cleans everything up after the test. */
/**
 * The members' timeout in the kill cases: short enough that the takeover is quick, long enough
 * that a survivor slowed by a busy machine (beats every third of it) is not timed out as if dead,
 * which would end the job instead of restarting it once.
 */
const KILL_TIMEOUT_MS = 4000;

function startInstances(timeoutMs?: number) {
  const dir = tempDir(cleanups, 'weir-cluster-job-');
  const name = clusterName(cleanups, 'job');
  const log = new Log();
  const children = Array.from({ length: INSTANCES }, (_, i) =>
    forkInstance(cleanups, log, i, HOST, {
      job: JOB,
      options: {
        parallelism: INSTANCES,
        args: { n: String(N), hold: String(HOLD), keys: String(KEYS), dir },
        checkpointing: { interval: 100, dir: path.join(dir, 'checkpoints') },
        cluster: { servers: SERVERS, name, instances: INSTANCES, timeoutMs },
      },
    }),
  );
  return { dir, name, log, children };
}

/** Every source holds after HOLD records; then a checkpoint is committed while they hold. */
async function untilHeldAndCheckpointed(
  dir: string,
  log: Log,
  children: readonly ChildProcess[],
): Promise<void> {
  await untilHeld(log, children, dir, { instances: INSTANCES });
  expect(new Set(log.of('checkpoint').map((m) => m.instance)).size).toBe(1); // one coordinator
}

/**
 * `weir cluster status` while every source holds: the assignment (one source and one sum subtask
 * per member), the latest committed checkpoint, and each member's published subtasks with their
 * remote edge flows — every flow a sender reports is received by a subtask of another member
 * under the same name, and the senders sent records through them. The members publish once a
 * second from their live samples, so this waits until all three have published every subtask and
 * remote records.
 */
async function expectStatusWhileHeld(name: string, checkpointId: number): Promise<void> {
  const options = resolveClusterOptions({ servers: SERVERS, name });
  // A subtask is published once it was sampled (a loaded machine answers a sample late): wait
  // until every member published all of its assigned subtasks, and sent records through its edges.
  const sentThroughEdges = (s: ClusterStatus) =>
    s.members.length === INSTANCES &&
    s.members.every(
      (m) =>
        m.status?.subtasks.length === s.assignment?.subtasks[m.instanceId]?.length &&
        m.status?.subtasks.some((t) => t.remoteEdges?.some((e) => e.direction === 'out' && e.records > 0)),
    );
  let status = await readClusterStatus(options);
  while (!sentThroughEdges(status)) {
    await new Promise((r) => setTimeout(r, 200));
    status = await readClusterStatus(options);
  }
  expect(status.problems).toEqual([]);
  const a = status.assignment!;
  expect(a.members).toHaveLength(INSTANCES);
  expect(a.restoredFrom).toBeNull();
  expect(status.latestCheckpoint!.checkpointId).toBeGreaterThanOrEqual(checkpointId);
  expect(status.latestCheckpoint!.run).toBe(a.run);
  const inFlows = new Map<string, string>();
  for (const m of status.members) {
    // Each member publishes exactly the subtasks the assignment gave it.
    expect(m.status!.run).toBe(a.run);
    expect(m.status!.subtasks.map((t) => t.key).sort()).toEqual([...a.subtasks[m.instanceId]].sort());
    for (const t of m.status!.subtasks)
      for (const e of t.remoteEdges ?? []) if (e.direction === 'in') inFlows.set(e.flow, m.instanceId);
  }
  for (const m of status.members)
    for (const t of m.status!.subtasks)
      for (const e of t.remoteEdges ?? [])
        if (e.direction === 'out') {
          expect(inFlows.get(e.flow)).toBeDefined();
          expect(inFlows.get(e.flow)).not.toBe(m.instanceId);
          expect(e.outstandingBytes).toBeGreaterThanOrEqual(0);
        }
  const lines: string[] = [];
  const code = await clusterCommand(['status', '--cluster', SERVERS[0], '--cluster-name', name], {
    out: (l) => lines.push(l),
    err: (l) => lines.push(l),
  });
  expect(code).toBe(0);
  const text = lines.join('\n');
  expect(text).toContain(`assignment: run ${a.run}`);
  expect(text).toMatch(/→ \S+: \d+ records, \d+ bytes sent, lag \d+ bytes not yet read/);
  // (checkpoints go on every 100 ms while the sources hold: the id may have moved since)
  expect(text).toMatch(/latest checkpoint: \d+ {2}run /);
}

describe('a job formed by three processes (the cluster option)', () => {
  it('assigns, deploys and checkpoints across the instances; the union of their committed output is exact', async () => {
    const { dir, name, log, children } = startInstances();
    await untilHeldAndCheckpointed(dir, log, children);
    await expectStatusWhileHeld(name, log.of('checkpoint').at(-1)!.checkpointId!);
    await releaseToEnd(log, dir, { results: INSTANCES });
    const results = log.of('result');
    // Each instance delivered what its own sink subtask committed; together, exactly the input.
    const sums = results.flatMap((r) => r.sinks!.sums);
    expect(results.filter((r) => r.sinks!.sums.length > 0)).toHaveLength(INSTANCES);
    expectExactRunningSums(sums, N, KEYS);
    // checkpointing.retain (default 3) in the shared directory: the newest three committed stay.
    const committedIds = log.of('checkpoint').map((m) => m.checkpointId!);
    expect(committedIds.length).toBeGreaterThan(3);
    const shared = CheckpointStorage.open(path.join(dir, 'checkpoints'), { create: false });
    try {
      expect(shared.listCompleted()).toEqual(committedIds.slice(-3));
    } finally {
      await shared.close();
    }
    // The probe of the shared checkpoint directory was written there.
    expect(
      readdirSync(path.join(dir, 'checkpoints')).some((f) => f.startsWith(`.weir-cluster-${name}-`)),
    ).toBe(true);
    for (const c of children) c.send({ cmd: 'exit' });
  });

  it.each([
    ['a member that is not the coordinator', false],
    ['the coordinator', true],
  ])(
    'SIGKILL of %s mid-run: the survivors restart over themselves from the last committed checkpoint; the committed output is exact',
    async (_what, killCoordinator) => {
      const { dir, log, children } = startInstances(KILL_TIMEOUT_MS);
      await untilHeldAndCheckpointed(dir, log, children);
      const coordinator = log.of('checkpoint')[0].instance;
      const victim = killCoordinator ? coordinator : (coordinator + 1) % INSTANCES;
      const survivors = [0, 1, 2].filter((i) => i !== victim);
      const victimExited = new Promise<void>((resolve) => children[victim].once('exit', () => resolve()));
      children[victim].kill('SIGKILL');
      await victimExited;
      log.failure = null; // the victim's exit, expected
      const deployedTwice = (i: number) =>
        log.messages.filter((m) => m.instance === i && m.kind === 'deployed').length >= 2;
      await log.until('both survivors redeployed', () => survivors.every(deployedTwice));
      await releaseToEnd(log, dir, { results: survivors.length, restarts: 1 });
      // Sink side: every committed transaction, from any instance (the victim's before it died),
      // counted once by its id (a transaction of the restored checkpoint is committed again on restore).
      expectExactRunningSums(committedOnce(log), N, KEYS);
      // The restart restored a checkpoint committed before the kill: the survivors' part after it.
      expect(log.of('checkpoint').length).toBeGreaterThanOrEqual(2);
      for (const i of survivors) children[i].send({ cmd: 'exit' });
    },
  );
});
