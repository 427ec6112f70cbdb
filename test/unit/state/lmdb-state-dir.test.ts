import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createStateDir,
  isOwnerAlive,
  type ProcessProbe,
  reclaimDeadStateDirs,
} from '../../../src/state/lmdb/lmdb-state-dir.js';

const probe = (alive: Record<number, string | null>): ProcessProbe => ({
  exists: (pid) => pid in alive,
  startTime: (pid) => alive[pid] ?? null,
});

describe('isOwnerAlive', () => {
  it('is dead when the pid is gone, or reused by a process started later', () => {
    expect(isOwnerAlive({ pid: 7, startTime: '100' }, probe({}))).toBe(false);
    expect(isOwnerAlive({ pid: 7, startTime: '100' }, probe({ 7: '100' }))).toBe(true);
    expect(isOwnerAlive({ pid: 7, startTime: '100' }, probe({ 7: '999' }))).toBe(false);
  });

  it('trusts the pid when a start time is unknown', () => {
    expect(isOwnerAlive({ pid: 7, startTime: null }, probe({ 7: '999' }))).toBe(true);
    expect(isOwnerAlive({ pid: 7, startTime: '100' }, probe({ 7: null }))).toBe(true);
  });
});

describe('reclaimDeadStateDirs', () => {
  let parent: string;
  afterEach(() => rmSync(parent, { recursive: true, force: true }));

  it('removes only state directories whose owner file names a dead process', () => {
    parent = mkdtempSync(path.join(tmpdir(), 'weir-reclaim-unit-'));
    const mk = (name: string, owner?: string) => {
      const dir = path.join(parent, name);
      mkdirSync(dir);
      if (owner !== undefined) writeFileSync(path.join(dir, 'owner.json'), owner);
      return dir;
    };
    const dead = mk('weir-state-dead', JSON.stringify({ pid: 11, startTime: '5' }));
    mk('weir-state-alive', JSON.stringify({ pid: 12, startTime: '5' }));
    mk('weir-state-no-owner');
    mk('weir-state-half-written', '{"pid": 1');
    mk('other-dead', JSON.stringify({ pid: 11, startTime: '5' }));
    expect(reclaimDeadStateDirs(parent, probe({ 12: '5' }))).toEqual([dead]);
  });

  it('createStateDir writes an owner file that keeps its directory while this process lives', () => {
    parent = mkdtempSync(path.join(tmpdir(), 'weir-reclaim-unit-'));
    const dir = createStateDir(parent);
    expect(reclaimDeadStateDirs(parent)).toEqual([]);
    expect(createStateDir(parent)).not.toBe(dir);
  });
});
