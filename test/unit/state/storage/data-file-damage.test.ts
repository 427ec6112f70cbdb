/**
 * A truncated data.mdb is a typed error before lmdb maps it, never a SIGBUS/SIGSEGV. The damage
 * is opened in a child process, so that a signal kills the child, not the test runner.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointFileDamagedError } from '../../../../src/errors.js';
import { CheckpointStorage } from '../../../../src/state/storage/index.js';
import { dataFileProblem, parseMetaPage } from '../../../../src/state/storage/lmdb-data-file.js';
import { metadataFor, seededBytes, tempDir } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/open-damaged.mjs', import.meta.url));

function openInChild(dir: string, mode: 'checked' | 'unchecked') {
  const r = spawnSync(process.execPath, [FIXTURE, dir, mode], { encoding: 'utf8' });
  return { signal: r.signal, status: r.status, stdout: r.stdout.trim(), stderr: r.stderr };
}

/** A directory with three checkpoints of ~1 MiB of chunks each (data.mdb of several MiB). */
async function populated(label: string) {
  const t = tempDir(label);
  const storage = CheckpointStorage.open(t.dir);
  for (let id = 1; id <= 3; id++) {
    const owner = { operatorUid: 'op', subtaskIndex: 0 };
    const chunks = Array.from({ length: 16 }, (_, i) => ({
      name: `c${i}`,
      bytes: seededBytes(id * 100 + i, 64 * 1024),
    }));
    const handles = await storage.writeChunks(id, owner, chunks);
    await storage.commitCheckpoint(metadataFor(id, [{ ...owner, chunks: handles }]));
  }
  await storage.close();
  return t;
}

describe('checkpoint storage validates data.mdb before mapping it', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  it('a truncated data.mdb: the raw mapping dies with a signal; CheckpointStorage.open throws CheckpointFileDamagedError', async () => {
    const t = await populated('truncated');
    cleanups.push(t.remove);
    const file = join(t.dir, 'data.mdb');
    const full = readFileSync(file).length;
    truncateSync(file, Math.floor(full / 2));

    const raw = openInChild(t.dir, 'unchecked');
    expect(raw.signal === 'SIGBUS' || raw.signal === 'SIGSEGV').toBe(true);

    const checked = openInChild(t.dir, 'checked');
    expect(checked.signal).toBeNull();
    expect(checked.stdout).toMatch(
      /^CheckpointFileDamagedError: checkpoint file .*data\.mdb is damaged: the file has \d+ bytes but its meta page .* it was truncated/,
    );
    // The same, in this process (safe now: the check runs before the mapping).
    expect(() => CheckpointStorage.open(t.dir, { create: false })).toThrow(CheckpointFileDamagedError);
  });

  it('a data.mdb cut inside its meta pages, or emptied, is damaged too; an intact one opens', async () => {
    const t = await populated('tiny');
    cleanups.push(t.remove);
    const file = join(t.dir, 'data.mdb');
    expect(openInChild(t.dir, 'checked').stdout).toBe('opened "found"');
    const head = readFileSync(file).subarray(0, 4096 + 100);
    writeFileSync(file, head);
    expect(openInChild(t.dir, 'checked').stdout).toMatch(
      /CheckpointFileDamagedError: .*less than its two meta pages/,
    );
    writeFileSync(file, Buffer.alloc(0));
    expect(openInChild(t.dir, 'checked').stdout).toMatch(/CheckpointFileDamagedError: .*empty/);
  });
});

describe('dataFileProblem', () => {
  /** A meta page as LMDB writes it (see lmdb-data-file.ts for the offsets); empty trees. */
  function meta(txnId: number, lastPage: number, pageSize = 4096): Uint8Array {
    const page = new Uint8Array(160);
    const v = new DataView(page.buffer);
    v.setUint16(18, 0x08, true);
    v.setUint32(24, 0xbeefc0de, true);
    v.setUint32(28, 2, true);
    v.setUint32(48, pageSize, true);
    v.setBigUint64(88, 0xffffffffffffffffn, true);
    v.setBigUint64(136, 0xffffffffffffffffn, true);
    v.setBigUint64(144, BigInt(lastPage), true);
    v.setBigUint64(152, BigInt(txnId), true);
    return page;
  }
  const noPages = () => {
    throw new Error('no page should be read');
  };

  it('uses the meta page with the higher transaction id; a full file needs no walk', () => {
    expect(dataFileProblem(100 * 4096, meta(5, 99), meta(6, 99), noPages)).toBeUndefined();
    expect(dataFileProblem(100 * 4096, meta(7, 99), meta(6, 199), noPages)).toBeUndefined();
  });

  it('rejects what is not an LMDB meta page', () => {
    const bad = meta(1, 1);
    bad[24] = 0;
    expect(parseMetaPage(bad)).toBe('no LMDB magic number');
    expect(dataFileProblem(8192, bad, meta(1, 1), noPages)).toMatch(/meta page 0 is invalid/);
  });
});

describe('a data.mdb shorter than last_pg says (real files)', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });
  const problemOf = (file: string) => {
    const bytes = readFileSync(file);
    const pageSize = new DataView(bytes.buffer, bytes.byteOffset).getUint32(48, true);
    return dataFileProblem(
      bytes.length,
      bytes.subarray(0, 160),
      bytes.length >= pageSize + 160 ? bytes.subarray(pageSize, pageSize + 160) : undefined,
      (pgno, size) => bytes.subarray(pgno * size, (pgno + 1) * size),
    );
  };

  it('missing only free tail pages (last_pg raised past the end, as LMDB may leave it): healthy; missing live pages: truncated', async () => {
    const t = await populated('walk');
    cleanups.push(t.remove);
    const file = join(t.dir, 'data.mdb');
    expect(problemOf(file)).toBeUndefined();
    const bytes = readFileSync(file);
    const v = new DataView(bytes.buffer, bytes.byteOffset);
    const pageSize = v.getUint32(48, true);
    const newest = v.getBigUint64(152, true) > v.getBigUint64(pageSize + 152, true) ? 0 : pageSize;
    const lastPage = v.getBigUint64(newest + 144, true);
    v.setBigUint64(newest + 144, lastPage + 10n, true); // 10 pages "allocated" but never written
    writeFileSync(file, bytes);
    expect(problemOf(file)).toBeUndefined();
    expect(openInChild(t.dir, 'checked').stdout).toBe('opened "found"');
    truncateSync(file, bytes.length - 3 * pageSize); // now live pages are gone too
    expect(problemOf(file)).toMatch(
      /it was truncated \((overflow pages|page) \d+.* past the end|beyond the end/,
    );
  });
});
