/**
 * Doorbell: how a consumer task sleeps when none of its input rings has data, and how anyone wakes it.
 *
 * Roles: one doorbell per CONSUMER task, shared by all of its input rings. Producers (any number
 * of threads) and anyone else (`wake()`, e.g. the consumer's own thread on a control message, or
 * the main thread; `close()`) ring it; only the consumer parks on it, one park at a time.
 * Layout: `sequence`, `sleeping`, `closed`, `control` int32 words, each on its own 64-byte line
 * (layout.ts).
 * Publish order:
 * - Ringer: publish the frame (ring write index), THEN `Atomics.add(sequence)`, THEN if `sleeping`
 *   is 1, exchange it to 0 and, only if this exchange saw the 1, `Atomics.notify(sleeping)`.
 * - Consumer: load `sequence` (the `seen` snapshot) BEFORE checking its rings; to park, store
 *   `sleeping = 1`, THEN re-load `sequence` (changed: don't park), THEN wait on `sleeping` while 1.
 * Why no wake-up is lost: with sequentially consistent atomics, either the consumer's re-load sees
 * the ringer's add, or the ringer's load sees `sleeping = 1`; and because the ringer clears the very
 * word the consumer waits on before notifying, a notify that comes before the wait makes the wait
 * return at once. A delayed ringer may clear the flag of a later park: that park returns
 * spuriously (the consumer re-polls), never sleeps on published data.
 * Why the exchange: a woken consumer can take tens of µs to run again while batches keep being
 * published; only the first ringer after a park pays for the notify syscall.
 * Staleness: `sleeping` seen by a ringer can be stale both ways: a stale 1 costs an exchange, a
 * stale 0 is harmless because then the consumer's re-load of `sequence` sees the add.
 * Control messages ({@link Doorbell.ringControl}, main thread): the poster stores `control = 1`
 * AFTER posting the message and BEFORE the ring; a blocking park ({@link Doorbell.parkSync})
 * refuses to sleep while `control` is 1, and the consumer takes the flag (exchange to 0) after
 * every park and then lets its event loop run, which delivers the message. The same argument as
 * for `sequence` shows a flag set after the park's check is followed by a ring that wakes it.
 */
import {
  DOORBELL_BYTES,
  DOORBELL_CLOSED,
  DOORBELL_CONTROL,
  DOORBELL_SEQUENCE,
  DOORBELL_SLEEPING,
} from './layout.js';
import { type ParkOutcome, parkAsync, parkSync } from './park.js';

export class Doorbell {
  /** A zeroed doorbell; give the same SAB to the consumer and to every producer that feeds it. */
  static allocate(): SharedArrayBuffer {
    return new SharedArrayBuffer(DOORBELL_BYTES);
  }

  readonly buffer: SharedArrayBuffer;
  /** Counters of this endpoint only (not shared): rings, notifies issued, parks. */
  readonly stats = { rings: 0, notifies: 0, parks: 0 };
  readonly #words: Int32Array;

  constructor(buffer: SharedArrayBuffer) {
    if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength !== DOORBELL_BYTES) {
      throw new TypeError(`a doorbell needs a SharedArrayBuffer of ${DOORBELL_BYTES} bytes`);
    }
    this.buffer = buffer;
    this.#words = new Int32Array(buffer);
  }

  /**
   * Any thread, after publishing. Cost: one atomic add on a shared line and one load; an exchange
   * and a notify syscall only when the consumer sleeps. Returns whether a notify was issued.
   */
  ring(): boolean {
    const w = this.#words;
    this.stats.rings++;
    Atomics.add(w, DOORBELL_SEQUENCE, 1);
    if (Atomics.load(w, DOORBELL_SLEEPING) === 0 || Atomics.exchange(w, DOORBELL_SLEEPING, 0) === 0)
      return false;
    Atomics.notify(w, DOORBELL_SLEEPING);
    this.stats.notifies++;
    return true;
  }

  /** Any thread, including the consumer's own (resolves its pending `parkAsync`). Same as {@link ring}. */
  wake(): void {
    this.ring();
  }

  /**
   * The main thread, right AFTER posting a control message to the consumer's task: flags it and
   * rings, so a consumer blocked in {@link parkSync} wakes and lets its event loop deliver it.
   */
  ringControl(): void {
    Atomics.store(this.#words, DOORBELL_CONTROL, 1);
    this.ring();
  }

  /** Consumer only: whether a control message was flagged since the last call; clears the flag. */
  takeControl(): boolean {
    return (
      Atomics.load(this.#words, DOORBELL_CONTROL) !== 0 &&
      Atomics.exchange(this.#words, DOORBELL_CONTROL, 0) !== 0
    );
  }

  /** Any thread. Sticky: a parked consumer wakes and every later park returns at once. */
  close(): void {
    Atomics.store(this.#words, DOORBELL_CLOSED, 1);
    Atomics.add(this.#words, DOORBELL_SEQUENCE, 1);
    Atomics.store(this.#words, DOORBELL_SLEEPING, 0);
    Atomics.notify(this.#words, DOORBELL_SLEEPING);
  }

  get closed(): boolean {
    return Atomics.load(this.#words, DOORBELL_CLOSED) !== 0;
  }

  /** Whether the consumer has flagged that it sleeps. Stale in both directions; for tests and metrics. */
  get consumerParked(): boolean {
    return Atomics.load(this.#words, DOORBELL_SLEEPING) !== 0;
  }

  /** Consumer only: the value to pass to `park*`. Load it BEFORE checking the inputs. */
  sequence(): number {
    return Atomics.load(this.#words, DOORBELL_SEQUENCE);
  }

  /**
   * Consumer only. Blocks unless somebody rang since `seen` was loaded or a control message is
   * flagged ({@link ringControl}), until somebody rings. Blocks the event loop: see
   * {@link takeControl}.
   */
  parkSync(seen: number, timeoutMs = Infinity): ParkOutcome {
    if (!this.#prepare(seen, true)) return 'not-equal';
    try {
      return parkSync(this.#words, DOORBELL_SLEEPING, 1, timeoutMs);
    } finally {
      Atomics.store(this.#words, DOORBELL_SLEEPING, 0);
    }
  }

  /** Consumer only. Like {@link parkSync} without blocking the event loop (holds a keep-alive timer). */
  async parkAsync(seen: number, timeoutMs = Infinity): Promise<ParkOutcome> {
    if (!this.#prepare(seen)) return 'not-equal';
    try {
      return await parkAsync(this.#words, DOORBELL_SLEEPING, 1, timeoutMs);
    } finally {
      Atomics.store(this.#words, DOORBELL_SLEEPING, 0);
    }
  }

  /**
   * Flags the park, then re-checks `sequence` (and for a blocking park the control flag, which an
   * asynchronous park leaves to the event loop); false means "somebody rang: don't park".
   */
  #prepare(seen: number, blocking = false): boolean {
    const w = this.#words;
    Atomics.store(w, DOORBELL_SLEEPING, 1);
    if (
      Atomics.load(w, DOORBELL_SEQUENCE) !== seen ||
      Atomics.load(w, DOORBELL_CLOSED) !== 0 ||
      (blocking && Atomics.load(w, DOORBELL_CONTROL) !== 0)
    ) {
      Atomics.store(w, DOORBELL_SLEEPING, 0);
      return false;
    }
    this.stats.parks++;
    return true;
  }
}
