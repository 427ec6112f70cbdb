/**
 * Commit tracking of a legacy {@link SinkWriter} (`sinks.collect`, user wrappers): its commit
 * is `notifyCheckpointComplete`, synchronous, so a checkpoint's transactions are committed once
 * that call for it (or a later one: a notification commits every older sealed transaction)
 * returned. Backs `awaitCommitted` of the operators that drive such writers.
 *
 * Cost: O(waiters) per notification; stop-with-savepoint is the only waiter, once per task.
 */
export class NotifiedThrough {
  /** Highest checkpoint id whose notification returned; 0 before the first. Only grows. */
  #through = 0;
  #closed = false;
  readonly #waiters: { checkpointId: number; resolve(ok: boolean): void }[] = [];

  /** The writer's `notifyCheckpointComplete(checkpointId)` returned (it did not throw). */
  notified(checkpointId: number): void {
    if (checkpointId <= this.#through) return;
    this.#through = checkpointId;
    for (let i = this.#waiters.length - 1; i >= 0; i--) {
      const w = this.#waiters[i];
      if (w.checkpointId > checkpointId) continue;
      this.#waiters.splice(i, 1);
      w.resolve(true);
    }
  }

  /** `true` once checkpoints `<= checkpointId` are committed; `false` when closed before. */
  awaitCommitted(checkpointId: number): Promise<boolean> {
    if (checkpointId <= this.#through) return Promise.resolve(true);
    if (this.#closed) return Promise.resolve(false);
    return new Promise((resolve) => this.#waiters.push({ checkpointId, resolve }));
  }

  /** The operator closed (or failed): what it has not committed is left to a restore. */
  close(): void {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w.resolve(false);
  }
}
