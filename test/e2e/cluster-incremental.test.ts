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
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { destroyCluster, openCluster } from '../../src/cluster/cluster-connection.js';
import { resolveClusterOptions } from '../../src/cluster/cluster-options.js';
import { CheckpointStorage } from '../../src/state/storage/checkpoint-storage.js';
import { ROOT } from './cli-process.js';
import { type InstanceMessage, InstanceLog as Log } from './cluster-log.js';
import { expectExactRunningSums, firstExit, type RunningSum, whenFiles } from './helpers.js';

const HOST = path.join(ROOT, 'test/fixtures/cluster/cluster-instance.mjs');
const JOB = pathToFileURL(path.join(ROOT, 'test/fixtures/jobs/split-sum.mjs')).href;
const SERVERS = ['nats://127.0.0.1:4222'];
const N = 6000;
const HOLD = 500;
const KEYS = 10;
const INSTANCES = 3;
/** See cluster-job.test.ts: short enough for a quick takeover, long enough for a loaded machine. */
const KILL_TIMEOUT_MS = 4000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function startInstances() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'weir-cluster-incremental-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const name = `inc${process.pid}-${Math.floor(Math.random() * 2 ** 32).toString(36)}`;
  cleanups.push(async () => {
    const conn = await openCluster(resolveClusterOptions({ servers: SERVERS, name }), {
      create: false,
      role: 'cleanup',
    }).catch(() => null);
    if (conn) {
      await destroyCluster(conn);
      await conn.close();
    }
  });
  const log = new Log();
  const children: ChildProcess[] = [];
  for (let i = 0; i < INSTANCES; i++) {
    const options = {
      parallelism: INSTANCES,
      args: { n: String(N), hold: String(HOLD), keys: String(KEYS), dir },
      checkpointing: {
        interval: 100,
        dir: path.join(dir, 'checkpoints'),
        incremental: true,
        fullEvery: 1000,
      },
      cluster: { servers: SERVERS, name, instances: INSTANCES, timeoutMs: KILL_TIMEOUT_MS },
    };
    const child = fork(HOST, [JSON.stringify({ job: JOB, options })]);
    child.on('message', (m) => log.add(i, m as InstanceMessage));
    child.on('exit', (code, signal) => {
      if (!log.messages.some((m) => m.instance === i && (m.kind === 'result' || m.kind === 'error')))
        log.add(i, { kind: 'exit', message: `exited (${code ?? signal}) without a result` });
    });
    cleanups.push(() => {
      child.kill('SIGKILL');
    });
    children.push(child);
  }
  return { dir, log, children };
}

describe('incremental checkpoints of a cluster job', () => {
  it('SIGKILL of a member: the survivors restore a delta whose base the killed instance wrote; the committed output is exact', async () => {
    const { dir, log, children } = startInstances();
    await log.until('every instance deployed', () => log.of('deployed').length === INSTANCES);
    await whenFiles(
      dir,
      Array.from({ length: INSTANCES }, (_, s) => `held-${s}`),
      firstExit(children),
    );
    // Two checkpoints while the sources hold: the one restored is not the first (full) one.
    const before = log.of('checkpoint').length;
    await log.until(
      'two checkpoints while the sources hold',
      () => log.of('checkpoint').length >= before + 2,
    );
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

    writeFileSync(path.join(dir, 'release'), '');
    await log.until("the survivors' results", () => log.of('result').length === survivors.length);
    for (const r of log.of('result')) {
      expect(r.status).toBe('finished');
      expect(r.restarts).toBe(1);
    }
    const byTransaction = new Map<string, RunningSum[]>();
    for (const m of log.of('collected')) {
      expect(m.transaction).not.toBeNull();
      if (byTransaction.has(m.transaction!)) expect(m.records).toEqual(byTransaction.get(m.transaction!));
      else byTransaction.set(m.transaction!, m.records!);
    }
    expectExactRunningSums([...byTransaction.values()].flat(), N, KEYS);
    for (const i of survivors) children[i].send({ cmd: 'exit' });
  });
});
