/**
 * Keeps the newest `retain` completed checkpoints, by checkpoint id. Adding one beyond that
 * subsumes the oldest: it leaves the store at once and its storage is released through the
 * injected async `discard`, whose failures go to `onDiscardError` (a leaked checkpoint wastes
 * space but breaks nothing, so it is reported, not thrown).
 *
 * Savepoints are subsumed like any other checkpoint; a `discard` that must keep user-owned
 * savepoints checks `checkpoint.kind`.
 */

import { InvalidOptionError } from '../errors.js';
import type { CompletedCheckpoint } from './completed-checkpoint.js';

export const DEFAULT_RETAINED_CHECKPOINTS = 3;

export interface CompletedCheckpointStoreOptions {
  /** How many completed checkpoints to keep, an integer >= 1. Default {@link DEFAULT_RETAINED_CHECKPOINTS}. */
  readonly retain?: number;
  /** Releases the storage of a subsumed checkpoint. */
  readonly discard: (checkpoint: CompletedCheckpoint) => Promise<void>;
  readonly onDiscardError: (checkpoint: CompletedCheckpoint, error: unknown) => void;
}

export class CompletedCheckpointStore {
  readonly retain: number;
  readonly #discard: CompletedCheckpointStoreOptions['discard'];
  readonly #onDiscardError: CompletedCheckpointStoreOptions['onDiscardError'];
  /** Ascending by checkpoint id; at most `retain` entries. */
  #checkpoints: CompletedCheckpoint[] = [];
  readonly #discarding = new Set<Promise<void>>();

  constructor(options: CompletedCheckpointStoreOptions) {
    const retain = options.retain ?? DEFAULT_RETAINED_CHECKPOINTS;
    if (!Number.isInteger(retain) || retain < 1) {
      throw new InvalidOptionError('checkpointing.retain', `must be an integer >= 1, got ${String(retain)}`);
    }
    this.retain = retain;
    this.#discard = options.discard;
    this.#onDiscardError = options.onDiscardError;
  }

  /**
   * Adds `checkpoint` and returns the checkpoints it subsumed (oldest first), whose discard has
   * started. If `checkpoint` is older than the `retain` newest, it is itself subsumed and
   * returned. Throws `RangeError` for an id already in the store.
   */
  add(checkpoint: CompletedCheckpoint): readonly CompletedCheckpoint[] {
    if (this.#checkpoints.some((c) => c.checkpointId === checkpoint.checkpointId)) {
      throw new RangeError(`checkpoint ${checkpoint.checkpointId} is already in the store`);
    }
    const all = [...this.#checkpoints, checkpoint].sort((a, b) => a.checkpointId - b.checkpointId);
    const excess = Math.max(0, all.length - this.retain);
    const subsumed = all.slice(0, excess);
    this.#checkpoints = all.slice(excess);
    for (const c of subsumed) this.#startDiscard(c);
    return subsumed;
  }

  /** The newest completed checkpoint: the one to restore. */
  latest(): CompletedCheckpoint | undefined {
    return this.#checkpoints.at(-1);
  }

  /** Retained checkpoints, oldest first. */
  all(): readonly CompletedCheckpoint[] {
    return this.#checkpoints.slice();
  }

  get size(): number {
    return this.#checkpoints.length;
  }

  /** Resolves when every discard started so far has settled (never rejects). */
  async whenDiscarded(): Promise<void> {
    await Promise.allSettled([...this.#discarding]);
  }

  #startDiscard(checkpoint: CompletedCheckpoint): void {
    const p = Promise.resolve()
      .then(() => this.#discard(checkpoint))
      .catch((error: unknown) => this.#onDiscardError(checkpoint, error))
      .finally(() => this.#discarding.delete(p));
    this.#discarding.add(p);
  }
}
