/**
 * What to do after the job failed: restart after a delay, or give up. Flink's restart
 * strategies, as small stateful objects; their only inputs are the failure time and (for
 * jitter) an injected random source, so they are deterministic under test.
 *
 * - `none`: never restart.
 * - `fixed-delay { attempts, delay }`: restart after `delay` ms, at most `attempts` times over
 *   the job's life (the failure after the last attempt gives up). Never resets.
 * - `exponential-delay { initial, max, multiplier, resetAfter, jitter, attempts }`: the first
 *   failure waits `initial`; each further one multiplies the backoff by `multiplier`, capped at
 *   `max`. When the job ran for `resetAfter` ms without failing (measured from the last failure
 *   plus its backoff) the backoff returns to `initial`. Jitter adds a uniform offset in
 *   `[-jitter, +jitter] × backoff`; the delay stays within `[0, max]`. `attempts` bounds the
 *   restarts between two resets (default unlimited, as in Flink).
 */

import { InvalidOptionError } from '../errors.js';
import { assertNever } from '../util/assert-never.js';

export type RestartStrategyOptions =
  | { readonly type: 'none' }
  | {
      readonly type: 'fixed-delay';
      /** Restarts allowed, integer >= 0. Default 1 (Flink's). */
      readonly attempts?: number;
      /** ms, >= 0. Default 1000. */
      readonly delay?: number;
    }
  | {
      readonly type: 'exponential-delay';
      /** ms, > 0. Default 1000. */
      readonly initial?: number;
      /** ms, >= initial. Default 60 000. */
      readonly max?: number;
      /** >= 1. Default 1.5. */
      readonly multiplier?: number;
      /** ms of failure-free running that resets the backoff, > 0 (Infinity: never). Default 1 hour. */
      readonly resetAfter?: number;
      /** Fraction of the backoff, in [0, 1]. Default 0.1. */
      readonly jitter?: number;
      /** Restarts allowed between resets, integer >= 0 or Infinity. Default Infinity. */
      readonly attempts?: number;
    };

export type RestartDecision =
  | {
      readonly kind: 'restart';
      readonly delayMs: number /** 1 for the first restart. */;
      readonly attempt: number;
    }
  | { readonly kind: 'give-up' /** Restarts granted before giving up. */; readonly restarts: number };

export interface RestartStrategy {
  readonly type: RestartStrategyOptions['type'];
  /** Restarts granted so far. */
  readonly restarts: number;
  /** Called once per job failure, with the failure time in ms. */
  onFailure(nowMs: number): RestartDecision;
}

/** A uniform random number in [0, 1). */
export type RandomSource = () => number;

export class NoRestartStrategy implements RestartStrategy {
  readonly type = 'none' as const;
  readonly restarts = 0;
  onFailure(_nowMs: number): RestartDecision {
    return { kind: 'give-up', restarts: 0 };
  }
}

export class FixedDelayRestartStrategy implements RestartStrategy {
  readonly type = 'fixed-delay' as const;
  readonly attempts: number;
  readonly delayMs: number;
  #restarts = 0;

  constructor(options: { attempts?: number; delay?: number } = {}) {
    this.attempts = integerAtLeast('attempts', options.attempts ?? 1, 0, false);
    this.delayMs = finiteAtLeast('delay', options.delay ?? 1000, 0);
  }

  get restarts(): number {
    return this.#restarts;
  }

  onFailure(_nowMs: number): RestartDecision {
    if (this.#restarts >= this.attempts) return { kind: 'give-up', restarts: this.#restarts };
    this.#restarts++;
    return { kind: 'restart', delayMs: this.delayMs, attempt: this.#restarts };
  }
}

export class ExponentialDelayRestartStrategy implements RestartStrategy {
  readonly type = 'exponential-delay' as const;
  readonly initialMs: number;
  readonly maxMs: number;
  readonly multiplier: number;
  readonly resetAfterMs: number;
  readonly jitter: number;
  readonly attempts: number;
  readonly #random: RandomSource;
  /** Backoff before jitter; within [initialMs, maxMs]. */
  #backoffMs: number;
  #lastFailureMs: number | undefined;
  #restarts = 0;
  #restartsSinceReset = 0;

  constructor(
    options: {
      initial?: number;
      max?: number;
      multiplier?: number;
      resetAfter?: number;
      jitter?: number;
      attempts?: number;
    } = {},
    random: RandomSource = Math.random,
  ) {
    this.initialMs = finiteAtLeast('initial', options.initial ?? 1000, 0, true);
    this.maxMs = finiteAtLeast('max', options.max ?? 60_000, this.initialMs);
    this.multiplier = finiteAtLeast('multiplier', options.multiplier ?? 1.5, 1);
    const resetAfter = options.resetAfter ?? 60 * 60 * 1000;
    this.resetAfterMs = resetAfter === Infinity ? Infinity : finiteAtLeast('resetAfter', resetAfter, 0, true);
    this.jitter = finiteAtLeast('jitter', options.jitter ?? 0.1, 0);
    if (this.jitter > 1) throw invalid('jitter', `must be in [0, 1], got ${this.jitter}`);
    this.attempts = integerAtLeast('attempts', options.attempts ?? Infinity, 0, true);
    if (typeof random !== 'function') throw new TypeError('the random source must be a function');
    this.#random = random;
    this.#backoffMs = this.initialMs;
  }

  get restarts(): number {
    return this.#restarts;
  }

  /** The current backoff before jitter (what the last failure waited, jitter aside). */
  get backoffMs(): number {
    return this.#backoffMs;
  }

  onFailure(nowMs: number): RestartDecision {
    const last = this.#lastFailureMs;
    if (last === undefined || nowMs - last >= this.resetAfterMs + this.#backoffMs) {
      this.#backoffMs = this.initialMs;
      this.#restartsSinceReset = 0;
    } else {
      this.#backoffMs = Math.min(this.maxMs, this.#backoffMs * this.multiplier);
    }
    this.#lastFailureMs = nowMs;
    if (this.#restartsSinceReset >= this.attempts) return { kind: 'give-up', restarts: this.#restarts };
    this.#restartsSinceReset++;
    this.#restarts++;
    const offset = this.#backoffMs * this.jitter;
    const jittered = this.#backoffMs + (this.#random() * 2 - 1) * offset;
    return {
      kind: 'restart',
      delayMs: Math.round(Math.min(this.maxMs, Math.max(0, jittered))),
      attempt: this.#restarts,
    };
  }
}

/** Builds a strategy from user options; throws {@link InvalidOptionError} for bad ones. */
export function createRestartStrategy(
  options: RestartStrategyOptions,
  random: RandomSource = Math.random,
): RestartStrategy {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('restartStrategy', `must be an object with a type, got ${String(options)}`);
  }
  switch (options.type) {
    case 'none':
      return new NoRestartStrategy();
    case 'fixed-delay':
      return new FixedDelayRestartStrategy(options);
    case 'exponential-delay':
      return new ExponentialDelayRestartStrategy(options, random);
    default:
      throw new InvalidOptionError(
        'restartStrategy.type',
        `must be 'none', 'fixed-delay' or 'exponential-delay', got ${JSON.stringify((options as { type?: unknown }).type)}`,
      );
  }
}

function invalid(key: string, message: string): InvalidOptionError {
  return new InvalidOptionError(`restartStrategy.${key}`, message);
}

function finiteAtLeast(key: string, value: unknown, min: number, exclusive = false): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw invalid(key, `must be a finite number, got ${String(value)}`);
  }
  if (exclusive ? value <= min : value < min) {
    throw invalid(key, `must be ${exclusive ? '>' : '>='} ${min}, got ${value}`);
  }
  return value;
}

function integerAtLeast(key: string, value: unknown, min: number, infinityAllowed: boolean): number {
  if (infinityAllowed && value === Infinity) return Infinity;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw invalid(
      key,
      `must be an integer >= ${min}${infinityAllowed ? ' or Infinity' : ''}, got ${String(value)}`,
    );
  }
  return value;
}

/** One log line for a decision. */
export function describeRestartDecision(decision: RestartDecision): string {
  switch (decision.kind) {
    case 'restart':
      return `restart #${decision.attempt} in ${decision.delayMs} ms`;
    case 'give-up':
      return `give up after ${decision.restarts} restart(s)`;
    default:
      return assertNever(decision, 'restart decision');
  }
}
