/**
 * A FIFO byte budget that bounds how many bytes a handle has queued for writing and not yet
 * made durable. Without it a task that snapshots faster than the disk writes would queue an
 * unbounded backlog inside lmdb-js (and every later commit would wait behind it).
 *
 * Contract: `acquire(n)` resolves once `n` bytes fit next to the bytes already held, in call
 * order (no overtaking, so a large request cannot starve). A request larger than the whole
 * budget is admitted when no bytes are held, so it proceeds alone. Every acquire must be paired with one
 * `release(n)` of the same `n`. Single-threaded (one per handle, used on its thread).
 */
export class ByteBudget {
  readonly #limit: number;
  /** Bytes acquired and not yet released; 0 ≤ #held, and #held ≤ #limit unless one oversized request holds it alone. */
  #held = 0;
  readonly #waiters: { bytes: number; wake: () => void }[] = [];

  constructor(limitBytes: number) {
    this.#limit = limitBytes;
  }

  get heldBytes(): number {
    return this.#held;
  }

  acquire(bytes: number): Promise<void> {
    if (this.#waiters.length === 0 && this.#fits(bytes)) {
      this.#held += bytes;
      return Promise.resolve();
    }
    return new Promise((wake) => this.#waiters.push({ bytes, wake }));
  }

  release(bytes: number): void {
    this.#held -= bytes;
    while (this.#waiters.length > 0 && this.#fits(this.#waiters[0].bytes)) {
      const next = this.#waiters.shift()!;
      this.#held += next.bytes;
      next.wake();
    }
  }

  #fits(bytes: number): boolean {
    return this.#held === 0 || this.#held + bytes <= this.#limit;
  }
}
