/**
 * Job definitions: what a job module default-exports, and how the runtime turns one into a graph.
 *
 * Functions cannot cross threads, so the main thread and every worker import the same job module
 * and build the same graph from it (DESIGN.md §1). A definition is recognised by a brand under
 * `Symbol.for('weir.job')` rather than by `instanceof`: the job module may have imported another
 * copy of weir than the runtime that loads it (src/ and dist/, or two installs), and
 * `Symbol.for` is shared by all copies within a process.
 */

import { JobModuleError, WeirError } from '../errors.js';
import type { StreamGraph } from '../graph/stream-graph.js';
import { GraphBuilder, show } from './graph-builder.js';
import { StreamEnvironment } from './stream-environment.js';

/** The brand key. A registered symbol: equal across copies of weir in one process. */
export const JOB_DEFINITION_BRAND: unique symbol = Symbol.for('weir.job');

/** Builds a job's graph on `env`; `args` are the job's string arguments (`--arg key=value`). */
export type JobBuildFunction = (env: StreamEnvironment, args: Record<string, string>) => void;

/** The value a job module default-exports: `export default defineJob((env, args) => { ... })`. */
export interface JobDefinition {
  /** Brand version; `1` is the only one so far. */
  readonly [JOB_DEFINITION_BRAND]: 1;
  /** The build function given to {@link defineJob}. Runs once per build, synchronously. */
  readonly build: JobBuildFunction;
}

/**
 * Defines a job. The job module must default-export the result:
 *
 * ```ts
 * export default defineJob((env, args) => {
 *   env.fromSource(sources.sequence({ from: 0, to: 10 })).map((n) => n * 2).sinkTo(sinks.collect('out'));
 * });
 * ```
 *
 * `build` runs in the main thread and in every worker, so it must be deterministic (same args,
 * same graph) and synchronous, and should have no side effects beyond building the graph.
 */
export function defineJob(build: JobBuildFunction): JobDefinition {
  if (typeof build !== 'function') {
    throw new TypeError(`defineJob(): expected a build function (env, args) => { ... }, got ${show(build)}`);
  }
  return Object.freeze({ [JOB_DEFINITION_BRAND]: 1 as const, build });
}

/** True if `x` is a {@link defineJob} result, from this or any other copy of weir. */
export function isJobDefinition(x: unknown): x is JobDefinition {
  return (
    typeof x === 'object' &&
    x !== null &&
    (x as Record<symbol, unknown>)[JOB_DEFINITION_BRAND] === 1 &&
    typeof (x as { build?: unknown }).build === 'function'
  );
}

/**
 * Runs the job's build function on a fresh environment and returns the frozen graph. Errors the
 * build throws (including weir's validation errors) propagate unchanged.
 *
 * @throws JobModuleError when the build function returns a promise (graphs are built synchronously,
 *   so that every thread gets the whole graph before anything runs).
 */
export function buildStreamGraph(
  def: JobDefinition,
  args: Readonly<Record<string, string>> = {},
  /** Names the job module in the error when the build function throws. */
  moduleName = 'defineJob',
): StreamGraph {
  const builder = new GraphBuilder();
  let result: unknown;
  try {
    result = def.build(new StreamEnvironment(builder), Object.freeze({ ...args }));
  } catch (e) {
    // weir's own errors (a bad parallelism, an invalid graph) already say what is wrong.
    if (e instanceof WeirError) throw e;
    const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    throw new JobModuleError(moduleName, `its build function threw ${what}`, { cause: e });
  }
  // Seal before inspecting the result, so that an async build cannot keep adding nodes later.
  builder.seal();
  if (typeof (result as { then?: unknown } | null | undefined)?.then === 'function') {
    throw new JobModuleError(
      'defineJob',
      'the build function returned a promise; it must build the graph synchronously (no async/await)',
    );
  }
  return builder.toStreamGraph();
}

/**
 * Extracts the job definition from an imported job module's namespace (`await import(path)`).
 *
 * Accepts `default` being a definition, and also `default.default` (what a TypeScript job module
 * compiled to CommonJS looks like when imported from ESM).
 *
 * @throws JobModuleError naming `moduleName` when there is no default export or it is not a
 *   `defineJob(...)` result.
 */
export function loadJobDefinition(moduleExports: unknown, moduleName: string): JobDefinition {
  if (typeof moduleExports !== 'object' || moduleExports === null) {
    throw new JobModuleError(moduleName, `expected a module namespace object, got ${show(moduleExports)}`);
  }
  const exported = (moduleExports as { default?: unknown }).default;
  if (isJobDefinition(exported)) return exported;
  const nested = (exported as { default?: unknown } | null | undefined)?.default;
  if (typeof exported === 'object' && exported !== null && isJobDefinition(nested)) return nested;

  const howTo = 'a job module must `export default defineJob((env, args) => { ... })`';
  if (!('default' in moduleExports) || exported === undefined) {
    const names = Object.keys(moduleExports);
    const found = names.length > 0 ? ` (it exports: ${names.join(', ')})` : '';
    throw new JobModuleError(moduleName, `has no default export${found}; ${howTo}`);
  }
  if (typeof exported === 'function') {
    throw new JobModuleError(
      moduleName,
      `the default export is a plain function, not a defineJob(...) result; wrap it: ${howTo}`,
    );
  }
  throw new JobModuleError(
    moduleName,
    `the default export is ${show(exported)}, not a defineJob(...) result; ${howTo}`,
  );
}
