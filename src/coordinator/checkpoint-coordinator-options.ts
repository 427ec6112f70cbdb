/** The coordinator's options, checked up front. */

import { InvalidOptionError } from '../errors.js';
import { DEFAULT_RETAINED_CHECKPOINTS } from './completed-checkpoint-store.js';

export interface CheckpointCoordinatorOptions {
  /** ms between periodic checkpoints (trigger to trigger), > 0. Required. */
  readonly interval: number;
  /** ms after which a pending checkpoint is aborted as `'expired'`, > 0. Default 10 minutes (Flink's). */
  readonly timeout?: number;
  /** ms from a completion to the next periodic trigger, >= 0. Default 0. A value > 0 implies one checkpoint at a time. */
  readonly minPause?: number;
  /** Periodic checkpoints in flight at once, integer >= 1. Default 1. */
  readonly maxConcurrent?: number;
  /** Consecutive counted checkpoint failures tolerated, integer >= 0 or Infinity. Default 0. */
  readonly tolerableFailures?: number;
  /** Completed checkpoints retained, integer >= 1. Default 3. */
  readonly retain?: number;
}

export type ResolvedCheckpointCoordinatorOptions = Required<CheckpointCoordinatorOptions>;

export const DEFAULT_CHECKPOINT_TIMEOUT_MS = 10 * 60 * 1000;

/**
 * Fills in defaults and validates; throws {@link InvalidOptionError} naming `checkpointing.<key>`.
 * Keys it does not know (mode, dir, ...) are ignored: callers may pass the whole user object.
 */
export function resolveCheckpointCoordinatorOptions(
  options: CheckpointCoordinatorOptions,
): ResolvedCheckpointCoordinatorOptions {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('checkpointing', `must be an object, got ${String(options)}`);
  }
  return {
    interval: positive('interval', options.interval),
    timeout: positive('timeout', options.timeout ?? DEFAULT_CHECKPOINT_TIMEOUT_MS),
    minPause: nonNegative('minPause', options.minPause ?? 0),
    maxConcurrent: integerAtLeast('maxConcurrent', options.maxConcurrent ?? 1, 1, false),
    tolerableFailures: integerAtLeast('tolerableFailures', options.tolerableFailures ?? 0, 0, true),
    retain: integerAtLeast('retain', options.retain ?? DEFAULT_RETAINED_CHECKPOINTS, 1, false),
  };
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

function number(key: string, value: unknown): number {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new InvalidOptionError(`checkpointing.${key}`, `must be a number, got ${describe(value)}`);
  }
  return value;
}

function positive(key: string, value: unknown): number {
  const n = number(key, value);
  if (!(n > 0 && Number.isFinite(n))) {
    throw new InvalidOptionError(`checkpointing.${key}`, `must be a finite number of ms > 0, got ${n}`);
  }
  return n;
}

function nonNegative(key: string, value: unknown): number {
  const n = number(key, value);
  if (!(n >= 0 && Number.isFinite(n))) {
    throw new InvalidOptionError(`checkpointing.${key}`, `must be a finite number of ms >= 0, got ${n}`);
  }
  return n;
}

function integerAtLeast(key: string, value: unknown, min: number, infinityAllowed: boolean): number {
  const n = number(key, value);
  if (infinityAllowed && n === Infinity) return n;
  if (!Number.isInteger(n) || n < min) {
    throw new InvalidOptionError(
      `checkpointing.${key}`,
      `must be an integer >= ${min}${infinityAllowed ? ' or Infinity' : ''}, got ${n}`,
    );
  }
  return n;
}
