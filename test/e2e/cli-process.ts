/** A `weir` CLI child process whose stderr a test can wait on (SIGKILL / --restore tests). */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Run {
  readonly child: ChildProcess;
  stderr: string;
  readonly exit: Promise<number | null>;
  /** Resolves when stderr matches `pattern` (now or later). */
  waitFor(pattern: RegExp): Promise<void>;
  /** Resolves at the next chunk of stderr. */
  next(): Promise<void>;
}

export function weir(args: string[]): Run {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/weir.js'), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let listeners: (() => void)[] = [];
  const run: Run = {
    child,
    stderr: '',
    exit: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    async waitFor(pattern) {
      while (!pattern.test(run.stderr)) await run.next();
    },
    next: () => new Promise<void>((resolve) => listeners.push(resolve)),
  };
  child.stderr!.on('data', (b: Buffer) => {
    run.stderr += b.toString();
    const l = listeners;
    listeners = [];
    for (const f of l) f();
  });
  child.on('exit', () => {
    for (const f of listeners) f();
    listeners = [];
  });
  return run;
}

/** What a finished `weir` CLI process printed, and its exit code. */
export interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `weir args…` to its end (run from the repository root) and collects stdout and stderr. */
export function weirToEnd(args: string[]): Promise<Exit> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/weir.js'), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => {
    stdout += b.toString();
  });
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
