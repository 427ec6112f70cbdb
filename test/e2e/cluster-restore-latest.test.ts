/**
 * `restoreFrom: 'latest'` of a cluster job, against the machine's NATS server (127.0.0.1:4222):
 * test/fixtures/jobs/split-sum.mjs (sequence → map | keyBy → running sum → exactly-once collect
 * sink) at parallelism 3, each instance a child process running
 * test/fixtures/cluster/cluster-instance.mjs (the public startJob; it reports every sink delivery
 * as it happens, so a killed instance has sent what it committed).
 *
 * Run 1: three instances with one shared checkpoint directory; every source holds after HOLD of
 * its records (flag files `held-<subtask>`). Once the sinks committed all 3 × HOLD records (a
 * checkpoint taken while the sources held completed and its transactions were delivered), every
 * instance gets SIGKILL: nothing stopped cleanly, and the NATS buckets of run 1 are left behind.
 *
 * Run 2 is a NEW cluster (another name: its buckets know nothing of run 1) of two instances with
 * `restoreFrom: 'latest'` on the same directory and the sources released: both restore the newest
 * checkpoint the directory lists, and every transaction committed by either run, counted once by
 * its id (a restore commits the restored checkpoint's transactions again), is exactly the running
 * sums of the whole input. A restore that started from the beginning, or from a checkpoint older
 * than the sinks' commits, commits records twice; one that skipped state loses sums: both fail.
 *
 * Then what a job of one process does with `'latest'`, at two instances: a directory that does
 * not exist is a fresh start, said (`fresh-start` on every instance), output exact; a damaged
 * newest checkpoint is refused on every instance (RestoreFallbackRefusedError) unless
 * `allowFallbackPastDamaged`, which restores the one before with a `fallback-past-damaged` warning.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CheckpointStorage } from '../../src/state/storage/checkpoint-storage.js';
import { flipByte, overwriteChunkInLmdb } from '../unit/state/storage/helpers.js';
import { ROOT } from './cli-process.js';
import {
  cleanupsAfterEach,
  clusterName,
  committedOnce as committed,
  forkInstance,
  tempDir as freshTempDir,
  NATS_SERVERS as SERVERS,
  untilHeld,
} from './cluster-instances.js';
import { InstanceLog as Log } from './cluster-log.js';
import { expectExactRunningSums } from './helpers.js';

const HOST = path.join(ROOT, 'test/fixtures/cluster/cluster-instance.mjs');
const JOB = pathToFileURL(path.join(ROOT, 'test/fixtures/jobs/split-sum.mjs')).href;
const N = 6000;
const PARALLELISM = 3;
const HOLD = 500;
const KEYS = 10;

const cleanups = cleanupsAfterEach();
const tempDir = (prefix: string) => freshTempDir(cleanups, prefix);

/** Forks `count` instances of a new cluster with `extra` options; children killed after the test. */
function start(count: number, dir: string, checkpoints: string, extra: Record<string, unknown> = {}) {
  const name = clusterName(cleanups, 'rl');
  const log = new Log();
  const children: ChildProcess[] = Array.from({ length: count }, (_, i) =>
    forkInstance(cleanups, log, i, HOST, {
      job: JOB,
      options: {
        parallelism: PARALLELISM,
        args: { n: String(N), hold: String(HOLD), keys: String(KEYS), dir },
        checkpointing: { interval: 100, dir: checkpoints },
        cluster: { servers: SERVERS, name, instances: count },
        ...extra,
      },
    }),
  );
  return { log, children };
}

/**
 * Run 1: three instances until the sinks committed the 3 × HOLD records before the holds, then
 * SIGKILL of all three. Returns its log and the checkpoints the shared directory lists.
 */
async function runAndKillAll(dir: string, checkpoints: string): Promise<{ log: Log; completed: number[] }> {
  const { log, children } = start(3, dir, checkpoints);
  await untilHeld(log, children, dir, { instances: 3, parallelism: PARALLELISM, checkpoints: 0 });
  await log.until('the held records committed', () => committed(log).length === PARALLELISM * HOLD);
  // Two more checkpoint events: the coordinator's event of the checkpoint whose commits were just
  // delivered may arrive after them (another process), so only the second is surely of a later
  // checkpoint. The directory then lists at least two taken after the sources held.
  const before = log.of('checkpoint').length;
  await log.until('a checkpoint after the commits', () => log.of('checkpoint').length >= before + 2);
  const exited = children.map((c) => new Promise<void>((resolve) => c.once('exit', () => resolve())));
  for (const c of children) c.kill('SIGKILL');
  await Promise.all(exited);
  log.failure = null; // the kills' exits, expected
  const storage = CheckpointStorage.open(checkpoints, { create: false });
  try {
    return { log, completed: storage.listCompleted() };
  } finally {
    await storage.close();
  }
}

describe("restoreFrom: 'latest' of a cluster job", () => {
  it('three instances SIGKILLed after committed checkpoints; a new cluster of two restores the newest from the shared directory; the committed output of both runs is exact', async () => {
    const dir = tempDir('weir-cluster-latest-');
    const checkpoints = path.join(dir, 'checkpoints');
    const first = await runAndKillAll(dir, checkpoints);
    expect(first.completed.length).toBeGreaterThanOrEqual(2);
    const latest = first.completed.at(-1)!;
    writeFileSync(path.join(dir, 'release'), '');
    const second = start(2, dir, checkpoints, { restoreFrom: 'latest' });
    await second.log.until('both results', () => second.log.of('result').length === 2);
    for (const r of second.log.of('result')) expect(r.status).toBe('finished');
    for (const d of second.log.of('deployed')) expect(d.restoredFrom).toBe(latest);
    expect(second.log.of('restored').map((m) => [m.checkpointId, m.path])).toEqual([
      [latest, checkpoints],
      [latest, checkpoints],
    ]);
    expect(second.log.of('fresh-start')).toEqual([]);
    expectExactRunningSums(committed(first.log, second.log), N, KEYS);
    for (const c of second.children) c.send({ cmd: 'exit' });
  });

  it("'latest' on a directory that does not exist: a fresh start on every instance, said; the output is exact", async () => {
    const dir = tempDir('weir-cluster-latest-fresh-');
    const checkpoints = path.join(dir, 'never-created');
    writeFileSync(path.join(dir, 'release'), '');
    const { log, children } = start(2, dir, checkpoints, { restoreFrom: 'latest' });
    await log.until('both results', () => log.of('result').length === 2);
    for (const r of log.of('result')) expect(r.status).toBe('finished');
    for (const d of log.of('deployed')) expect(d.restoredFrom).toBeNull();
    const fresh = log.of('fresh-start');
    expect(fresh.map((m) => m.instance).sort()).toEqual([0, 1]);
    // The first instance to open the directory creates it: the other may find it empty, or
    // holding a store without checkpoints.
    for (const m of fresh) {
      expect(['no-directory', 'empty-directory', 'no-completed-checkpoint']).toContain(m.reason);
      expect(m.message).toMatch(/starting from the beginning/);
    }
    expect(log.of('restored')).toEqual([]);
    expectExactRunningSums(committed(log), N, KEYS);
    for (const c of children) c.send({ cmd: 'exit' });
  });

  it('a damaged newest checkpoint is refused on every instance (RestoreFallbackRefusedError); allowed, the one before is restored with a warning', async () => {
    const dir = tempDir('weir-cluster-latest-damaged-');
    const checkpoints = path.join(dir, 'checkpoints');
    const first = await runAndKillAll(dir, checkpoints);
    const [fallback, newest] = first.completed.slice(-2);
    // A chunk the newest checkpoint wrote itself (full checkpoints: every one writes its own).
    const storage = CheckpointStorage.open(checkpoints, { create: false });
    const own = storage
      .loadMetadata(newest)!
      .subtasks.flatMap((s) => s.chunks)
      .find((h) => h.checkpointId === newest)!;
    await storage.close();
    await overwriteChunkInLmdb(checkpoints, own.chunkId, flipByte(20));

    const refused = start(2, dir, checkpoints, { restoreFrom: 'latest' });
    refused.log.failOnError = false;
    await refused.log.until('both errors', () => refused.log.of('error').length === 2);
    for (const e of refused.log.of('error')) {
      expect(e.name).toBe('RestoreFallbackRefusedError');
      expect(e.message).toMatch(/allowFallbackPastDamaged: true/);
    }
    expect(refused.log.of('deployed')).toEqual([]);
    expect(refused.log.of('collected')).toEqual([]);

    writeFileSync(path.join(dir, 'release'), '');
    const allowed = start(2, dir, checkpoints, { restoreFrom: 'latest', allowFallbackPastDamaged: true });
    await allowed.log.until('both results', () => allowed.log.of('result').length === 2);
    for (const r of allowed.log.of('result')) expect(r.status).toBe('finished');
    for (const d of allowed.log.of('deployed')) expect(d.restoredFrom).toBe(fallback);
    const warned = allowed.log.of('warning').filter((w) => w.reason === 'fallback-past-damaged');
    expect(warned.map((w) => w.instance).sort()).toEqual([0, 1]);
    for (const w of warned) expect(w.message).toContain(`damaged checkpoint(s) ${newest} (`);
    // Both checkpoints were taken while the sources held: falling back to the older one commits
    // nothing twice here, and the union stays exact.
    expectExactRunningSums(committed(first.log, allowed.log), N, KEYS);
    for (const c of allowed.children) c.send({ cmd: 'exit' });
  });
});
