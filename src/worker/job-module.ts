/**
 * Loads a job module in the current thread (main or worker) and returns its definition.
 *
 * `.ts`/`.mts`/`.cts` job modules work on Node 20 through tsx: before importing one, tsx's ESM
 * hooks are registered for this thread (once per thread).
 */

import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type JobDefinition, loadJobDefinition } from '../api/define-job.js';
import { JobModuleError } from '../errors.js';

/** Per-thread flag: tsx's hooks are process-wide per thread and must be registered once. */
const TSX_REGISTERED = Symbol.for('weir.tsxRegistered');

/** Normalises a path or URL to a file URL string, resolved against `cwd`. */
export function jobModuleUrl(module: string | URL, cwd = process.cwd()): string {
  if (module instanceof URL) return module.href;
  if (/^[a-z][a-z0-9+.-]*:/i.test(module) && !/^[a-z]:[\\/]/i.test(module)) return module;
  return pathToFileURL(isAbsolute(module) ? module : resolve(cwd, module)).href;
}

export async function importJobModule(url: string): Promise<JobDefinition> {
  // Decided by extension up front: Node caches a failed import of a URL, so "try, then register
  // and retry" would keep failing.
  if (TS_EXTENSION.test(new URL(url).pathname)) await registerTsx();
  let exports: unknown;
  try {
    exports = await import(url);
  } catch (e) {
    throw new JobModuleError(url, `cannot be imported: ${(e as Error)?.message ?? e}`, { cause: e });
  }
  return loadJobDefinition(exports, url);
}

const TS_EXTENSION = /\.[cm]?tsx?$/;

async function registerTsx(): Promise<void> {
  const g = globalThis as Record<symbol, unknown>;
  if (g[TSX_REGISTERED]) return;
  const { register } = await import('tsx/esm/api');
  register();
  g[TSX_REGISTERED] = true;
}
