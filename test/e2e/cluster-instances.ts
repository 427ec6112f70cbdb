/**
 * The scaffolding the multi-process cluster e2e tests share (cluster-job, cluster-join,
 * cluster-control, cluster-savepoint, cluster-chaos, cluster-incremental, cluster-restore-latest):
 * a per-file list of clean-ups run after each test, temporary directories and cluster names
 * cleaned up with it, child instances forked with their IPC messages going to an
 * {@link InstanceLog}, the wait until every source holds and checkpoints were committed, the
 * release of the sources to the instances' results, and the sink-side union of what the
 * instances committed.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect } from 'vitest';
import { destroyCluster, openCluster } from '../../src/cluster/cluster-connection.js';
import { resolveClusterOptions } from '../../src/cluster/cluster-options.js';
import type { InstanceLog, InstanceMessage } from './cluster-log.js';
import { firstExit, type RunningSum, whenHeld } from './helpers.js';

export const NATS_SERVERS = ['nats://127.0.0.1:4222'];

/**
 * What to undo after each test of the calling file, newest first (children killed before the
 * directory they write to is removed). Registers the `afterEach` hook: call once per file.
 */
export function cleanupsAfterEach(): (() => Promise<void> | void)[] {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return cleanups;
}

type Cleanups = (() => Promise<void> | void)[];

/** A temporary directory removed after the test. */
export function tempDir(cleanups: Cleanups, prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A fresh cluster name whose two KV buckets are deleted after the test. */
export function clusterName(cleanups: Cleanups, prefix: string): string {
  const name = `${prefix}${process.pid}-${Math.floor(Math.random() * 2 ** 32).toString(36)}`;
  cleanups.push(async () => {
    const conn = await openCluster(resolveClusterOptions({ servers: NATS_SERVERS, name }), {
      create: false,
      role: 'cleanup',
    }).catch(() => null);
    if (conn) {
      await destroyCluster(conn);
      await conn.close();
    }
  });
  return name;
}

/**
 * Forks `host` (a test/fixtures/cluster/*-instance.mjs) with `{ job, options }`; its IPC messages
 * go to `log` as instance `i`, and an exit without a result or an error is logged as `exit`
 * (which fails the log's waits). Killed after the test.
 */
export function forkInstance(
  cleanups: Cleanups,
  log: InstanceLog,
  i: number,
  host: string,
  config: { job: string; options: Record<string, unknown> },
): ChildProcess {
  const child = fork(host, [JSON.stringify(config)]);
  child.on('message', (m) => log.add(i, m as InstanceMessage));
  child.on('exit', (code, signal) => {
    if (!log.messages.some((m) => m.instance === i && (m.kind === 'result' || m.kind === 'error')))
      log.add(i, { kind: 'exit', message: `exited (${code ?? signal}) without a result` });
  });
  cleanups.push(() => {
    child.kill('SIGKILL');
  });
  return child;
}

/**
 * Every transaction any instance committed (each reports its deliveries as they happen, so a
 * killed instance's arrive before it dies), counted once by its id: a transaction committed again
 * on restore must carry the same records (the sink side's dedup). Several logs: several runs.
 */
export function committedOnce(...logs: InstanceLog[]): RunningSum[] {
  const byTransaction = new Map<string, RunningSum[]>();
  for (const log of logs)
    for (const m of log.of('collected')) {
      expect(m.transaction).not.toBeNull();
      if (byTransaction.has(m.transaction!)) expect(m.records).toEqual(byTransaction.get(m.transaction!));
      else byTransaction.set(m.transaction!, m.records!);
    }
  return [...byTransaction.values()].flat();
}

/**
 * Every one of `instances` deployed, every one of `parallelism` source subtasks holds (flag files
 * `held-<subtask>` in `dir`, the fixtures' `hold`), then `checkpoints` more checkpoints are
 * committed while they hold (the coordinator's `checkpoint` events). Rejects as soon as a child
 * exits first. Resolves with the coordinator's instance (the one reporting checkpoints), or
 * undefined when `checkpoints` is 0 and none was reported yet.
 */
export async function untilHeld(
  log: InstanceLog,
  children: readonly ChildProcess[],
  dir: string,
  {
    instances,
    parallelism = instances,
    checkpoints = 1,
  }: { instances: number; parallelism?: number; checkpoints?: number },
): Promise<number | undefined> {
  await log.until('every instance deployed', () => log.of('deployed').length === instances);
  await whenHeld(dir, parallelism, firstExit(children));
  const before = log.of('checkpoint').length;
  await log.until(
    `${checkpoints} checkpoint(s) while the sources hold`,
    () => log.of('checkpoint').length >= before + checkpoints,
  );
  return log.of('checkpoint')[0]?.instance;
}

/**
 * Releases the held sources (flag file `release` in `dir`) and waits for `results` instances'
 * results: each `finished`, after `restarts` restarts of the job when given.
 */
export async function releaseToEnd(
  log: InstanceLog,
  dir: string,
  { results, restarts }: { results: number; restarts?: number },
): Promise<void> {
  writeFileSync(path.join(dir, 'release'), '');
  await log.until(`${results} result(s)`, () => log.of('result').length === results);
  for (const r of log.of('result')) {
    expect(r.status).toBe('finished');
    if (restarts !== undefined) expect(r.restarts).toBe(restarts);
  }
}
