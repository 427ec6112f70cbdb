/**
 * Wake-ups for readers waiting for new records (`topic.tail`, `sources.log`): no busy polling.
 *
 * - Same handle: a committed group resolves the waiters at once.
 * - Other threads of this process: every commit is announced on a BroadcastChannel named after
 *   the directory's real path, which every handle of the process on that directory listens to.
 * - Other processes: nothing crosses a process boundary, so a waiter is also resolved after at
 *   most `pollMs` (a bounded poll: the reader then checks the end offset, one LMDB read).
 *
 * One shared promise per generation: every waiter of the same generation gets the same promise,
 * resolved by the next commit notice or the poll timer, whichever comes first; so waiting costs
 * no per-waiter timer and leaks nothing however long nothing is appended. Spurious wake-ups are
 * allowed (readers re-check the end offset).
 *
 * Cost: one `postMessage` per committed group; the channel is unref'd (it never keeps a process
 * alive); the poll timer is referenced while someone waits, like a socket read.
 */

import { BroadcastChannel } from 'node:worker_threads';

export class LogWakeup {
  readonly #channelName: string;
  readonly #pollMs: number;
  #channel: BroadcastChannel | undefined;
  /** The current generation's promise and resolver; `undefined` while nobody waits. */
  #next: { promise: Promise<void>; resolve: () => void; timer: NodeJS.Timeout } | undefined;
  #closed = false;

  constructor(realDir: string, pollMs: number) {
    this.#channelName = `weir-log:${realDir}`;
    this.#pollMs = pollMs;
  }

  /** Resolves at the next commit seen by this process, or after at most `pollMs`. */
  next(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#listen();
    if (this.#next === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      const timer = setTimeout(() => this.wake(), this.#pollMs);
      this.#next = { promise, resolve, timer };
    }
    return this.#next.promise;
  }

  /** Resolves the current generation (a commit happened, a reader stops, the log closes). */
  wake(): void {
    const next = this.#next;
    if (next === undefined) return;
    this.#next = undefined;
    clearTimeout(next.timer);
    next.resolve();
  }

  /** After this handle committed: wake local waiters and tell the other threads. */
  committed(): void {
    this.wake();
    if (this.#closed) return;
    this.#listen();
    this.#channel!.postMessage(0);
  }

  close(): void {
    this.#closed = true;
    this.wake();
    this.#channel?.close();
    this.#channel = undefined;
  }

  #listen(): void {
    if (this.#channel !== undefined) return;
    const channel = new BroadcastChannel(this.#channelName);
    channel.onmessage = () => this.wake();
    channel.unref();
    this.#channel = channel;
  }
}
