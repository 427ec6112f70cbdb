/**
 * `topic.tail(partition, { from })`: an async iterator over a partition's records that, once
 * caught up, waits for new ones instead of ending.
 *
 * Waiting uses the handle's {@link LogWakeup}: woken at once by appends from this process (any
 * thread), and at most `pollMs` (an `openLog` option) late for appends from other processes.
 * Nothing spins: a caught-up iterator costs one timer per poll interval, shared by every waiting
 * reader of the handle.
 *
 * Contract: every record at offsets `>= from` is yielded exactly once, in offset order, except
 * records retention deleted before the iterator reached them (skipped; the gap shows in the
 * offsets). `return()` (a `break` out of `for await`) ends the iterator, also while it waits; so
 * does closing the log. A concurrent `next()` while one is pending is queued behind it.
 *
 * Cost: one memory-mapped range read per `batch` records.
 */

import type { LogCore } from './log-core.js';

/** The part of a topic a tail reads through (keeps this file independent of `Topic`). */
export interface TailSource<T> {
  read(partition: number, fromOffset: number, max: number): { offset: number; value: T }[];
  startOffset(partition: number): number;
}

export class TopicTail<T> implements AsyncIterableIterator<{ readonly offset: number; readonly value: T }> {
  readonly #core: LogCore;
  readonly #source: TailSource<T>;
  readonly #partition: number;
  readonly #batch: number;
  /** Next offset to yield. */
  #next: number;
  #buffer: { offset: number; value: T }[] = [];
  #index = 0;
  #done = false;
  /** Serialises `next()` calls. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(core: LogCore, source: TailSource<T>, partition: number, from: number, batch: number) {
    this.#core = core;
    this.#source = source;
    this.#partition = partition;
    this.#next = from;
    this.#batch = batch;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** The offset the next record will have at least (how far the iterator has read). */
  get position(): number {
    return this.#next;
  }

  next(): Promise<IteratorResult<{ readonly offset: number; readonly value: T }>> {
    const run = this.#queue.then(() => this.#advance());
    this.#queue = run.catch(() => undefined);
    return run;
  }

  return(): Promise<IteratorResult<{ readonly offset: number; readonly value: T }>> {
    this.#done = true;
    this.#buffer = [];
    // Wakes every reader of the handle waiting now (harmless: they re-check and wait again).
    this.#core.wakeup.wake();
    return Promise.resolve({ done: true, value: undefined });
  }

  async #advance(): Promise<IteratorResult<{ readonly offset: number; readonly value: T }>> {
    for (;;) {
      if (this.#done || this.#core.closed) {
        this.#done = true;
        return { done: true, value: undefined };
      }
      if (this.#index < this.#buffer.length) {
        const record = this.#buffer[this.#index++];
        this.#next = record.offset + 1;
        return { done: false, value: record };
      }
      // Take the wake-up promise before reading: a commit between the read and the wait then
      // resolves it, so no append is missed while going to sleep.
      const woken = this.#core.wakeup.next();
      this.#buffer = this.#source.read(this.#partition, this.#next, this.#batch);
      this.#index = 0;
      if (this.#buffer.length > 0) continue;
      const start = this.#source.startOffset(this.#partition);
      if (start > this.#next) {
        this.#next = start; // retention deleted the records up to `start`
        continue;
      }
      await woken;
    }
  }
}
