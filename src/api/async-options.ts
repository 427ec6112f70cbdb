/**
 * Checks and completes the options of `mapAsync` / `flatMapAsync` when the job is built, so a bad
 * value fails before anything runs, naming the call and the option.
 */

import { InvalidOptionError } from '../errors.js';
import { closestMatch } from '../util/did-you-mean.js';
import type { AsyncOptions } from './functions.js';
import { show } from './graph-builder.js';

export const DEFAULT_ASYNC_CAPACITY = 100;
export const DEFAULT_ASYNC_TIMEOUT_MS = 30_000;

/** {@link AsyncOptions} with every default applied. */
export interface ResolvedAsyncOptions {
  readonly capacity: number;
  /** `Infinity`: no timeout. */
  readonly timeoutMs: number;
  readonly ordered: boolean;
  /** Total attempts per record (1: no retry). */
  readonly attempts: number;
  readonly backoffMs: number;
}

const KNOWN: readonly string[] = ['capacity', 'timeoutMs', 'ordered', 'retry'];
const KNOWN_RETRY: readonly string[] = ['attempts', 'backoffMs'];

/** `what` names the call in messages (`mapAsync()`). Throws {@link InvalidOptionError}. */
export function resolveAsyncOptions(options: AsyncOptions | undefined, what: string): ResolvedAsyncOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError(what, `options must be an object, got ${show(options)}`);
  }
  rejectUnknownKeys(options, KNOWN, what);
  const { capacity = DEFAULT_ASYNC_CAPACITY, timeoutMs = DEFAULT_ASYNC_TIMEOUT_MS, ordered = true } = options;
  if (typeof capacity !== 'number' || !Number.isInteger(capacity) || capacity < 1) {
    throw new InvalidOptionError(`${what} capacity`, `must be an integer >= 1, got ${show(capacity)}`);
  }
  if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs <= 0) {
    throw new InvalidOptionError(
      `${what} timeoutMs`,
      `must be a number of ms > 0 (or Infinity), got ${show(timeoutMs)}`,
    );
  }
  if (timeoutMs !== Infinity && timeoutMs > 2 ** 31 - 1) {
    throw new InvalidOptionError(`${what} timeoutMs`, `must be at most ${2 ** 31 - 1} ms or Infinity`);
  }
  if (typeof ordered !== 'boolean') {
    throw new InvalidOptionError(`${what} ordered`, `must be true or false, got ${show(ordered)}`);
  }
  let attempts = 1;
  let backoffMs = 0;
  if (options.retry !== undefined) {
    const retry = options.retry;
    if (typeof retry !== 'object' || retry === null) {
      throw new InvalidOptionError(`${what} retry`, `must be { attempts, backoffMs? }, got ${show(retry)}`);
    }
    rejectUnknownKeys(retry, KNOWN_RETRY, `${what} retry`);
    attempts = retry.attempts;
    backoffMs = retry.backoffMs ?? 0;
    if (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 1) {
      throw new InvalidOptionError(
        `${what} retry.attempts`,
        `must be an integer >= 1 (the total number of attempts per record), got ${show(attempts)}`,
      );
    }
    if (typeof backoffMs !== 'number' || !Number.isFinite(backoffMs) || backoffMs < 0) {
      throw new InvalidOptionError(
        `${what} retry.backoffMs`,
        `must be a number of ms >= 0, got ${show(backoffMs)}`,
      );
    }
  }
  return { capacity, timeoutMs, ordered, attempts, backoffMs };
}

function rejectUnknownKeys(options: object, known: readonly string[], what: string): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = closestMatch(key, known);
    throw new InvalidOptionError(
      `${what} ${key}`,
      `unknown option${near ? ` (did you mean "${near}"?)` : ''}; known: ${known.join(', ')}`,
    );
  }
}
