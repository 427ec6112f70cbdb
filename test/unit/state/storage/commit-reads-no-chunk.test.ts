/**
 * The commit's existence check looks chunks up by key and never reads them (issue 14): before,
 * lmdb-js's `doesExist` copied every referenced chunk's value, so each commit made the whole
 * checkpoint's bytes resident file pages of the coordinator's process (~560 MiB at 5 M keys after
 * 16 full checkpoints). Linux only: it reads the process's file-backed RSS.
 */

import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointStorage } from '../../../../src/state/storage/index.js';
import { metadataFor, seededBytes, subtask, tempDir } from './helpers.js';

/** Resident pages of mapped files in this process, bytes (`RssFile` of /proc/self/status). */
function rssFile(): number {
  const m = /^RssFile:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return Number(m![1]) * 1024;
}

const MIB = 1024 * 1024;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.skipIf(!existsSync('/proc/self/status'))('commit does not read chunks', () => {
  it('commits and discards 32 MiB of chunks without making them resident', async () => {
    const { dir, remove } = tempDir('commit-no-read');
    cleanups.push(remove);
    const storage = CheckpointStorage.open(dir);
    cleanups.push(() => storage.close());
    const chunks = Array.from({ length: 8 }, (_, i) => ({
      name: `kg-${i}`,
      keyGroup: i,
      bytes: seededBytes(i + 1, 4 * MIB),
    }));
    const handles = await storage.writeChunks(1, { operatorUid: 'sum', subtaskIndex: 0 }, chunks);
    const before = rssFile();
    const outcome = await storage.commitCheckpoint(metadataFor(1, [subtask('sum', 0, handles)]));
    expect(outcome.state).toBe('committed');
    expect(storage.missingChunks(metadataFor(2, [subtask('sum', 0, handles)]))).toEqual([]);
    // Written with pwrite, not through the map: only a commit that reads them maps them in.
    expect(rssFile() - before).toBeLessThan(8 * MIB);
    // Discarding it once a newer checkpoint is committed deletes its chunks without reading them.
    const newer = await storage.writeChunks(2, { operatorUid: 'sum', subtaskIndex: 0 }, chunks.slice(0, 1));
    expect((await storage.commitCheckpoint(metadataFor(2, [subtask('sum', 0, newer)]))).state).toBe(
      'committed',
    );
    const beforeDiscard = rssFile();
    const discarded = await storage.discardCheckpoint(1);
    expect(discarded).toMatchObject({ state: 'discarded', deletedChunks: 8, freedBytes: 32 * MIB });
    // (LMDB's own free path still maps ~45 % of them in, 14 of 32 MiB here; reading the values
    // for their size mapped all of it.)
    expect(rssFile() - beforeDiscard).toBeLessThan(24 * MIB);
    // A chunk that does not exist is still found missing.
    const ghost = { ...handles[0], chunkId: `${handles[0].chunkId}x` };
    expect(storage.missingChunks(metadataFor(2, [subtask('sum', 0, [ghost])]))).toEqual([ghost.chunkId]);
  });
});
