import { afterEach, describe, expect, it } from 'vitest';
import { checkpointsCommand } from '../../../src/cli/checkpoints-command.js';
import { CheckpointStorage } from '../../../src/state/storage/checkpoint-storage.js';
import type { ChunkHandle } from '../../../src/state/storage/chunk-handle.js';
import {
  flipByte,
  metadataFor,
  overwriteChunkInLmdb,
  seededBytes,
  subtask,
  tempDir,
} from '../state/storage/helpers.js';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, output: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

/** Checkpoint 1 (full: 3 chunks) and checkpoint 2 (incremental: shares 1's chunks + 1 own). */
async function twoCheckpoints(): Promise<{ dir: string; own2: ChunkHandle }> {
  const t = tempDir('cli');
  cleanups.push(t.remove);
  const storage = CheckpointStorage.open(t.dir);
  try {
    const chunks = (seed: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        name: `kg-${i}`,
        keyGroup: i,
        bytes: seededBytes(seed + i, 100),
      }));
    const base = await storage.writeChunks(1, { operatorUid: 'sum', subtaskIndex: 0 }, chunks(1, 3));
    await storage.commitCheckpoint(metadataFor(1, [subtask('sum', 0, base)]));
    const own = await storage.writeChunks(2, { operatorUid: 'sum', subtaskIndex: 0 }, chunks(9, 1));
    await storage.commitCheckpoint(
      metadataFor(2, [subtask('sum', 0, [...base, ...own])], { incremental: true }),
    );
    return { dir: t.dir, own2: own[0] };
  } finally {
    await storage.close();
  }
}

describe('weir checkpoints DIR', () => {
  it('lists each checkpoint with kind, sizes and operators, and verifies it', async () => {
    const { dir } = await twoCheckpoints();
    const c = capture();
    expect(await checkpointsCommand([dir], c.output)).toBe(0);
    expect(c.err).toEqual([]);
    const [head, row1, row2] = c.out;
    expect(head).toMatch(/^checkpoint\s+time \(UTC\)\s+kind\s+size\s+own\s+chunks\s+status\s+operators$/);
    expect(row1).toMatch(/^1\s+\d{4}-\d\d-\d\dT\S+Z\s+full\s+300 B\s+300 B\s+3\s+ok\s+sum ×1$/);
    expect(row2).toMatch(/^2\s+\S+\s+incremental\s+400 B\s+100 B\s+4\s+ok\s+sum ×1$/);
    expect(c.out.at(-1)?.trim()).toBe('2 checkpoint(s), every chunk verified');
  });

  it('--json emits one object with every checkpoint', async () => {
    const { dir } = await twoCheckpoints();
    const c = capture();
    expect(await checkpointsCommand([dir, '--json'], c.output)).toBe(0);
    const parsed = JSON.parse(c.out.join('\n'));
    expect(parsed).toMatchObject({ dir, ok: true });
    expect(
      parsed.checkpoints.map((r: { checkpointId: number; kind: string; status: string }) => [
        r.checkpointId,
        r.kind,
        r.status,
      ]),
    ).toEqual([
      [1, 'full', 'ok'],
      [2, 'incremental', 'ok'],
    ]);
    expect(parsed.checkpoints[1]).toMatchObject({ totalBytes: 400, ownBytes: 100, chunkCount: 4 });
  });

  it('a corrupt chunk: exit 1, naming the damaged checkpoint and chunk', async () => {
    const { dir, own2 } = await twoCheckpoints();
    await overwriteChunkInLmdb(dir, own2.chunkId, flipByte(10));
    const c = capture();
    expect(await checkpointsCommand([dir], c.output)).toBe(1);
    expect(c.out[1]).toMatch(/\bok\b/);
    expect(c.out[2]).toMatch(/\bdamaged\b/);
    expect(c.err.join('\n')).toMatch(/1 of 2 checkpoint\(s\) damaged/);
    expect(c.err.join('\n')).toContain(`checkpoint 2: chunk ${own2.chunkId}`);
    expect(c.err.join('\n')).toMatch(/checksum mismatch/);

    const j = capture();
    expect(await checkpointsCommand([dir, '--json'], j.output)).toBe(1);
    const parsed = JSON.parse(j.out[0]);
    expect(parsed.ok).toBe(false);
    expect(parsed.checkpoints[1].problems[0]).toMatch(/corrupt/);
  });

  it('a corrupt shared chunk damages every checkpoint that references it', async () => {
    const { dir, own2 } = await twoCheckpoints();
    const shared = `${own2.chunkId.slice(0, 16).replace(/2$/, '1')}`;
    const storage = CheckpointStorage.open(dir, { create: false });
    const base = storage.loadMetadata(1)!.subtasks[0].chunks[0];
    await storage.close();
    expect(base.chunkId.startsWith(shared)).toBe(true);
    await overwriteChunkInLmdb(dir, base.chunkId, flipByte(3));
    const c = capture();
    expect(await checkpointsCommand([dir], c.output)).toBe(1);
    expect(c.err.join('\n')).toMatch(/2 of 2 checkpoint\(s\) damaged/);
  });

  it('not a checkpoint directory: exit 1 with a clear message; usage errors: exit 2', async () => {
    const t = tempDir('cli-empty');
    cleanups.push(t.remove);
    const c = capture();
    expect(await checkpointsCommand([t.dir], c.output)).toBe(1);
    expect(c.err.join()).toMatch(/no checkpoint storage in/);
    const j = capture();
    expect(await checkpointsCommand([t.dir, '--json'], j.output)).toBe(1);
    expect(JSON.parse(j.out[0])).toMatchObject({
      ok: false,
      error: expect.stringMatching(/no checkpoint storage/),
    });
    const u = capture();
    expect(await checkpointsCommand([], u.output)).toBe(2);
    expect(u.err.join()).toMatch(/usage: weir checkpoints DIR/);
    expect(await checkpointsCommand(['a', 'b'], capture().output)).toBe(2);
    expect(await checkpointsCommand(['a', '--bogus'], capture().output)).toBe(2);
  });

  it('a checkpoint directory with no committed checkpoint yet: exit 0', async () => {
    const t = tempDir('cli-fresh');
    cleanups.push(t.remove);
    await CheckpointStorage.open(t.dir).close();
    const c = capture();
    expect(await checkpointsCommand([t.dir], c.output)).toBe(0);
    expect(c.out).toEqual([`${t.dir}: no committed checkpoints`]);
  });
});
