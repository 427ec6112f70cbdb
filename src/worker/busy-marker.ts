/**
 * The task's side of the stuck-task watchdog (coordinator/stuck-task-watchdog.ts): marks its slot
 * busy around each batch of user code (a batch of records, a source poll) and records which
 * chained operator is running. Layout and roles: channels/layout.ts, "busy slots".
 *
 * Cost: two `Atomics.add` per batch; per record, two plain int32 stores per chained hop (operator
 * index in and back) — no clock, no allocation. The main thread reads the operator only after
 * the sequence stayed odd for the whole timeout, so plain stores are enough there.
 */

import { BUSY_OPERATOR, BUSY_SEQUENCE, BUSY_SLOT_INTS } from '../channels/layout.js';

export class BusyMarker {
  readonly #words: Int32Array;

  constructor(buffer: SharedArrayBuffer, slot: number) {
    this.#words = new Int32Array(buffer, slot * BUSY_SLOT_INTS * 4, BUSY_SLOT_INTS);
  }

  /** A batch of user code begins (the sequence becomes odd). */
  enter(): void {
    Atomics.add(this.#words, BUSY_SEQUENCE, 1);
  }

  /** The batch ended (the sequence becomes even again). */
  exit(): void {
    Atomics.add(this.#words, BUSY_SEQUENCE, 1);
  }

  /** The operator at `index` of the chain runs now. */
  set operator(index: number) {
    this.#words[BUSY_OPERATOR] = index;
  }

  get operator(): number {
    return this.#words[BUSY_OPERATOR];
  }
}
