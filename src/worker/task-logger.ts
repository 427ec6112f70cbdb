/**
 * The `logger` of code running in a worker: a worker cannot receive the user's logger (functions
 * do not cross threads), so each record travels as a `log` event over the task's event port,
 * in order with the task's other events, and the main thread calls the job's logger with it
 * (adding `job`, `task` and `attempt`). Cost: one postMessage per record; weir logs only on rare
 * paths (cleanup failures), never per record.
 */

import { errorField, LOG_LEVELS, type Logger, type LogLevel } from '../api/logger.js';
import type { TaskEvent } from '../protocol/task-deployment.js';

/** A logger whose records are posted as `log` events; `fields` are added to every record. */
export function taskLogger(post: (event: TaskEvent) => void, fields: Record<string, unknown> = {}): Logger {
  const method =
    (level: LogLevel) =>
    (a: object | string, msg?: string): void => {
      const record =
        typeof a === 'string'
          ? { kind: 'log' as const, level, msg: a, fields }
          : { kind: 'log' as const, level, msg: msg ?? '', fields: { ...fields, ...cloneable(a) } };
      try {
        post(record);
      } catch (e) {
        // A field structured clone rejects (a function, a class instance with one): keep the
        // message and say which field could not be sent rather than lose the record.
        post({ kind: 'log', level, msg: record.msg, fields: { ...fields, fieldsNotSent: String(e) } });
      }
    };
  const logger = {} as Record<LogLevel, Logger[LogLevel]>;
  for (const level of LOG_LEVELS) logger[level] = method(level);
  return logger as Logger;
}

/** Errors become `{ name, message, stack }` (structured clone keeps only some of an Error). */
function cloneable(fields: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = v instanceof Error ? errorField(v) : v;
  return out;
}
