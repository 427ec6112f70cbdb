import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSharedCheckpointStorage } from '../../../src/cluster/shared-checkpoint-storage.js';
import { CheckpointFileDamagedError } from '../../../src/errors.js';
import { CheckpointStorage } from '../../../src/state/storage/checkpoint-storage.js';

let base: string;
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('openSharedCheckpointStorage', () => {
  it('a data.mdb another instance is still creating (empty) opens once it is written', async () => {
    base = mkdtempSync(path.join(tmpdir(), 'weir-shared-storage-'));
    const made = path.join(base, 'made');
    await CheckpointStorage.open(made).close();
    const dir = path.join(base, 'shared');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'data.mdb'), ''); // what a process sees between LMDB's create and write
    const seen: string[] = [];
    const storage = await openSharedCheckpointStorage(dir, 60_000, (e) => {
      seen.push(e.reason);
      // The creator finishes: its initialised file replaces the empty one.
      copyFileSync(path.join(made, 'data.mdb'), path.join(dir, 'data.mdb'));
    });
    try {
      expect(seen).toEqual(['the file is empty (0 bytes)']);
      expect(storage.listCompleted()).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  it('a data.mdb that stays damaged is still refused (CheckpointFileDamagedError) after the wait', async () => {
    base = mkdtempSync(path.join(tmpdir(), 'weir-shared-storage-'));
    writeFileSync(path.join(base, 'data.mdb'), '');
    let retries = 0;
    await expect(openSharedCheckpointStorage(base, 100, () => retries++)).rejects.toBeInstanceOf(
      CheckpointFileDamagedError,
    );
    expect(retries).toBeGreaterThan(0);
  });
});
