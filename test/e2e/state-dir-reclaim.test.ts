/**
 * A run killed with SIGKILL cannot remove its lmdb working directory (tens of MiB); the next run
 * with the lmdb backend reclaims it (its owner file names a dead process), and leaves the
 * directory of a run that is still alive. Host processes run with their own TMPDIR.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const HOST = fileURLToPath(new URL('../fixtures/state-dir-host.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

let temp: string;
const children: ChildProcess[] = [];

function host(mode: 'hang' | 'run'): ChildProcess {
  const child = spawn(process.execPath, [HOST, DIST, mode], {
    env: { ...process.env, TMPDIR: temp },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return child;
}

/** The state directory a 'hang' host prints once it has checkpointed. */
function stateDirOf(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d) => {
      err += d;
    });
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.on('exit', (code) =>
      reject(new Error(`host exited (${code}) before printing its state dir: ${err}`)),
    );
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGKILL');
      await exited(c);
    }
  }
  rmSync(temp, { recursive: true, force: true });
});

describe('lmdb working directories of killed runs', () => {
  it('are reclaimed by the next run; a live run keeps its own', async () => {
    temp = mkdtempSync(path.join(tmpdir(), 'weir-reclaim-'));
    const killed = host('hang');
    const killedDir = await stateDirOf(killed);
    const alive = host('hang');
    const aliveDir = await stateDirOf(alive);
    expect(path.dirname(killedDir)).toBe(temp);
    killed.kill('SIGKILL');
    await exited(killed);
    expect(existsSync(killedDir)).toBe(true); // a SIGKILLed run removes nothing itself

    const next = host('run');
    expect(await exited(next)).toBe(0);
    expect(existsSync(killedDir)).toBe(false);
    expect(existsSync(aliveDir)).toBe(true);
  });
});
