import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ClusterRestoreDecision,
  restoreNotice,
  sharedDirAtOpen,
} from '../../../src/cluster/cluster-restore.js';
import { JobWarning } from '../../../src/coordinator/job-events.js';
import type { ResolvedJobOptions } from '../../../src/coordinator/job-options.js';
import { CheckpointStorageError } from '../../../src/errors.js';

const options = (restoreFrom: string | undefined) => ({ restoreFrom }) as unknown as ResolvedJobOptions;
const none: ClusterRestoreDecision = { restore: null, skipped: [] };

let base: string;
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('sharedDirAtOpen', () => {
  it("classifies the shared directory only when restoreFrom names it ('latest' or its path)", () => {
    base = mkdtempSync(path.join(tmpdir(), 'weir-cluster-restore-'));
    const dir = path.join(base, 'cp');
    expect(sharedDirAtOpen(options(undefined), dir)).toBeNull();
    expect(sharedDirAtOpen(options(path.join(base, 'savepoint')), dir)).toBeNull();
    expect(sharedDirAtOpen(options('latest'), dir)).toEqual({ kind: 'missing' });
    mkdirSync(dir);
    expect(sharedDirAtOpen(options(dir), dir)).toEqual({ kind: 'empty' });
    writeFileSync(path.join(dir, 'data.mdb'), '');
    expect(sharedDirAtOpen(options('latest'), dir)).toEqual({ kind: 'storage' });
  });

  it('refuses a directory that lost data.mdb, or holds something else, as a job of one process does', () => {
    base = mkdtempSync(path.join(tmpdir(), 'weir-cluster-restore-'));
    writeFileSync(path.join(base, 'lock.mdb'), '');
    expect(() => sharedDirAtOpen(options('latest'), base)).toThrow(CheckpointStorageError);
    expect(() => sharedDirAtOpen(options('latest'), base)).toThrow(/lock\.mdb but no data\.mdb/);
    rmSync(path.join(base, 'lock.mdb'));
    writeFileSync(path.join(base, 'notes.txt'), '');
    expect(() => sharedDirAtOpen(options('latest'), base)).toThrow(/mistyped directory/);
  });
});

describe('restoreNotice', () => {
  it("'latest' without a checkpoint is a fresh start whose reason says what the directory was", () => {
    base = mkdtempSync(path.join(tmpdir(), 'weir-cluster-restore-'));
    const reasons = (['missing', 'empty', 'storage'] as const).map((kind) => {
      const n = restoreNotice(options('latest'), base, { kind }, none);
      expect(n?.kind).toBe('fresh-start');
      return n?.kind === 'fresh-start' ? n.event.reason : null;
    });
    expect(reasons).toEqual(['no-directory', 'empty-directory', 'no-completed-checkpoint']);
    expect(restoreNotice(options(undefined), base, null, none)).toBeNull();
  });

  it('an allowed fallback past damaged checkpoints is a fallback-past-damaged warning naming them; a plain restore says nothing', () => {
    base = mkdtempSync(path.join(tmpdir(), 'weir-cluster-restore-'));
    const restore = { checkpointId: 7, dir: base };
    expect(restoreNotice(options('latest'), base, { kind: 'storage' }, { restore, skipped: [] })).toBeNull();
    const n = restoreNotice(
      options('latest'),
      base,
      { kind: 'storage' },
      { restore, skipped: [{ checkpointId: 8, problem: 'chunk x: checksum mismatch' }] },
    );
    expect(n?.kind).toBe('warning');
    const w = n?.kind === 'warning' ? n.warning : null;
    expect(w).toBeInstanceOf(JobWarning);
    expect(w?.details).toEqual({
      kind: 'fallback-past-damaged',
      dir: base,
      restoredCheckpointId: 7,
      skipped: [{ checkpointId: 8, problem: 'chunk x: checksum mismatch' }],
    });
    expect(w?.message).toMatch(/past damaged checkpoint\(s\) 8 \(chunk x: checksum mismatch\)/);
  });
});
