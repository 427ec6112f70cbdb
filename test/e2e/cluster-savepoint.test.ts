/**
 * Stop-with-savepoint of a cluster job and `restoreFrom` of it, against the machine's NATS server
 * (127.0.0.1:4222): test/fixtures/jobs/split-sum.mjs (sequence → map | keyBy → running sum →
 * exactly-once collect sink) at parallelism 3, each instance a child process running
 * test/fixtures/cluster/cluster-instance.mjs (the public startJob; without the `cluster` option a
 * job of one process).
 *
 * Run 1: three instances; every source holds after HOLD of its N/3 records (half-way; flag files
 * `held-<subtask>`). Once all held and the coordinator completed a checkpoint, a NON-coordinator
 * instance calls `stopWithSavepoint(dir)` (in the second case `weir cluster savepoint DIR` asks
 * from outside the job): every instance ends `stopped` with the same savepoint,
 * and together they committed exactly the 3 × HOLD records before the savepoint's barriers (the
 * sinks committed up to it before anyone stopped). The savepoint directory lists the savepoint
 * (what `weir checkpoints DIR` reads), and the shared checkpoint directory lists the cluster's
 * checkpoints too.
 *
 * Run 2 restores the savepoint — on two instances of a new cluster, or as a job of one process at
 * parallelism 2 — with the sources released (a third case: a job of ONE process stops with a
 * savepoint and two cluster instances restore it): the union of run 1's and run 2's committed output,
 * with no deduplication, is exactly the running sums of the whole input. A fourth case takes the
 * savepoint of an incremental job (a delta in the shared directory) and restores its copy. A savepoint that lost or
 * repeated state, a restore that started from the beginning or committed the savepoint's output
 * again, all fail that check.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CheckpointStorage } from '../../src/state/storage/checkpoint-storage.js';
import { ROOT, weirToEnd } from './cli-process.js';
import {
  cleanupsAfterEach,
  forkInstance,
  clusterName as freshClusterName,
  tempDir as freshTempDir,
  NATS_SERVERS as SERVERS,
  untilHeld,
} from './cluster-instances.js';
import { InstanceLog as Log } from './cluster-log.js';
import { expectExactRunningSums, type RunningSum } from './helpers.js';

const HOST = path.join(ROOT, 'test/fixtures/cluster/cluster-instance.mjs');
const JOB = pathToFileURL(path.join(ROOT, 'test/fixtures/jobs/split-sum.mjs')).href;
const N = 6000;
const PARALLELISM = 3;
const HOLD = 1000; // half of each source's N / PARALLELISM records
const KEYS = 10;

const cleanups = cleanupsAfterEach();
const tempDir = (prefix: string) => freshTempDir(cleanups, prefix);
/** A fresh cluster name whose buckets are deleted after the test. */
const clusterName = () => freshClusterName(cleanups, 'sp');

/** Forks `count` instances with `options(i)`; children killed after the test. */
function start(count: number, options: (i: number) => Record<string, unknown>) {
  const log = new Log(['error', 'savepoint-error']);
  const children: ChildProcess[] = Array.from({ length: count }, (_, i) =>
    forkInstance(cleanups, log, i, HOST, { job: JOB, options: options(i) }),
  );
  return { log, children };
}

const jobArgs = (dir: string) => ({ n: String(N), hold: String(HOLD), keys: String(KEYS), dir });

/**
 * Run 1: three instances, stop-with-savepoint once every source held: asked on a non-coordinator
 * instance's handle, or (`cli`) with `weir cluster savepoint DIR` from outside the job.
 * Returns the savepoint and the output the three committed.
 */
async function stopWithSavepoint(
  via: 'instance' | 'cli' | 'one-process',
  { incremental = false }: { incremental?: boolean } = {},
): Promise<{
  savepoint: { checkpointId: number; path: string };
  dir: string;
  sums: RunningSum[];
}> {
  const dir = tempDir('weir-cluster-sp-');
  const shared = path.join(dir, 'checkpoints');
  const name = clusterName();
  const instances = via === 'one-process' ? 1 : 3;
  const { log, children } = start(instances, () => ({
    parallelism: PARALLELISM,
    args: jobArgs(dir),
    checkpointing: {
      interval: 100,
      dir: shared,
      ...(incremental ? { incremental: true, fullEvery: 1000 } : {}),
    },
    ...(via === 'one-process' ? {} : { cluster: { servers: SERVERS, name, instances } }),
  }));
  // Incremental: two checkpoints while the sources hold, so the savepoint (a later one) is a delta
  // over chunks an earlier checkpoint wrote.
  await untilHeld(log, children, dir, {
    instances,
    parallelism: PARALLELISM,
    checkpoints: incremental ? 2 : 1,
  });
  const coordinator = log.of('checkpoint')[0].instance;
  const asker = (coordinator + 1) % instances;
  const savepointDir = path.join(dir, 'savepoint');
  let savepoint: { checkpointId: number; path: string };
  if (via !== 'cli') {
    children[asker].send({ cmd: 'savepoint', dir: savepointDir });
    await log.until('the savepoint', () => log.of('savepoint').length === 1);
    const answer = log.of('savepoint')[0];
    expect(answer.instance).toBe(asker);
    savepoint = { checkpointId: answer.checkpointId!, path: answer.path! };
  } else {
    const cli = await weirToEnd([
      'cluster',
      'savepoint',
      savepointDir,
      '--cluster',
      SERVERS[0],
      '--cluster-name',
      name,
      '--json',
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    const out = JSON.parse(cli.stdout) as {
      ok: boolean;
      savepoint: { checkpointId: number; path: string; sinksCommitted: boolean };
    };
    expect(out.ok).toBe(true);
    expect(out.savepoint.sinksCommitted).toBe(true);
    savepoint = { checkpointId: out.savepoint.checkpointId, path: out.savepoint.path };
  }
  await log.until('every result', () => log.of('result').length === instances);
  expect(savepoint.path).toBe(savepointDir);
  for (const r of log.of('result')) {
    expect(r.status).toBe('stopped');
    expect(r.savepoint).toEqual(savepoint);
  }
  // The sources held: the savepoint's barriers followed exactly HOLD records of each, and every
  // instance's sinks committed up to it before any instance stopped.
  const sums = log.of('result').flatMap((r) => r.sinks!.sums);
  expect(sums).toHaveLength(PARALLELISM * HOLD);
  expect(new Set(sums.map((s) => `${s.key}/${s.count}`)).size).toBe(sums.length);
  // The savepoint is a checkpoint directory of its own (what `weir checkpoints DIR` lists), its
  // sinks recorded as committed; the shared directory lists the cluster's checkpoints too.
  const copy = CheckpointStorage.open(savepointDir, { create: false });
  try {
    expect(copy.listCompleted()).toEqual([savepoint.checkpointId]);
    expect(copy.verifyCheckpoint(savepoint.checkpointId)).toEqual(expect.objectContaining({ state: 'ok' }));
    expect(copy.loadMetadata(savepoint.checkpointId)?.sinksCommitted).toBe(true);
  } finally {
    await copy.close();
  }
  const sharedStorage = CheckpointStorage.open(shared, { create: false });
  try {
    expect(sharedStorage.listCompleted()).toContain(savepoint.checkpointId);
    if (incremental) {
      // In the shared directory the savepoint is a delta: its chunks include an earlier
      // checkpoint's, which the copy above carries (verified `ok` in a directory of its own).
      const metadata = sharedStorage.loadMetadata(savepoint.checkpointId)!;
      expect(metadata.incremental).toBe(true);
      expect(
        metadata.subtasks.some((s) => s.chunks.some((h) => h.checkpointId < savepoint.checkpointId)),
      ).toBe(true);
    }
  } finally {
    await sharedStorage.close();
  }
  for (const c of children) c.send({ cmd: 'exit' });
  return { savepoint, dir, sums };
}

/**
 * Run 2 on two instances of a new cluster: restores `first`'s savepoint with the sources released;
 * every instance deploys from it and finishes. Returns the run's log.
 */
async function restoreOnTwoInstances(
  first: { savepoint: { checkpointId: number; path: string }; dir: string },
  prefix: string,
): Promise<Log> {
  const dir2 = tempDir(prefix);
  const name = clusterName();
  const { log } = start(2, () => ({
    parallelism: PARALLELISM,
    args: jobArgs(first.dir),
    checkpointing: { interval: 100, dir: path.join(dir2, 'checkpoints') },
    cluster: { servers: SERVERS, name, instances: 2 },
    restoreFrom: first.savepoint.path,
  }));
  await log.until('both results', () => log.of('result').length === 2);
  for (const d of log.of('deployed')) expect(d.restoredFrom).toBe(first.savepoint.checkpointId);
  for (const r of log.of('result')) expect(r.status).toBe('finished');
  return log;
}

describe('stop-with-savepoint of a cluster job, and restoreFrom', () => {
  it('three instances stop with a savepoint asked on a non-coordinator; two instances of a new cluster restore it; the output is exact', async () => {
    const first = await stopWithSavepoint('instance');
    writeFileSync(path.join(first.dir, 'release'), '');
    const log = await restoreOnTwoInstances(first, 'weir-cluster-sp-restore-');
    const second = log.of('result').flatMap((r) => r.sinks!.sums);
    expect(existsSync(first.savepoint.path)).toBe(true);
    expectExactRunningSums([...first.sums, ...second], N, KEYS);
  });

  it('an incremental cluster job stops with a savepoint that is a delta in the shared directory; the copy is self-contained and two instances of a new cluster restore it exactly', async () => {
    const first = await stopWithSavepoint('instance', { incremental: true });
    writeFileSync(path.join(first.dir, 'release'), '');
    const log = await restoreOnTwoInstances(first, 'weir-cluster-sp-incremental-');
    expectExactRunningSums([...first.sums, ...log.of('result').flatMap((r) => r.sinks!.sums)], N, KEYS);
  });

  it('`weir cluster savepoint` stops three instances; the savepoint restores as a job of one process at parallelism 2; the output is exact', async () => {
    const first = await stopWithSavepoint('cli');
    writeFileSync(path.join(first.dir, 'release'), '');
    const dir2 = tempDir('weir-cluster-sp-single-');
    const { log } = start(1, () => ({
      parallelism: 2,
      args: jobArgs(first.dir),
      checkpointing: { interval: 100, dir: path.join(dir2, 'checkpoints') },
      restoreFrom: first.savepoint.path,
    }));
    await log.until('the result', () => log.of('result').length === 1);
    expect(log.of('deployed')[0].restoredFrom).toBe(first.savepoint.checkpointId);
    const [r] = log.of('result');
    expect(r.status).toBe('finished');
    expectExactRunningSums([...first.sums, ...r.sinks!.sums], N, KEYS);
  });

  it('the savepoint of a job of ONE process (parallelism 3) restores on two cluster instances; the output is exact', async () => {
    const first = await stopWithSavepoint('one-process');
    writeFileSync(path.join(first.dir, 'release'), '');
    const log = await restoreOnTwoInstances(first, 'weir-cluster-sp-from-one-');
    expectExactRunningSums([...first.sums, ...log.of('result').flatMap((r) => r.sinks!.sums)], N, KEYS);
  });
});
