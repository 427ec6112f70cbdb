/**
 * Where lmdb state backends put their environments: one directory per job, created by the main
 * thread before the first execution and removed after the last. Each backend makes its own
 * subdirectory and removes it on close; the job's directory also catches what a worker thread
 * terminated mid-run (a failed execution's pool is destroyed) could not remove.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function createStateDir(): string {
  return mkdtempSync(join(tmpdir(), 'weir-state-'));
}

export function removeStateDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
