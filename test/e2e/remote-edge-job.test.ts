/**
 * One job split over TWO processes by a hand-given assignment, its cross-process channels on
 * remote edges over the machine's NATS server (127.0.0.1:4222): test/fixtures/jobs/split-sum.mjs
 * (sequence → map | keyBy → running sum → exactly-once collect sink) at parallelism 2, with
 * source 0 and sum 0 in process A and source 1 and sum 1 in process B. So each sum subtask reads
 * one ring (its own process's source) and one remote edge (the other's), and each source writes
 * one ring and one remote edge, hash-partitioned. Every subtask runs in a worker thread through
 * the real worker entry (test/fixtures/cluster/split-host.mjs); the test plays the checkpoint
 * coordinator over IPC (coordination over NATS is not built yet).
 *
 * Checks (aligned): checkpoint 1, triggered at both sources while both hold after exactly `hold` records,
 * is acknowledged by both sum subtasks — they aligned barriers from a ring and a remote edge —
 * and its committed output is exactly the running sums of the 2 × hold records before the
 * barriers (nothing after a barrier got into the snapshot, nothing before it was missed); after
 * the release and the final checkpoint the whole output is exact. Unaligned: checkpoint 1 is
 * triggered at once, mid-stream, so its barriers overtake records (recorded as channel state of
 * ring and remote channels alike); its committed output is a per-key prefix and the whole output
 * is exact (restoring that channel state is not exercised here). Synchronised on task events and
 * flag files only. Cleanup: core NATS subjects only (nothing to delete); flows are named per run;
 * both processes exit; the directory is removed.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from './cli-process.js';
import { expectExactRunningSums, firstExit, type RunningSum, whenFiles } from './helpers.js';

const HOST = path.join(ROOT, 'test/fixtures/cluster/split-host.mjs');
const JOB = pathToFileURL(path.join(ROOT, 'test/fixtures/jobs/split-sum.mjs')).href;
const N = 4000;
const HOLD = 700;
const KEYS = 10;

interface HostEvent {
  kind: string;
  task: string;
  state?: string;
  message?: string;
  tasks?: string[];
  event?: {
    kind: string;
    checkpointId?: number;
    records?: RunningSum[];
    message?: string;
    stack?: string;
    metrics?: { alignmentDurationMs?: number };
  };
}

/** Every message of the hosts, in arrival order, and waits on them. */
class HostLog {
  readonly messages: (HostEvent & { instance: string })[] = [];
  #waiters: (() => void)[] = [];
  add(instance: string, m: HostEvent): void {
    this.messages.push({ ...m, instance });
    if (m.event?.kind === 'failed' || m.state === 'failed' || m.state === 'crashed')
      this.failure = `${m.task}: ${m.event?.message ?? m.message ?? m.state}\n${m.event?.stack ?? ''}`;
    for (const w of this.#waiters.splice(0)) w();
  }
  failure: string | null = null;
  async until(what: string, pred: () => boolean): Promise<void> {
    while (!pred()) {
      if (this.failure !== null) throw new Error(`a task failed while waiting for ${what}: ${this.failure}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }
  events(task: string, kind: string) {
    return this.messages.filter((m) => m.task === task && m.kind === 'event' && m.event?.kind === kind);
  }
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

/** Per key, the counts 1..m each once: a running-sum output that is a prefix of every key's input. */
function expectPrefixPerKey(sums: readonly RunningSum[]): void {
  const counts = new Map<number, number[]>();
  for (const s of sums) counts.set(s.key, [...(counts.get(s.key) ?? []), s.count]);
  for (const list of counts.values())
    expect([...list].sort((a, b) => a - b)).toEqual(Array.from({ length: list.length }, (_, i) => i + 1));
}

describe('a job split over two processes on remote edges', () => {
  it('aligns a checkpoint across rings and remote edges; committed output exact at the checkpoint and at the end', async () => {
    await splitRun(false);
  });

  it('unaligned: a checkpoint triggered mid-stream across rings and remote edges; committed output a per-key prefix, whole output exact', async () => {
    await splitRun(true);
  });
});

async function splitRun(unaligned: boolean): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'weir-split-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const run = `split${process.pid}-${Date.now().toString(36)}`;
  const assignment = { '0/0': 'a', '1/0': 'a', '0/1': 'b', '1/1': 'b' };
  const log = new HostLog();
  const hosts = new Map<string, ChildProcess>();
  for (const instance of ['a', 'b']) {
    const checkpointDir = path.join(dir, `checkpoints-${instance}`);
    const child = fork(HOST, [
      JSON.stringify({
        instance,
        assignment,
        jobModule: JOB,
        args: { n: String(N), hold: String(HOLD), keys: String(KEYS), dir },
        parallelism: 2,
        maxParallelism: 128,
        servers: ['nats://127.0.0.1:4222'],
        run,
        checkpointDir,
        unaligned,
      }),
    ]);
    child.on('message', (m) => log.add(instance, m as HostEvent));
    child.on('exit', (code) => {
      if (code !== 0 && code !== null)
        log.add(instance, { kind: 'result', task: instance, state: 'crashed' });
    });
    cleanups.push(() => child.kill('SIGKILL'));
    hosts.set(instance, child);
  }
  const tasks = Object.keys(assignment);
  const hostOf = (task: string) => hosts.get(assignment[task as keyof typeof assignment])!;
  const command = (task: string, cmd: object) => hostOf(task).send({ task, ...cmd });
  const acked = (task: string, id: number) =>
    log.events(task, 'acknowledge').some((m) => m.event?.checkpointId === id);
  const delivered = (task: string) => log.events(task, 'deliver').flatMap((m) => m.event!.records!);

  await log.until('both hosts', () => log.messages.filter((m) => m.kind === 'started').length === 2);
  expect(log.messages.filter((m) => m.kind === 'started').map((m) => [m.instance, m.tasks])).toEqual(
    expect.arrayContaining([
      ['a', ['0/0', '1/0']],
      ['b', ['0/1', '1/1']],
    ]),
  );
  await log.until('running', () => tasks.every((t) => log.events(t, 'running').length > 0));

  // Aligned: both sources hold after exactly HOLD records, so checkpoint 1 cuts the input at
  // 2 × HOLD. Unaligned: triggered at once, mid-stream, so its barriers overtake records.
  if (!unaligned) await whenFiles(dir, ['held-0', 'held-1'], firstExit(hosts.values()));
  for (const source of ['0/0', '0/1']) command(source, { cmd: 'trigger', checkpointId: 1, final: false });
  await log.until('checkpoint 1 acknowledged', () => tasks.every((t) => acked(t, 1)));
  for (const t of tasks) command(t, { cmd: 'complete', checkpointId: 1 });
  await log.until('checkpoint 1 committed', () =>
    ['1/0', '1/1'].every((t) => log.events(t, 'deliver').length > 0),
  );
  const atCheckpoint = [...delivered('1/0'), ...delivered('1/1')];
  // Per key the counts 1..m once; aligned, exactly the 2 × HOLD records before the barriers.
  expectPrefixPerKey(atCheckpoint);
  if (unaligned) expect(atCheckpoint.length).toBeLessThanOrEqual(2 * HOLD);
  else expect(atCheckpoint).toHaveLength(2 * HOLD);
  if (unaligned) await whenFiles(dir, ['held-0', 'held-1'], firstExit(hosts.values()));

  writeFileSync(path.join(dir, 'release'), '');
  await log.until('input ended', () => tasks.every((t) => log.events(t, 'input-ended').length > 0));
  for (const t of tasks) command(t, { cmd: 'trigger', checkpointId: 2, final: true });
  await log.until('final checkpoint acknowledged', () => tasks.every((t) => acked(t, 2)));
  for (const t of tasks) command(t, { cmd: 'complete', checkpointId: 2 });
  await log.until('every task finished', () =>
    tasks.every((t) => log.messages.some((m) => m.kind === 'result' && m.task === t)),
  );
  for (const t of tasks) {
    expect(log.messages.find((m) => m.kind === 'result' && m.task === t)?.state).toBe('finished');
  }
  const sums = [...delivered('1/0'), ...delivered('1/1')];
  expectExactRunningSums(sums, N, KEYS);
  for (const h of hosts.values()) h.send({ cmd: 'exit' });
}
