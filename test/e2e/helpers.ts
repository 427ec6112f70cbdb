/** Shared helpers for end-to-end tests: they run real jobs from dist/ in real worker threads. */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { type JobOptions, type JobResult, startJob } from '../../dist/index.js';
import { CheckpointStorage } from '../../dist/state/storage/checkpoint-storage.js';

export const fixture = (name: string): string =>
  fileURLToPath(new URL(`../fixtures/jobs/${name}`, import.meta.url));
export const example = (name: string): string =>
  fileURLToPath(new URL(`../../examples/${name}`, import.meta.url));

/** OS threads of this process (Linux): worker threads are OS threads, so a leak shows here. */
export function threadCount(): number {
  return readdirSync('/proc/self/task').length;
}

/**
 * Resolves once the thread count is back to `expected`, or with the last count after `ms`. An
 * exiting thread may still be tearing down for a moment after `terminate()` resolved, so the
 * check waits for the condition (bounded) instead of reading once. The bound is generous (30 s):
 * it only ends the wait for a thread that leaked; a loaded machine (files run side by side) can
 * take seconds to tear one down, and a count that is back returns at once.
 */
export async function threadCountSettles(expected: number, ms = 30_000): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    const n = threadCount();
    if (n <= expected || Date.now() > deadline) return n;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Final value per key: the record with the highest `count` (running aggregates only grow). */
export function finalByKey<T extends { key: unknown }>(
  records: readonly T[],
  order: (r: T) => number,
): Map<unknown, T> {
  const out = new Map<unknown, T>();
  for (const r of records) {
    const prev = out.get(r.key);
    if (!prev || order(r) > order(prev)) out.set(r.key, r);
  }
  return out;
}

/** Records of the committed part files (`*.jsonl`) a file sink wrote to `dir`; none if it does not exist. */
export function committedJsonl<T>(dir: string): T[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) =>
      readFileSync(path.join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as T),
    );
}

/** Names in `dir` that are not committed part files (in-progress or pending ones). */
export function uncommittedFiles(dir: string): string[] {
  return readdirSync(dir).filter((f) => !f.endsWith('.jsonl'));
}

/**
 * The oracle of the keyed running-sum fixtures: final sum and count per key of the values
 * 0..n-1, keyed by value mod `keys`.
 */
export function expectedSums(n: number, keys: number): Map<number, { sum: number; count: number }> {
  const m = new Map<number, { sum: number; count: number }>();
  for (let x = 0; x < n; x++) {
    const e = m.get(x % keys) ?? { sum: 0, count: 0 };
    e.sum += x;
    e.count++;
    m.set(x % keys, e);
  }
  return m;
}

/** An output record of the keyed running-sum fixtures. */
export interface RunningSum {
  key: number;
  sum: number;
  count: number;
}

/**
 * Exactly-once check of a keyed running-sum output over the values 0..n-1: no (key, count) twice,
 * nothing lost, and each key's last record has the exact final sum and count.
 */
export function expectExactRunningSums(sums: readonly RunningSum[], n: number, keys: number): void {
  expect(new Set(sums.map((s) => `${s.key}/${s.count}`)).size).toBe(sums.length); // no duplicate
  expect(sums).toHaveLength(n); // nothing lost
  const finals = finalByKey(sums, (s) => s.count);
  for (const [key, e] of expectedSums(n, keys)) expect(finals.get(key)).toEqual({ key, ...e });
}

/** What {@link whenCommitted} needs of a job client: its `checkpoint` event. */
interface CheckpointEvents {
  on(event: 'checkpoint', listener: () => void): unknown;
  off(event: 'checkpoint', listener: () => void): unknown;
}

/**
 * Resolves at the first completed checkpoint after which `committed()` finds output committed to
 * the external system (rows, stream entries, messages): each completed checkpoint is a chance to
 * look, one probe at a time. Tests cut connections or cancel there, so that later commits
 * straddle the cut and a restore has committed output behind it — on output, not on time or on a
 * checkpoint count (under load a checkpoint can complete before the first record). A probe that
 * throws rejects.
 */
export function whenCommitted(client: CheckpointEvents, committed: () => Promise<boolean>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let looking = false;
    let done = false;
    const onCheckpoint = () => {
      if (looking || done) return;
      looking = true;
      committed().then(
        (yes) => {
          looking = false;
          if (!yes || done) return;
          done = true;
          client.off('checkpoint', onCheckpoint);
          resolve();
        },
        (err: unknown) => {
          done = true;
          client.off('checkpoint', onCheckpoint);
          reject(err);
        },
      );
    };
    client.on('checkpoint', onCheckpoint);
  });
}

/**
 * The flag file of service-pipelines.mjs's `hold` argument: the job's sources read at full rate,
 * then hold mid-run (emit nothing, take checkpoints) until `release()` — so a test that kills,
 * cancels or cuts a connection acts while the job still runs, however fast or loaded the machine.
 * `dispose()` removes the file (after the run).
 */
export function holdFlag(): { readonly path: string; release(): void; dispose(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'weir-hold-'));
  const file = path.join(dir, 'release');
  return {
    path: file,
    release: () => writeFileSync(file, ''),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Runs a keyed running-sum fixture (`job`) over the values 0..n-1 with `keys` keys to its end and
 * returns the result and its `sums` sink. Restarts: 3 without delay unless `options` says
 * otherwise; `args` add to (or override) n and keys.
 */
export async function runSums(
  job: string,
  n: number,
  keys: number,
  args: Record<string, string>,
  options: JobOptions,
): Promise<{ result: JobResult; sums: RunningSum[] }> {
  const client = await startJob(fixture(job), {
    restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
    ...options,
    args: { n: String(n), keys: String(keys), ...args },
  });
  const result = await client.done;
  return { result, sums: result.sinks.sums as RunningSum[] };
}

/** The completed checkpoints in `dir`, oldest first: whether each one references channel state. */
export async function channelStateByCheckpoint(dir: string): Promise<boolean[]> {
  const storage = CheckpointStorage.open(dir, { create: false });
  try {
    return storage
      .listCompleted()
      .map((id) =>
        Boolean(
          storage.loadMetadata(id)?.subtasks.some((s) => s.chunks.some((c) => c.name === 'channel-state')),
        ),
      );
  } finally {
    await storage.close();
  }
}

/**
 * The output of a running-sum job restored from a checkpoint (values 0..n-1): every key's final
 * sum and count are exact, and the counts the restored run emitted per key follow each other with
 * no gap and no repeat (they continue where the checkpoint left them).
 */
export function expectRestoredRunningSums(sums: readonly RunningSum[], n: number, keys: number): void {
  const finals = finalByKey(sums, (s) => s.count);
  for (const [key, e] of expectedSums(n, keys)) expect(finals.get(key)).toEqual({ key, ...e });
  const perKey = new Map<number, number[]>();
  for (const s of sums) (perKey.get(s.key) ?? perKey.set(s.key, []).get(s.key)!).push(s.count);
  for (const counts of perKey.values()) {
    counts.sort((x, y) => x - y);
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBe(counts[i - 1] + 1);
  }
}

/**
 * Resolves once every reader of a job using holding-source.mjs's `holdingForSavepoint` holds
 * (`held-<subtask>` exists in `dir` for each of `parallelism` subtasks): polls the files, so it
 * waits on the job, not on time. Rejects if `ended` settles first (the job failed or ended).
 */
export function whenHeld(dir: string, parallelism: number, ended: Promise<unknown>): Promise<void> {
  return whenFiles(
    dir,
    Array.from({ length: parallelism }, (_, i) => `held-${i}`),
    ended,
  );
}

/**
 * Resolves once every file in `names` exists in `dir` (fs.watch, then a check, so none is missed).
 * With `ended` (the job's `done`, or the children's exit), rejects as soon as that settles first:
 * a job that ended or failed before writing the files shows its end, not a test timeout.
 */
export function whenFiles(dir: string, names: readonly string[], ended?: Promise<unknown>): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const all = () => names.every((n) => existsSync(path.join(dir, n)));
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      watcher.close();
      if (error) reject(error);
      else resolve();
    };
    const watcher = watch(dir, () => {
      if (all()) finish();
    });
    const endedFirst = (outcome: string) => () => {
      // A file written just before the end still counts.
      if (all()) finish();
      else finish(new Error(`the job ${outcome} before ${names.join(', ')} existed in ${dir}`));
    };
    ended?.then(endedFirst('ended'), endedFirst('failed'));
    if (all()) finish();
  });
}

/** Resolves when the first of `children` exits (at once if one already has): a `whenFiles` end. */
export function firstExit(children: Iterable<ChildProcess>): Promise<void> {
  return new Promise((resolve) => {
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    }
  });
}
