/**
 * Where a syntax error in a job module is: `file:line:column` (1-based, as editors take them).
 *
 * The three ways a module is loaded report it differently:
 * - Node's own type stripping (22.18+, 24) puts a banner at the top of the stack:
 *   `file:///job.ts:3`, the source line, and a caret line under the column.
 * - tsx (esbuild) says it in the message: `/job.ts:3:11: ERROR: Unexpected ";"` (0-based column).
 * - Plain JS compiled by `import()` loses the location altogether (V8 keeps it in a private
 *   field that only the uncaught-exception printer reads). For those, {@link locateSyntaxError}
 *   runs `node --check` on the file, which prints the same banner. That costs a process start
 *   (~50 ms) and happens only on this failure path, in the thread that loads the job first.
 */

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A position in a source file; `line` and `column` are 1-based. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

export function formatSourceLocation(l: SourceLocation): string {
  return `${l.file}:${l.line}:${l.column}`;
}

const toPath = (file: string): string => (file.startsWith('file:') ? fileURLToPath(file) : file);

/**
 * Pure: the location in a V8/Node syntax-error banner (`path-or-url:LINE`, one to three source
 * lines — the last is LINE — and a caret line under the column), at the start of `text` or after leading blank lines. Undefined when there is none.
 */
export function parseSyntaxErrorBanner(text: string): SourceLocation | undefined {
  const m = /^\s*((?:file:\/\/|\/|[A-Za-z]:[\\/])[^\n]*?):(\d+)\n(?:[^\n]*\n){1,3}?([ \t]*)\^/.exec(text);
  if (!m) return undefined;
  return { file: toPath(m[1]), line: Number(m[2]), column: m[3].length + 1 };
}

/** Pure: the first location in an esbuild (tsx) message, `path:LINE:COL: ERROR: …` (COL 0-based). */
export function parseEsbuildLocation(message: string): SourceLocation | undefined {
  const m = /^(.+?):(\d+):(\d+): ERROR: /m.exec(message);
  if (!m) return undefined;
  return { file: toPath(m[1]), line: Number(m[2]), column: Number(m[3]) + 1 };
}

/**
 * Where the syntax error `error`, raised while importing the module at `moduleUrl`, is; undefined
 * when `error` is not a syntax error or the location cannot be found (for plain JS: the error is in
 * a module the job imports, not in the job module itself).
 */
export async function locateSyntaxError(
  error: unknown,
  moduleUrl: string,
): Promise<SourceLocation | undefined> {
  if (!(error instanceof Error)) return undefined;
  const found = parseSyntaxErrorBanner(error.stack ?? '') ?? parseEsbuildLocation(error.message);
  if (found) return found;
  if (!(error instanceof SyntaxError) || !moduleUrl.startsWith('file:')) return undefined;
  const file = fileURLToPath(moduleUrl);
  if (!/\.[cm]?js$/.test(file)) return undefined;
  const stderr = await new Promise<string>((resolve) => {
    execFile(process.execPath, ['--check', file], { encoding: 'utf8' }, (_err, _out, err) => resolve(err));
  });
  return parseSyntaxErrorBanner(stderr);
}
