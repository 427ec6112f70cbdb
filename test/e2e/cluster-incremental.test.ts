/**
 * Incremental checkpoints of a cluster job (`checkpointing.incremental`), against the machine's
 * NATS server (127.0.0.1:4222): test/fixtures/jobs/split-sum.mjs (sequence → map | keyBy → running
 * sum → exactly-once collect sink) at parallelism 3 on three instances
 * (test/fixtures/cluster/cluster-instance.mjs), one sum subtask per instance, `fullEvery` large
 * enough that every checkpoint after the first is a delta over it.
 *
 * Every source holds after HOLD records; once a checkpoint after the first was committed while
 * they held, a member that is not the coordinator gets SIGKILL. The survivors restore the last
 * committed checkpoint: a delta whose base chunks every sum subtask wrote in an earlier
 * checkpoint — the killed instance's subtask on the killed instance. Checked on the shared
 * directory: the restored checkpoint's metadata is incremental and references, for each of the
 * three sum subtasks, chunks of an earlier checkpoint. Then the sources are released: every
 * transaction any instance committed, counted once by its id, is exactly the running sums (a
 * restore that dropped the base chain, or applied it out of order, loses or changes sums).
 *
 * Retention (shared-dir-retention.ts): with `retain` 2 and `fullEvery` 3 (fulls and deltas
 * alternate, so discards delete base chunks), ten checkpoints while the sources hold leave at
 * most three in the shared directory (a commit's metadata is written before its discards run;
 * without retention it held ten), a SIGKILL restores the newest, whole, the output is exact, and
 * at the end the directory holds exactly the newest two committed, each verifying.
 *
 * Record limit (cluster-record-limit.ts): with `fullEvery` large and `cluster.maxRecordBytes`
 * low, the chain's handles soon make a record too long to commit; the coordinator aborts that
 * checkpoint with `rebase` and the tasks' next snapshot is full. The job keeps committing
 * checkpoints past that point — among them a full one after the first, which only a re-base
 * makes with this `fullEvery` (no restart happens) — finishes, and its output is exact. Without
 * the re-base every retry is the same too-long delta: no checkpoint completes, not even the final.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
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
/** See cluster-job.test.ts: short enough for a quick takeover, long enough for a loaded machine. */
const KILL_TIMEOUT_MS = 4000;
/**
 * Over a full snapshot's record of this job (~3.1 KB; each delta with data adds ~1.5 KB), so one
 * or two checkpoints that see new data already pass it: the case holds on a slow machine too.
 */
const RECORD_LIMIT = 4608;

const cleanups = cleanupsAfterEach();

function startInstances(
  checkpointing: Record<string, unknown> = {},
  { cluster = {}, args = {} }: { cluster?: Record<string, unknown>; args?: Record<string, string> } = {},
) {
  const dir = tempDir(cleanups, 'weir-cluster-incremental-');
  const name = clusterName(cleanups, 'inc');
  const log = new Log();
  const children = Array.from({ length: INSTANCES }, (_, i) =>
    forkInstance(cleanups, log, i, HOST, {
      job: JOB,
      options: {
        parallelism: INSTANCES,
        args: { n: String(N), hold: String(HOLD), keys: String(KEYS), dir, ...args },
        checkpointing: {
          interval: 100,
          dir: path.join(dir, 'checkpoints'),
          incremental: true,
          fullEvery: 1000,
          ...checkpointing,
        },
        cluster: { servers: SERVERS, name, instances: INSTANCES, timeoutMs: KILL_TIMEOUT_MS, ...cluster },
      },
    }),
  );
  return { dir, log, children };
}

/** Kills a member that is not the coordinator; resolves with the survivors once both redeployed. */
async function killMember(log: Log, children: ReturnType<typeof startInstances>['children']) {
  const coordinator = log.of('checkpoint')[0].instance;
  const victim = (coordinator + 1) % INSTANCES;
  const survivors = [0, 1, 2].filter((i) => i !== victim);
  const victimExited = new Promise<void>((resolve) => children[victim].once('exit', () => resolve()));
  children[victim].kill('SIGKILL');
  await victimExited;
  log.failure = null; // the victim's exit, expected
  const redeployed = (i: number) =>
    log.messages.filter((m) => m.instance === i && m.kind === 'deployed').at(1);
  await log.until('both survivors redeployed', () => survivors.every((i) => redeployed(i) !== undefined));
  const restored = redeployed(survivors[0])!.restoredFrom!;
  expect(redeployed(survivors[1])!.restoredFrom).toBe(restored);
  return { survivors, restored };
}

describe('incremental checkpoints of a cluster job', () => {
  it('SIGKILL of a member: the survivors restore a delta whose base the killed instance wrote; the committed output is exact', async () => {
    const { dir, log, children } = startInstances();
    // Two checkpoints while the sources hold: the one restored is not the first (full) one.
    await untilHeld(log, children, dir, { instances: INSTANCES, checkpoints: 2 });
    const { survivors, restored } = await killMember(log, children);

    // The restored checkpoint is a delta: every sum subtask (one per instance in the first run,
    // the victim's among them) restores chunks an earlier checkpoint wrote.
    const storage = CheckpointStorage.open(path.join(dir, 'checkpoints'), { create: false });
    try {
      const metadata = storage.loadMetadata(restored)!;
      expect(metadata.incremental).toBe(true);
      const withBase = new Set(
        metadata.subtasks
          .filter((s) => s.chunks.some((h) => h.checkpointId < restored))
          .map((s) => s.subtaskIndex),
      );
      expect([...withBase].sort()).toEqual([0, 1, 2]);
    } finally {
      await storage.close();
    }

    await releaseToEnd(log, dir, { results: survivors.length, restarts: 1 });
    expectExactRunningSums(committedOnce(log), N, KEYS);
    for (const i of survivors) children[i].send({ cmd: 'exit' });
  });

  it('checkpointing.retain bounds the shared directory of an incremental job; a SIGKILL restores the newest, the output is exact', async () => {
    // fullEvery 3: fulls and deltas alternate, so discards delete base chunks no newer
    // checkpoint shares, and every commit is checked against them (shared-dir-retention.ts).
    const RETAIN = 2;
    const { dir, log, children } = startInstances({ retain: RETAIN, fullEvery: 3 });
    const checkpoints = path.join(dir, 'checkpoints');
    const held = 10;
    await untilHeld(log, children, dir, { instances: INSTANCES, checkpoints: held });
    // A commit's metadata is in the directory before its discards ran: at most one more.
    expect(await retained(checkpoints)).toBeLessThanOrEqual(RETAIN + 1);

    const { survivors, restored } = await killMember(log, children);
    // The survivors restored the newest committed checkpoint, still in the directory and whole.
    const committedBefore = log.of('checkpoint').map((m) => m.checkpointId!);
    expect(committedBefore).toContain(restored);
    const storage = CheckpointStorage.open(checkpoints, { create: false });
    try {
      expect(storage.listCompleted()).toContain(restored);
      expect(storage.verifyCheckpoint(restored).state).toBe('ok');
    } finally {
      await storage.close();
    }

    await releaseToEnd(log, dir, { results: survivors.length, restarts: 1 });
    expectExactRunningSums(committedOnce(log), N, KEYS);
    // Once every discard ran: exactly the newest `retain` committed checkpoints, each restorable.
    const committed = log.of('checkpoint').map((m) => m.checkpointId!);
    expect(committed.length).toBeGreaterThan(held);
    const after = CheckpointStorage.open(checkpoints, { create: false });
    try {
      expect(after.listCompleted()).toEqual(committed.slice(-RETAIN));
      for (const id of committed.slice(-RETAIN)) expect(after.verifyCheckpoint(id).state).toBe('ok');
    } finally {
      await after.close();
    }
    for (const i of survivors) children[i].send({ cmd: 'exit' });
  });
});

describe('the record limit of an incremental cluster job', () => {
  it('a record over cluster.maxRecordBytes aborts its checkpoint and re-bases the chains: checkpoints go on, the output is exact', async () => {
    // The sources emit at a bounded rate, so many checkpoints see new data: each delta adds
    // handles to the record until it is past the limit.
    const { dir, log, children } = startInstances(
      { fullEvery: 1000, retain: 1000 },
      { cluster: { maxRecordBytes: RECORD_LIMIT }, args: { rate: '1500' } },
    );
    await releaseToEnd(log, dir, { results: INSTANCES, restarts: 0 });
    expectExactRunningSums(committedOnce(log), N, KEYS);

    const committed = log.of('checkpoint').map((m) => m.checkpointId!);
    const storage = CheckpointStorage.open(path.join(dir, 'checkpoints'), { create: false });
    try {
      const metadata = committed.map((id) => storage.loadMetadata(id)!);
      // A full checkpoint after the first, right after an aborted one (its id skipped): the
      // oversize abort re-based the chains.
      const rebased = metadata
        .slice(1)
        .filter((m) => !m.incremental)
        .map((m) => m.checkpointId);
      expect(rebased.length).toBeGreaterThan(0);
      for (const id of rebased) expect(committed).not.toContain(id - 1);
      // Checkpoints went on being committed after the first re-base.
      expect(committed.filter((id) => id > rebased[0]).length).toBeGreaterThan(0);
    } finally {
      await storage.close();
    }
    for (const c of children) c.send({ cmd: 'exit' });
  });
});

/** How many committed checkpoints the shared directory holds now. */
async function retained(dir: string): Promise<number> {
  const storage = CheckpointStorage.open(dir, { create: false });
  try {
    return storage.listCompleted().length;
  } finally {
    await storage.close();
  }
}
