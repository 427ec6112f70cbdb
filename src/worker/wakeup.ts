/**
 * A sleep that another event-loop turn can cut short. Source tasks park here between rate-limited
 * polls; a control message (checkpoint trigger, cancel) calls `wake()` so the task reacts at once.
 * The timer is referenced, so a parked worker stays alive.
 */
export class Wakeup {
  #resolve: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #pending = false;

  /** Resolves after `ms`, or earlier on `wake()`; resolves at once if woken since the last sleep. */
  sleep(ms: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.#resolve = resolve;
      this.#timer = setTimeout(() => this.#fire(), ms);
    });
  }

  wake(): void {
    if (this.#resolve) this.#fire();
    else this.#pending = true;
  }

  #fire(): void {
    const r = this.#resolve;
    this.#resolve = undefined;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    r?.();
  }
}
