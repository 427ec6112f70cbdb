/**
 * Where a task's thread spends its time, Flink's `idleTimeMsPerSecond` / `backPressuredTimeMsPerSecond`
 * as cumulative counters: `idleMs` — parked with nothing to do (no input, a source with nothing to
 * read, waiting for async requests or for the final checkpoint); `backpressuredMs` — parked because
 * an output ring is full. Busy time is the rest of the wall clock.
 *
 * Cost: one clock read when a park starts and one when it ends; nothing per record or per frame.
 * Only the task's own thread calls it; {@link read} is answered between two turns of the loop (a
 * control call), possibly while a park is under way, so it adds the park's elapsed part.
 */

export type TaskParkKind = 'idle' | 'backpressured';

export interface TaskTimeReading {
  readonly idleMs: number;
  readonly backpressuredMs: number;
}

export class TaskTimeMeter {
  readonly #now: () => number;
  #idleMs = 0;
  #backpressuredMs = 0;
  /** The park under way, if any, and when it started. Invariant: `#since` is set iff `#kind` is. */
  #kind: TaskParkKind | null = null;
  #since = 0;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Starts a park. A park already under way ends first (parks never nest). */
  park(kind: TaskParkKind): void {
    if (this.#kind !== null) this.unpark();
    this.#kind = kind;
    this.#since = this.#now();
  }

  /** Ends the park under way, if any. */
  unpark(): void {
    if (this.#kind === null) return;
    const elapsed = Math.max(0, this.#now() - this.#since);
    if (this.#kind === 'idle') this.#idleMs += elapsed;
    else this.#backpressuredMs += elapsed;
    this.#kind = null;
  }

  /** Totals so far, the park under way included. */
  read(): TaskTimeReading {
    const ongoing = this.#kind === null ? 0 : Math.max(0, this.#now() - this.#since);
    return {
      idleMs: this.#idleMs + (this.#kind === 'idle' ? ongoing : 0),
      backpressuredMs: this.#backpressuredMs + (this.#kind === 'backpressured' ? ongoing : 0),
    };
  }
}
