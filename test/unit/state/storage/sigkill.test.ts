import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointStorage } from '../../../../src/state/storage/index.js';
import { tempDir } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/killed-writer.mjs', import.meta.url));

/** Spawns the writer, SIGKILLs it when `killOn` matches a line, and returns every line it printed. */
async function runAndKill(dir: string, mode: string, killOn: (line: string) => boolean): Promise<string[]> {
  const child: ChildProcess = spawn(process.execPath, [FIXTURE, dir, mode], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (data) => {
    stderr += data;
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  for await (const line of createInterface({ input: child.stdout! })) {
    lines.push(line);
    if (killOn(line)) {
      child.kill('SIGKILL');
      break;
    }
  }
  const signal = await exited;
  if (signal !== 'SIGKILL') throw new Error(`writer was not killed (signal ${signal}); stderr:\n${stderr}`);
  return lines;
}

describe('a writer process killed with SIGKILL', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('mid-write: committed checkpoints survive intact, the half-written one is invisible and cleaned up', async () => {
    const t = tempDir('sigkill-orphans');
    cleanups.push(t.remove);
    const lines = await runAndKill(t.dir, 'orphans', (line) => line === 'written 4');
    expect(lines).toEqual(['committed 1', 'committed 2', 'committed 3', 'written 4']);

    const storage = CheckpointStorage.open(t.dir, { create: false });
    cleanups.push(() => storage.close());
    expect(storage.listCompleted()).toEqual([1, 2, 3]);
    for (const id of [1, 2, 3]) expect(storage.verifyCheckpoint(id).state).toBe('ok');
    expect(storage.findRestorable()).toMatchObject({
      state: 'found',
      metadata: { checkpointId: 3 },
      skipped: [],
    });
    // Checkpoint 4's durable orphans push the next id past it.
    expect(storage.nextCheckpointId()).toBe(5);
    const cleaned = await storage.cleanup({ keepFromCheckpointId: storage.nextCheckpointId() });
    expect(cleaned.deletedChunks).toBeGreaterThanOrEqual(8);
    expect(cleaned.freedBytes).toBe(cleaned.deletedChunks * 32 * 1024);
    for (const id of [1, 2, 3]) expect(storage.verifyCheckpoint(id).state).toBe('ok');

    // The store keeps working: a new checkpoint writes and commits.
    const handles = await storage.writeChunks(5, { operatorUid: 'x', subtaskIndex: 0 }, [
      { name: 'after', bytes: new Uint8Array([1, 2, 3]) },
    ]);
    expect(
      await storage.commitCheckpoint({
        checkpointId: 5,
        timestamp: 0,
        incremental: false,
        job: { maxParallelism: 1, operators: [{ operatorUid: 'x', parallelism: 1 }] },
        subtasks: [{ operatorUid: 'x', subtaskIndex: 0, chunks: handles }],
      }),
    ).toEqual({ state: 'committed', checkpointId: 5 });
  });

  it('mid-commit loop: every reported commit is durable and at most the one in progress is extra', async () => {
    const t = tempDir('sigkill-commits');
    cleanups.push(t.remove);
    const lines = await runAndKill(t.dir, 'commit-loop', (line) => line === 'committed 6');
    const reported = lines.map((line) => Number(line.split(' ')[1]));
    expect(reported).toEqual([1, 2, 3, 4, 5, 6]);

    const storage = CheckpointStorage.open(t.dir, { create: false });
    cleanups.push(() => storage.close());
    const listed = storage.listCompleted();
    expect(listed.slice(0, 6)).toEqual(reported);
    expect(listed.length).toBeLessThanOrEqual(7);
    for (const id of listed) expect(storage.verifyCheckpoint(id).state).toBe('ok');
    expect(storage.nextCheckpointId()).toBeGreaterThan(listed.at(-1)!);
  });
});
