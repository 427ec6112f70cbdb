/**
 * The `logger` job option: a pino-compatible logger (`pino()`, `pino().child(...)`, or anything
 * with the four methods). weir logs through it on the main thread and in every worker: a worker
 * cannot receive functions, so its records travel over the task's event port and the main
 * thread calls the logger with them.
 *
 * Every record weir writes carries structured fields where they apply: `job` (the job module's
 * file name), `task` (`name (subtask/parallelism)`), `operator`, `checkpointId`, `attempt`, and
 * `err` (`{ name, message, stack }`) for a failure.
 */

/** One logging method: `(obj, msg?)` or `(msg)`, as pino's. */
export interface LogFn {
  (obj: object, msg?: string): void;
  (msg: string): void;
}

/** A pino-compatible logger. */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

export type LogLevel = keyof Logger;

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/**
 * The default: `warn` and `error` records go to `console.warn`/`console.error` (one line: the
 * message, then the fields as JSON); `debug` and `info` are dropped. Pass a logger to see them.
 */
export const consoleLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (a: object | string, msg?: string) => console.warn(formatRecord(a, msg)),
  error: (a: object | string, msg?: string) => console.error(formatRecord(a, msg)),
};

function formatRecord(a: object | string, msg: string | undefined): string {
  if (typeof a === 'string') return `weir: ${a}`;
  return `weir: ${msg ?? ''} ${JSON.stringify(a)}`;
}

/** An Error as a structured field (Errors lose their class and own fields across threads). */
export function errorField(e: unknown): { name: string; message: string; stack?: string } {
  if (e instanceof Error) return { name: e.name, message: e.message, stack: e.stack };
  return { name: typeof e, message: String(e) };
}
