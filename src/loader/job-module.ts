/**
 * Loads a job module in the current thread (main or worker) and returns its definition.
 *
 * `.ts`/`.mts`/`.cts` job modules load through Node's own type stripping where the runtime has it
 * (22.18+, 24) and through tsx's hooks elsewhere (Node 20); see `typescript-loader.ts`. A module
 * that cannot be loaded fails with a {@link JobModuleError}: a missing file says so once, a
 * syntax error names `file:line:column`.
 */

import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type JobDefinition, loadJobDefinition } from '../api/define-job.js';
import { JobModuleError } from '../errors.js';
import { formatSourceLocation, locateSyntaxError } from './syntax-error-location.js';
import {
  chooseModuleLoader,
  needsTsxAfterNativeFailure,
  registerTsx,
  runtimeTypeScriptSupport,
  whyTsx,
} from './typescript-loader.js';

/** Normalises a path or URL to a file URL string, resolved against `cwd`. */
export function jobModuleUrl(module: string | URL, cwd = process.cwd()): string {
  if (module instanceof URL) return module.href;
  if (/^[a-z][a-z0-9+.-]*:/i.test(module) && !/^[a-z]:[\\/]/i.test(module)) return module;
  return pathToFileURL(isAbsolute(module) ? module : resolve(cwd, module)).href;
}

export async function importJobModule(url: string): Promise<JobDefinition> {
  if (url.startsWith('file:') && !existsSync(fileURLToPath(url)))
    throw new JobModuleError(url, 'no such file');
  const pathname = new URL(url).pathname;
  // Decided by extension up front: Node caches a failed import of a URL, so "try, then register
  // and retry" has to retry under another URL (see below), which runs the module's top level again.
  const loader = chooseModuleLoader(pathname, runtimeTypeScriptSupport());
  if (loader === 'tsx') await registerTsx(url, whyTsx(pathname));
  let exports: unknown;
  try {
    exports = await import(url);
  } catch (e) {
    if (loader !== 'native' || !needsTsxAfterNativeFailure(e)) throw await importFailure(url, e);
    // Strip-only TypeScript refused this module (an enum, a `./x.js` import of a .ts file, a type
    // imported without `type`): load it through tsx under a distinct URL (the failed one is
    // cached). Every thread decides the same way, since they run the same Node.
    await registerTsx(url, `Node's type stripping cannot load it (${(e as Error).message})`);
    try {
      exports = await import(`${url}${url.includes('?') ? '&' : '?'}weir-loader=tsx`);
    } catch (e2) {
      throw await importFailure(url, e2);
    }
  }
  return loadJobDefinition(exports, url);
}

async function importFailure(url: string, e: unknown): Promise<JobModuleError> {
  const message = (e as Error)?.message ?? String(e);
  const at = await locateSyntaxError(e, url);
  if (at) {
    const first =
      message
        .split('\n')
        .find((l) => / ERROR: /.test(l))
        ?.replace(/^.*? ERROR: /, '') ?? message;
    return new JobModuleError(url, `syntax error at ${formatSourceLocation(at)}: ${first}`, { cause: e });
  }
  return new JobModuleError(url, `cannot be imported: ${message}`, { cause: e });
}
