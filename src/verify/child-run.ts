/**
 * One segment of `weir verify`'s failure run in a child process (`verify-child.ts`), so that the
 * `sigkill` failure kind can SIGKILL the whole process running the job, as a crash or the OOM
 * killer would. Records and options cross the IPC channel with `serialization: 'advanced'`
 * (structured clone: bigints, Maps, Dates survive). The child's stdout goes to this process's
 * stderr: `weir verify --json` keeps stdout for its report.
 */

import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { JobOptions } from '../coordinator/job-options.js';
import { JobFailedError } from '../errors.js';
import type { FromChild, ToChild } from './verify-child.js';

export interface ChildRunHandlers {
  deployed(attempt: number, restoredFrom: number | undefined): void;
  checkpoint(checkpointId: number): void;
  restarting(attempt: number, message: string): void;
  collected(sink: string, transaction: string | null, records: readonly unknown[]): void;
}

/** How a child segment ended. `killed`: by {@link ChildRun.kill}. */
export type ChildRunEnd =
  | {
      readonly status: 'finished' | 'stopped';
      readonly restarts: number;
      readonly checkpoints: number;
      readonly savepoint?: { readonly checkpointId: number; readonly path: string };
    }
  | { readonly status: 'killed' };

export interface ChildRun {
  /** Stop-with-savepoint into `dir` (the job may end first: then `done` says `finished`). */
  stop(dir: string): void;
  /** SIGKILL: the process dies at once, whatever it was doing. */
  kill(): void;
  /** Rejects with a JobFailedError when the job failed or the child died otherwise. */
  readonly done: Promise<ChildRunEnd>;
}

export function startChildRun(url: string, options: JobOptions, on: ChildRunHandlers): ChildRun {
  const child = fork(fileURLToPath(new URL('./verify-child.js', import.meta.url)), [], {
    serialization: 'advanced',
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  child.stdout?.pipe(process.stderr, { end: false });
  let killed = false;
  let end: ChildRunEnd | undefined;
  let failure: Error | undefined;
  // Messages that arrive after kill() were sent before the process died: what they report
  // happened (a delivery then was committed), so they count.
  child.on('message', (m: FromChild) => {
    switch (m.type) {
      case 'deployed':
        on.deployed(m.attempt, m.restoredFrom);
        break;
      case 'checkpoint':
        on.checkpoint(m.checkpointId);
        break;
      case 'restarting':
        on.restarting(m.attempt, m.message);
        break;
      case 'collected':
        on.collected(m.sink, m.transaction, m.records);
        break;
      case 'done':
        end = m.savepoint
          ? { status: m.status, restarts: m.restarts, checkpoints: m.checkpoints, savepoint: m.savepoint }
          : { status: m.status, restarts: m.restarts, checkpoints: m.checkpoints };
        break;
      case 'failed':
        failure = Object.assign(new Error(m.message), { name: m.name });
        break;
    }
  });
  const done = new Promise<ChildRunEnd>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      // A job that ended before the kill landed was not killed.
      if (end) resolve(end);
      else if (killed) resolve({ status: 'killed' });
      else {
        const why = failure
          ? failure.message
          : `its process exited (code ${code}, signal ${signal}) without a result`;
        reject(
          new JobFailedError(`job failed in weir verify's child process: ${why}`, 0, { cause: failure }),
        );
      }
    });
  });
  const send = (m: ToChild): void => {
    if (child.connected) child.send(m);
  };
  send({ type: 'start', url, options });
  return {
    stop: (dir) => send({ type: 'stop', dir }),
    kill: () => {
      if (killed || child.exitCode !== null) return;
      killed = true;
      child.kill('SIGKILL');
    },
    done,
  };
}
