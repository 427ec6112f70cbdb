/**
 * How a `.ts` job module is loaded on the running Node, and the one fallback between the two ways.
 *
 * - Node 22.18+ and 24 strip types natively (`process.features.typescript`): `.ts`, `.mts` and
 *   `.cts` modules load with no loader at all, in the main thread and in every worker. That saves
 *   tsx's start-up (esbuild, measured in README "Supported Node versions") in every thread.
 * - Node 20 (and 22 before 22.18) has no type stripping: tsx's ESM hooks are registered in the
 *   thread before the import. tsx is an optional peer dependency; without it the load fails with
 *   a {@link JobModuleError} that says to install it.
 *
 * Native stripping is strip-only: it refuses `enum`, namespaces and parameter properties, does not
 * map `./x.js` to `./x.ts`, and keeps an import of a type that lacks the `type` keyword (so the
 * import fails at link time). A module that fails natively for one of those reasons is loaded
 * again through tsx when tsx is installed (see {@link needsTsxAfterNativeFailure}); with no tsx,
 * the error says what to change.
 */

import { JobModuleError } from '../errors.js';

/** How one module is imported: as is (JS), by Node's own type stripping, or through tsx's hooks. */
export type ModuleLoader = 'plain' | 'native' | 'tsx';

/** What {@link chooseModuleLoader} needs to know about the runtime. */
export interface RuntimeTypeScriptSupport {
  /** `process.features.typescript`: `'strip'` / `'transform'` when Node strips types itself. */
  readonly typescript: string | false | undefined;
}

/** The running Node's support, read once per call (cheap: a property read). */
export function runtimeTypeScriptSupport(): RuntimeTypeScriptSupport {
  return { typescript: (process.features as { typescript?: string | false }).typescript };
}

const TS_EXTENSION = /\.[cm]?tsx?$/;
/** Node strips `.ts`, `.mts`, `.cts`; JSX (`.tsx`) is not TypeScript it handles. */
const NATIVE_TS_EXTENSION = /\.[cm]?ts$/;

/** Pure: which loader a module at `pathname` needs on a runtime with `support`. */
export function chooseModuleLoader(pathname: string, support: RuntimeTypeScriptSupport): ModuleLoader {
  if (!TS_EXTENSION.test(pathname)) return 'plain';
  if (
    NATIVE_TS_EXTENSION.test(pathname) &&
    (support.typescript === 'strip' || support.typescript === 'transform')
  )
    return 'native';
  return 'tsx';
}

/**
 * Pure: whether a native (type-stripping) import failed for a reason tsx handles — TypeScript
 * that needs transforming, a `./x.js` specifier naming a `.ts` file, or a type imported without
 * `type`. A real syntax error (`ERR_INVALID_TYPESCRIPT_SYNTAX`) or an error thrown while the
 * module ran is not retried: tsx would fail the same way, after running the module's top level
 * a second time.
 */
export function needsTsxAfterNativeFailure(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX' || code === 'ERR_MODULE_NOT_FOUND') return true;
  return (
    error instanceof SyntaxError &&
    code === undefined &&
    /does not provide an export named/.test(error.message)
  );
}

/** Per-thread flag: tsx's hooks are process-wide per thread and must be registered once. */
const TSX_REGISTERED = Symbol.for('weir.tsxRegistered');

/**
 * Registers tsx's ESM hooks in this thread (once). Throws a {@link JobModuleError} naming the
 * module when tsx is not installed; `why` says why tsx is needed on this runtime.
 */
export async function registerTsx(moduleUrl: string, why: string): Promise<void> {
  const g = globalThis as Record<symbol, unknown>;
  if (g[TSX_REGISTERED]) return;
  let api: { register(): unknown };
  try {
    api = await import('tsx/esm/api');
  } catch (e) {
    if ((e as { code?: unknown })?.code !== 'ERR_MODULE_NOT_FOUND') throw e;
    throw new JobModuleError(
      moduleUrl,
      `install tsx to load .ts job modules (npm install --save-dev tsx): ${why}; or compile the job to .js`,
      { cause: e },
    );
  }
  api.register();
  g[TSX_REGISTERED] = true;
}

/** Why tsx is needed for a module that {@link chooseModuleLoader} sent to tsx. */
export function whyTsx(pathname: string): string {
  if (/\.tsx$/.test(pathname)) return 'Node does not strip types from .tsx files';
  return `Node ${process.version} does not strip types (Node 22.18+ and 24 do)`;
}
