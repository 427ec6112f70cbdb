/**
 * The import graph of `src/` and the checks over it that `architecture.test.ts` runs: no import
 * cycle except the listed ones, and no import along a forbidden folder arrow.
 *
 * Imports are read with TypeScript's own pre-processor (`ts.preProcessFile`), which finds static
 * imports, re-exports and dynamic `import()` calls without type-checking anything. Type-only
 * imports count as arrows too: a type import still couples the two folders. Only relative
 * specifiers are edges; packages and `node:` modules are outside the graph.
 *
 * The checks are pure functions over an {@link ImportGraph}, so they are unit-tested on synthetic
 * graphs (`import-graph.test.ts`) as well as run on the real one.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import ts from 'typescript';

/** File path (relative to the repository root, `/`-separated) → the files it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** `from` files may not import `to` files; both are folder prefixes such as `src/worker/`. */
export interface ForbiddenArrow {
  readonly from: string;
  readonly to: string;
  /** Files under `to` that stay allowed (e.g. the folder itself when `to` is all of `src/`). */
  readonly except?: string;
  readonly why: string;
}

export type ArchitectureViolation =
  | { readonly kind: 'cycle'; readonly files: readonly string[] }
  | { readonly kind: 'arrow'; readonly from: string; readonly to: string; readonly why: string };

const SOURCE = /\.(ts|cts|mts)$/;

/** Reads every `.ts`/`.cts`/`.mts` file under `dir` (declaration files excluded). */
export function readImportGraph(root: string, dir: string): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const file of listSources(join(root, dir))) {
    const name = toPosix(relative(root, file));
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const ref of info.importedFiles) {
      const target = resolveSpecifier(name, ref.fileName);
      if (target !== undefined) targets.add(target);
    }
    graph.set(name, [...targets].sort());
  }
  return graph;
}

/** `./x.js` from `src/a/b.ts` → `src/a/x.ts`; non-relative specifiers → undefined. */
export function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const joined = posix.normalize(posix.join(posix.dirname(from), specifier));
  return joined
    .replace(/\.js$/, '.ts')
    .replace(/\.cjs$/, '.cts')
    .replace(/\.mjs$/, '.mts');
}

/**
 * Strongly connected components with more than one file (or a file importing itself), found
 * with Tarjan's algorithm; each sorted, and sorted by their first file. Edges to files outside
 * the graph are ignored.
 */
export function findCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles.sort((x, y) => (x[0] < y[0] ? -1 : 1));
}

/**
 * Every cycle that does not lie inside one of `allowedCycles` (so an allowed cycle may shrink or
 * disappear, but not grow, and two allowed cycles may not join), and every import along a
 * forbidden arrow. Empty means the graph is clean.
 */
export function checkArchitecture(
  graph: ImportGraph,
  allowedCycles: readonly (readonly string[])[],
  forbidden: readonly ForbiddenArrow[],
): ArchitectureViolation[] {
  const violations: ArchitectureViolation[] = [];
  const groups = allowedCycles.map((files) => new Set(files));
  for (const files of findCycles(graph)) {
    if (!groups.some((group) => files.every((f) => group.has(f)))) violations.push({ kind: 'cycle', files });
  }
  for (const [from, targets] of graph) {
    for (const to of targets) {
      for (const rule of forbidden) {
        if (!from.startsWith(rule.from) || !to.startsWith(rule.to)) continue;
        if (rule.except !== undefined && to.startsWith(rule.except)) continue;
        violations.push({ kind: 'arrow', from, to, why: rule.why });
      }
    }
  }
  return violations;
}

function listSources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listSources(path));
    else if (SOURCE.test(entry.name) && !/\.d\.[cm]?ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

function toPosix(path: string): string {
  return path.split(sep).join('/');
}
