/**
 * Where lmdb state backends put their environments: one directory per job, created by the main
 * thread before the first execution and removed after the last. Each backend makes its own
 * subdirectory and removes it on close; the job's directory also catches what a worker thread
 * terminated mid-run (a failed execution's pool is destroyed) could not remove.
 *
 * A process killed with SIGKILL removes nothing, and its directory (30–140 MiB of LMDB files)
 * would stay in the temp dir forever. So each job directory holds an owner file (`owner.json`:
 * pid and, on Linux, the process start time, which tells a live owner from a later process that
 * reuses its pid), and creating a job directory first removes the directories whose owner is
 * dead. A directory without an owner file (being created right now, or by an older weir) is left
 * alone: nothing tells whether its owner is alive.
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const STATE_DIR_PREFIX = 'weir-state-';
export const OWNER_FILE = 'owner.json';

/** Who created a job's state directory. */
export interface StateDirOwner {
  readonly pid: number;
  /** `/proc/<pid>/stat` start time (clock ticks since boot); null where there is no /proc. */
  readonly startTime: string | null;
}

/** What the liveness decision needs to know about a pid. */
export interface ProcessProbe {
  /** Whether a process with this pid exists (it may belong to another user). */
  exists(pid: number): boolean;
  /** Its start time as in {@link StateDirOwner.startTime}; null when unknown. */
  startTime(pid: number): string | null;
}

/**
 * Pure decision: is the owner of a state directory alive? Dead when its pid does not exist, or
 * when both start times are known and differ (the pid was reused by a later process).
 */
export function isOwnerAlive(owner: StateDirOwner, probe: ProcessProbe): boolean {
  if (!probe.exists(owner.pid)) return false;
  if (owner.startTime === null) return true;
  const now = probe.startTime(owner.pid);
  return now === null || now === owner.startTime;
}

export const systemProcessProbe: ProcessProbe = {
  exists(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      // EPERM: it exists, owned by someone else.
      return (e as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
  startTime(pid) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name (which may contain spaces) start after the last ')'.
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
    } catch {
      return null; // no /proc (not Linux) or the process is gone: unknown
    }
  },
};

export function createStateDir(parent: string = tmpdir()): string {
  reclaimDeadStateDirs(parent);
  const dir = mkdtempSync(join(parent, STATE_DIR_PREFIX));
  const owner: StateDirOwner = { pid: process.pid, startTime: systemProcessProbe.startTime(process.pid) };
  writeFileSync(join(dir, OWNER_FILE), JSON.stringify(owner));
  return dir;
}

export function removeStateDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Removes the job state directories in `parent` whose owner process is dead (killed runs).
 * Returns their paths. Cost: one readdir of `parent` and one small read per state directory.
 */
export function reclaimDeadStateDirs(
  parent: string = tmpdir(),
  probe: ProcessProbe = systemProcessProbe,
): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch (e) {
    console.warn(`weir: cannot list ${parent} to reclaim state directories of killed runs:`, e);
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(STATE_DIR_PREFIX)) continue;
    const dir = join(parent, name);
    const owner = readOwner(dir);
    if (owner === null || isOwnerAlive(owner, probe)) continue;
    rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

/** The directory's owner, or null when it has no (readable, well-formed) owner file. */
function readOwner(dir: string): StateDirOwner | null {
  let text: string;
  try {
    text = readFileSync(join(dir, OWNER_FILE), 'utf8');
  } catch {
    return null; // no owner file: a backend's own directory, one being created, or an older weir's
  }
  try {
    const o = JSON.parse(text) as Partial<StateDirOwner>;
    if (typeof o.pid !== 'number' || !Number.isInteger(o.pid) || o.pid <= 0) return null;
    return { pid: o.pid, startTime: typeof o.startTime === 'string' ? o.startTime : null };
  } catch {
    return null; // written half by a process killed mid-write: left alone, like no owner file
  }
}
