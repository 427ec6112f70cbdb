/**
 * InputGate: all input channels of one consumer task, plus the task's doorbell.
 *
 * Roles: used by the consumer task's thread only, except {@link InputGate.wake} (any thread,
 * via the doorbell). Producers ring the same doorbell after publishing.
 * Layout: none of its own (ring-buffer.ts, doorbell.ts).
 * Publish order: a wait loads the doorbell sequence BEFORE checking the channels, so a frame
 * published after the check changes the sequence the park compares against (doorbell.ts).
 * Staleness: readiness checks can only miss frames published after they ran; the sequence
 * protocol turns such a miss into an immediate return from the park, never a lost wake-up.
 */
import { ChannelClosedError, InvalidOptionError } from '../errors.js';
import {
  type BufferDebloatOptions,
  type DebloatState,
  debloatStep,
  initialDebloatState,
} from './buffer-debloater.js';
import { ChannelReader } from './channel-reader.js';
import { Doorbell } from './doorbell.js';
import type { EncodedBatches } from './encoded-batches.js';
import type { CheckpointBarrier, Frame } from './frame.js';
import { RingBuffer } from './ring-buffer.js';

/**
 * One input channel of a gate. A ring's {@link ChannelReader} is one; a remote edge's receiver
 * (src/cluster/remote-edge-receiver.ts) is another: same frames, same reading shape.
 */
export interface GateChannel {
  /** The next frame, or null when none is readable. Never blocks; throws the channel's failure. */
  tryRead(): Frame | null;
  /** Whether {@link tryRead} has something to do (a frame, or a failure to throw). */
  isReady(): boolean;
  close(): void;
  /** Bytes read so far (buffer debloating's throughput). */
  readonly stats: { readonly bytes: number };
  /**
   * Ring channels only: the records an unaligned barrier just returned overtook through the
   * ring's priority slot (ChannelReader.takeOvertaken). A remote edge has no priority slot: its
   * barriers arrive in order and overtake nothing.
   */
  takeOvertaken?(): EncodedBatches | null;
  /**
   * Pulls an in-band barrier matching `match` ahead of the frames before it
   * (`ChannelReader.pullBarrier`); absent on channels that cannot (remote edges).
   */
  pullBarrier?(match: (barrier: CheckpointBarrier) => boolean): boolean;
  /** Ring channels only: their fill is reported and their in-flight bytes are debloated. */
  readonly ring?: RingBuffer;
  /**
   * Channels fed by this thread's own event loop (a remote edge: NATS delivers on it) register the
   * gate's wake-up here and call it when something arrives. A ring's producer rings the doorbell
   * from its own thread instead, so rings leave this out. A gate with such a channel never parks
   * blocking (its event loop must turn for the channel to fill): see {@link InputGate.mayParkBlocking}.
   */
  onArrival?(wake: () => void): void;
}

export interface InputGateOptions {
  /**
   * Before parking, a wait polls the channels for up to this many microseconds. A park costs a
   * futex wait here and a notify syscall in the producer, plus the wake-up latency (tens of µs
   * on a VM), which at one park per batch dominates the per-record cost; a short spin catches a
   * producer that is about to publish its next batch. 0 disables spinning. Default 50.
   * The spin is adaptive: after {@link SPIN_GIVE_UP_AFTER} spins in a row that ended without
   * data, waits park at once, and only every {@link SPIN_PROBE_EVERY}th wait spins again to find
   * out whether the producer got faster. A consumer much faster than its producer (a CPU-heavy
   * upstream) then stops burning up to `spinMicros` of a shared core per batch.
   */
  readonly spinMicros?: number;
  /**
   * Buffer debloating (buffer-debloater.ts): every `periodMs` the gate measures its throughput and
   * caps each input ring's in-flight bytes so that about `targetMs` of data sits in front of a
   * barrier. Omitted or null: the rings' capacity is the only limit.
   */
  readonly debloat?: BufferDebloatOptions | null;
  /** Clock for the debloat periods (ms). Default `performance.now`. For tests. */
  readonly now?: () => number;
}

export const DEFAULT_SPIN_MICROS = 50;
/** Consecutive fruitless spins after which waits stop spinning (see `spinMicros`). */
export const SPIN_GIVE_UP_AFTER = 4;
/** While spinning is given up, one wait in this many spins again (a probe). */
export const SPIN_PROBE_EVERY = 32;

/** A frame and the index of the input channel it came from. */
export interface GateFrame {
  readonly channelIndex: number;
  readonly frame: Frame;
  /**
   * For a barrier that overtook its channel's ring (unaligned checkpoints): the record batches it
   * passed, encoded, which the gate delivers (decoded) after it; they are the checkpoint's
   * channel state.
   */
  readonly overtaken?: EncodedBatches;
}

/**
 * Routes frames from N input channels to the task, fairly, honouring blocked channels.
 *
 * - Fairness: round-robin over channels, one frame (a batch of up to `batchRecords` records or
 *   one control frame) per channel per turn; a channel with a long backlog cannot starve others.
 * - Blocking: a blocked channel is not read at all, so its frames stay in its ring and its
 *   producer feels backpressure (barrier alignment). Note that its producer still rings the
 *   doorbell while it fills the ring, which can wake a parked consumer for nothing: bounded by the
 *   ring's capacity in frames.
 * - End: EndOfPartition is returned like any frame and marks the channel ended.
 * - Close: a channel closed by its producer before EndOfPartition makes `pollNext` throw
 *   ChannelClosedError (after its earlier frames were delivered). After `close()` (or after the
 *   doorbell is closed by another thread) `pollNext` and the waits throw ChannelClosedError.
 */
export class InputGate {
  readonly doorbell: Doorbell;
  readonly channels: readonly GateChannel[];
  /** The ring channels (all but the remote ones), for fill and debloating. */
  readonly #rings: readonly RingBuffer[];
  /**
   * False when a channel is filled by this thread's event loop (a remote edge): a blocking park
   * (Atomics.wait) would hold that loop and never be woken. The task then parks asynchronously.
   */
  readonly mayParkBlocking: boolean;
  readonly spinMicros: number;
  readonly #blocked: boolean[];
  readonly #ended: boolean[];
  #endedCount = 0;
  /** Channel to look at first on the next poll (round-robin cursor). */
  #next = 0;
  #closedLocally = false;
  /** Spins in a row that ended without data; ≥ SPIN_GIVE_UP_AFTER means "park at once". */
  #fruitlessSpins = 0;
  /** Waits that skipped the spin since the last probe. */
  #skippedSpins = 0;
  /** Counters: spins that found data, spins that did not, waits that skipped the spin. */
  readonly spinStats = { hits: 0, misses: 0, skipped: 0 };
  /** Buffer debloating: options, or null when off. */
  readonly debloat: BufferDebloatOptions | null;
  readonly #now: () => number;
  #debloatState: DebloatState | null = null;
  /** Start of the current debloat period, ms. */
  #periodStart = 0;
  /** Idle ms (in waits) during the current period. */
  #periodIdle = 0;
  /** Sum of the channels' payload bytes read at the start of the period. */
  #periodBytes = 0;
  /** Limits published, for tests and metrics: how many times, and the last value. */
  readonly debloatStats = { published: 0, limit: 0 };

  constructor(
    channels: readonly (SharedArrayBuffer | RingBuffer | GateChannel)[],
    doorbell: SharedArrayBuffer | Doorbell,
    options: InputGateOptions = {},
  ) {
    if (channels.length === 0)
      throw new InvalidOptionError('channels', 'an input gate needs at least one channel');
    const spin = options.spinMicros ?? DEFAULT_SPIN_MICROS;
    if (!(spin >= 0 && spin <= 1_000_000)) {
      throw new InvalidOptionError('spinMicros', `must be in [0, 1e6] microseconds, got ${spin}`);
    }
    this.spinMicros = spin;
    this.channels = channels.map((c) =>
      c instanceof SharedArrayBuffer || c instanceof RingBuffer ? new ChannelReader(c) : c,
    );
    this.#rings = this.channels.flatMap((c) => (c.ring === undefined ? [] : [c.ring]));
    this.doorbell = doorbell instanceof Doorbell ? doorbell : new Doorbell(doorbell);
    let remote = false;
    for (const channel of this.channels) {
      if (channel.onArrival === undefined) continue;
      remote = true;
      const bell = this.doorbell;
      channel.onArrival(() => bell.wake());
    }
    this.mayParkBlocking = !remote;
    this.#blocked = channels.map(() => false);
    this.#ended = channels.map(() => false);
    this.debloat = options.debloat ?? null;
    this.#now = options.now ?? (() => performance.now());
    if (this.debloat !== null && this.#rings.length > 0) {
      this.#debloatState = initialDebloatState(this.#rings[0].capacity);
      this.debloatStats.limit = this.#debloatState.limit;
      this.#periodStart = this.#now();
    }
  }

  /**
   * Share in use of the fullest input ring: near 1, this task is the slower side of that channel.
   * For metrics: one pair of atomic loads per channel, stale like the rings' indices.
   */
  fillRatio(): number {
    let max = 0;
    for (const ring of this.#rings) max = Math.max(max, ring.usedBytes / ring.capacity);
    return max;
  }

  get channelCount(): number {
    return this.channels.length;
  }

  /**
   * The next frame from any unblocked, un-ended channel, or null if none is ready. Never blocks.
   * Cost: one atomic load per empty channel visited, plus the decode of the frame returned.
   */
  pollNext(): GateFrame | null {
    this.#throwIfClosed();
    const n = this.channels.length;
    for (let k = 0; k < n; k++) {
      const i = (this.#next + k) % n;
      if (this.#blocked[i] || this.#ended[i]) continue;
      let frame: Frame | null;
      try {
        frame = this.channels[i].tryRead();
      } catch (error) {
        if (error instanceof ChannelClosedError)
          throw new ChannelClosedError(`input channel ${i}: ${error.message}`);
        throw error;
      }
      if (frame === null) continue;
      if (this.#debloatState !== null) this.#maybeDebloat();
      this.#next = i + 1 === n ? 0 : i + 1;
      if (frame.kind === 'end-of-partition') {
        this.#ended[i] = true;
        this.#endedCount++;
      }
      if (frame.kind === 'barrier') {
        const overtaken = this.channels[i].takeOvertaken?.() ?? null;
        if (overtaken !== null) return { channelIndex: i, frame, overtaken };
      }
      return { channelIndex: i, frame };
    }
    return null;
  }

  /**
   * Pulls the first in-band barrier of channel `i` for which `match` holds ahead of the frames
   * before it (see `ChannelReader.pullBarrier`): the next poll of `i` returns it, unaligned, with
   * those frames as `overtaken`. False when there is none (or the channel cannot).
   */
  pullBarrier(i: number, match: (barrier: CheckpointBarrier) => boolean): boolean {
    this.#check(i);
    if (this.#ended[i]) return false;
    return this.channels[i].pullBarrier?.(match) ?? false;
  }

  /** Stops reading channel `i`; its frames stay in its ring (backpressure on its producer). */
  block(i: number): void {
    this.#blocked[this.#check(i)] = true;
  }

  unblock(i: number): void {
    this.#blocked[this.#check(i)] = false;
  }

  isBlocked(i: number): boolean {
    return this.#blocked[this.#check(i)];
  }

  isEnded(i: number): boolean {
    return this.#ended[this.#check(i)];
  }

  get allEnded(): boolean {
    return this.#endedCount === this.channels.length;
  }

  /** Whether `pollNext` has something to do right now (a frame, or a close to report). */
  hasReady(): boolean {
    for (let i = 0; i < this.channels.length; i++) {
      if (!this.#blocked[i] && !this.#ended[i] && this.channels[i].isReady()) return true;
    }
    return false;
  }

  /**
   * Resolves when `pollNext` may have something: a write on any channel (blocked ones included),
   * a close, a `wake()`, or the timeout. Returns at once if something is ready already. Does not
   * block the event loop (Atomics.waitAsync + a keep-alive timer). One wait at a time.
   * Rejects with ChannelClosedError if the gate or its doorbell is (or gets) closed.
   */
  async waitAsync(timeoutMs = Infinity): Promise<void> {
    this.#throwIfClosed();
    const seen = this.doorbell.sequence();
    const start = this.#debloatState === null ? 0 : this.#now();
    try {
      if (this.#spinUntilReady()) return;
      await this.doorbell.parkAsync(seen, timeoutMs);
    } finally {
      if (this.#debloatState !== null) this.#periodIdle += this.#now() - start;
    }
    this.#throwIfClosed();
  }

  /**
   * Blocking variant of {@link waitAsync} (Atomics.wait): holds the thread's event loop still.
   * Returns at once while a control message is flagged ({@link takeControl}). Returns false if the
   * timeout elapsed with no ring of the doorbell.
   */
  waitSync(timeoutMs = Infinity): boolean {
    this.#throwIfClosed();
    if (!this.mayParkBlocking) {
      throw new InvalidOptionError(
        'waitSync',
        'this gate has a channel filled by its own event loop (a remote edge); park with waitAsync',
      );
    }
    const seen = this.doorbell.sequence();
    const start = this.#debloatState === null ? 0 : this.#now();
    let outcome: string;
    try {
      if (this.#spinUntilReady()) return true;
      outcome = this.doorbell.parkSync(seen, timeoutMs);
    } finally {
      if (this.#debloatState !== null) this.#periodIdle += this.#now() - start;
    }
    this.#throwIfClosed();
    return outcome !== 'timed-out';
  }

  /**
   * Consumer only: whether the main thread posted a control message since the last call (the
   * doorbell's control flag, cleared by this call). After a {@link waitSync} that saw it, the
   * task must let its event loop run before it blocks again, or the message waits for the timeout.
   */
  takeControl(): boolean {
    return this.doorbell.takeControl();
  }

  /** Any thread (through the doorbell): makes a pending or the next wait return. */
  wake(): void {
    this.doorbell.wake();
  }

  /** Closes every input channel (waking parked producers) and the doorbell (waking a parked wait). */
  close(): void {
    if (this.#closedLocally) return;
    this.#closedLocally = true;
    for (const channel of this.channels) channel.close();
    this.doorbell.close();
  }

  /**
   * Polls readiness for up to `spinMicros` (blocks the thread that long at most, also in async
   * mode). Also returns true once the doorbell moved past `seen` (a wake or close).
   */
  #spinUntilReady(): boolean {
    if (this.hasReady()) return true;
    if (this.spinMicros === 0) return false;
    if (this.#fruitlessSpins >= SPIN_GIVE_UP_AFTER && ++this.#skippedSpins < SPIN_PROBE_EVERY) {
      this.spinStats.skipped++;
      return false;
    }
    this.#skippedSpins = 0;
    const deadline = performance.now() + this.spinMicros / 1000;
    do {
      if (this.hasReady() || this.doorbell.closed) {
        this.#fruitlessSpins = 0;
        this.spinStats.hits++;
        return true;
      }
    } while (performance.now() < deadline);
    this.#fruitlessSpins++;
    this.spinStats.misses++;
    return false;
  }

  /**
   * Closes the debloat period once `periodMs` passed and publishes the limit the decision asks
   * for to every open channel. Cost: one clock read per frame; a sum over the channels per period.
   */
  #maybeDebloat(): void {
    const now = this.#now();
    const elapsedMs = now - this.#periodStart;
    const options = this.debloat!;
    if (elapsedMs < options.periodMs) return;
    let bytes = 0;
    for (const channel of this.channels) bytes += channel.stats.bytes;
    const decision = debloatStep(
      this.#debloatState!,
      {
        bytes: bytes - this.#periodBytes,
        elapsedMs,
        idleMs: Math.min(this.#periodIdle, elapsedMs),
        openChannels: this.channels.length - this.#endedCount,
      },
      options,
      this.#rings[0].capacity,
    );
    this.#debloatState = decision.next;
    this.#periodStart = now;
    this.#periodIdle = 0;
    this.#periodBytes = bytes;
    if (decision.publish === null) return;
    for (let i = 0; i < this.channels.length; i++) {
      if (!this.#ended[i]) this.channels[i].ring?.setInFlightLimit(decision.publish);
    }
    this.debloatStats.published++;
    this.debloatStats.limit = decision.publish;
  }

  #throwIfClosed(): void {
    if (this.#closedLocally) throw new ChannelClosedError('input gate closed');
    if (this.doorbell.closed) throw new ChannelClosedError('input gate closed: its doorbell was closed');
  }

  #check(i: number): number {
    if (!Number.isInteger(i) || i < 0 || i >= this.channels.length) {
      throw new RangeError(`channel index ${i} out of range [0, ${this.channels.length})`);
    }
    return i;
  }
}
