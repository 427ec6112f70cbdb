/**
 * Cross-thread group commit: the asynchronous writes of every handle on one log directory in one
 * process are committed in ONE LMDB transaction (one fsync) by one elected handle, the committer,
 * whichever thread it lives in (the main thread or a worker).
 *
 * Roles. The first handle on a directory in the process claims the relay and becomes its
 * committer; every other handle of the process on that directory is a follower. A follower's group
 * (`group-commit.ts`) is sent to the committer as plain data ({@link WireOp}: records already
 * encoded and routed by the follower, so an encoding error still rejects only its own call),
 * queued there as one unit behind the committer's own operations and planned with them; the
 * committer answers with each operation's result. A follower has one group in flight at a time,
 * sent or committed by itself, so its calls still land in call order. When no committer is there
 * (it closed), the next follower that has a group to write claims the role; until then a follower
 * commits its group itself: conditional writes serialised by LMDB's write lock (also across
 * processes).
 *
 * Shared state: words shared by every thread's handle on the environment (an lmdb-js user shared
 * buffer): [0] bit 30 = a committer is there, bits 0–29 = its epoch; [1] the committer's heartbeat
 * (bumped every {@link BEAT_MS} and on every request); [2], [3] a random generation naming this
 * buffer's lifetime (it lives as long as the process has the environment open).
 *
 * Closing (retire). The committer clears the flag, then posts `retired` naming the requests it
 * received and has not answered yet, and from then on ignores requests of its epoch; it answers
 * those it named before its channel closes. A follower waiting on a request of that epoch that is
 * not named commits that group itself: it was never taken. (The follower's channel exists before it
 * reads the flag, so it cannot miss `retired`.)
 *
 * A committer that stops answering (its worker thread terminated or exited without closing the
 * log, or its event loop stalled): a follower waiting for an answer while the heartbeat of the
 * epoch it sent to has not moved for `committerTimeoutMs` (an `openLog` option, default
 * {@link DEFAULT_COMMITTER_TIMEOUT_MS}) takes over, in this order:
 * 1. it claims the role in the shared word for the next epoch (if nobody else did);
 * 2. it FENCES the old epoch: one durable write of the key `['f', generation, epoch]`. Every group
 *    a committer writes that holds followers' operations is conditional on its epoch's fence key
 *    not existing, so once the fence is committed, nothing of the old epoch can commit any more —
 *    even if the old committer is alive and merely slow (it then sees its group fail on the fence,
 *    answers its followers "not taken" and goes on as a follower);
 * 3. it reads its acknowledgement: in the same transaction as a follower's operations, the
 *    committer writes `['a', follower]` = { request id, outcomes }. If it names the waiting request,
 *    the request was committed (and durable: the fence committed after it) and resolves with the
 *    recorded outcomes; otherwise it was not and can no longer be, and the follower commits the
 *    group itself. So a pending append is never lost, never written twice, and never resolved
 *    without being durable; if the fence write itself fails, the waiting appends reject with
 *    LogStorageError.
 * A false alarm (a stalled but live committer) costs one fenced group, nothing else.
 *
 * One file of ~435 lines on purpose: the roles, the shared words, retire and the take-over are one
 * protocol whose safety argument (never lost, never doubled, never resolved before durable) runs
 * across all of them; the wire vocabulary is in `relay-wire.ts`, and the group commit side of the
 * protocol (units, fence condition, acknowledgement) in `group-commit.ts` and `log-core.ts`.
 *
 * Transport: a BroadcastChannel named after the directory's real path (requests and answers; a
 * follower ignores answers meant for others), ref'd only while a follower waits for an answer.
 * Cost per follower group: its encoded records packed into one buffer (one copy) and cloned once
 * per receiving handle (a BroadcastChannel delivers to every handle on the directory); the answers
 * of one committed group go out in one message; in the committer's transaction one small
 * acknowledgement entry per follower.
 */

import { randomUUID } from 'node:crypto';
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { LogStorageError } from '../errors.js';
import { type PackedOp, packOp, unpackOp, type WireOp, type WireOutcome } from './relay-wire.js';

/** One follower request as the committer queues it: its operations are planned in one group. */
export interface RelayUnit {
  readonly from: string;
  readonly id: number;
  readonly epoch: number;
}

/** What the committer recorded, in the transaction that committed it, for a follower. */
export interface RelayAck {
  readonly id: number;
  readonly outcomes: WireOutcome[];
}

interface Request {
  readonly kind: 'req';
  readonly epoch: number;
  readonly from: string;
  readonly id: number;
  readonly ops: PackedOp[];
}

interface Retired {
  readonly kind: 'retired';
  readonly epoch: number;
  /** `${from}:${id}` of the requests received and not answered yet. */
  readonly taken: string[];
}

/** The answers to every request a committed group held: one post per group, not per request. */
interface Answer {
  readonly kind: 'ans';
  readonly answers: readonly AnswerTo[];
}

interface AnswerTo {
  readonly to: string;
  readonly id: number;
  /** `null`: not committed (the committer was fenced); the follower commits the group itself. */
  readonly outcomes: WireOutcome[] | null;
}

const FLAG = 1 << 30;
const EPOCH_MASK = FLAG - 1;
/** The committer bumps its heartbeat this often (ms). */
export const BEAT_MS = 100;
/**
 * Default of `LogOptions.committerTimeoutMs`: a follower takes over after the heartbeat of the
 * epoch it waits on stood still this long (ms).
 */
export const DEFAULT_COMMITTER_TIMEOUT_MS = 2000;
/**
 * Smallest `committerTimeoutMs`: two heartbeats, so that one late timer tick of a live committer
 * is not taken for its death (a false alarm is safe, but costs a fenced group).
 */
export const MIN_COMMITTER_TIMEOUT_MS = 2 * BEAT_MS;
/** Bytes of the shared buffer (four 32-bit words, see the file comment). */
export const RELAY_WORDS_BYTES = 16;

export interface RelayHost {
  readonly dir: string;
  /** The environment-wide shared words (Int32Array of length 4). */
  readonly word: Int32Array;
  readonly realDir: string;
  /** Follower: take over after the committer's heartbeat stood still this long (ms). */
  readonly committerTimeoutMs: number;
  /** Committer side: queues a follower's request as one unit; null when fenced (not committed). */
  readonly submitUnit: (unit: RelayUnit, ops: WireOp[]) => Promise<WireOutcome[] | null>;
  /** Follower taking over: durably writes the fence of `epoch` of `generation`. */
  readonly fence: (generation: string, epoch: number) => Promise<void>;
  /** Follower: whether the fence of `epoch` of `generation` exists, from a fresh snapshot. */
  readonly isFenced: (generation: string, epoch: number) => boolean;
  /** Follower: its acknowledgement, from a fresh snapshot. */
  readonly readAck: (from: string) => RelayAck | undefined;
  /** Follower closing: removes its acknowledgement entry. */
  readonly clearAck: (from: string) => Promise<void>;
}

interface Waiting {
  readonly epoch: number;
  readonly resolve: (outcomes: WireOutcome[] | null) => void;
  readonly reject: (error: unknown) => void;
}

export class ThreadRelay {
  readonly #host: RelayHost;
  readonly #channel: BroadcastChannel;
  /** Names this handle in acknowledgements: unique across processes and time. */
  readonly #id = `${threadId}:${randomUUID()}`;
  /** This environment's lifetime in the process (shared words [2], [3]). */
  readonly #generation: string;
  /** Set while this handle is the committer. */
  #epoch: number | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  /** Committer: requests received and not answered yet, by `${from}:${id}`. */
  readonly #taken = new Set<string>();
  /** Committer: answers being prepared (close waits for them to be posted). */
  readonly #answering = new Set<Promise<void>>();
  /** Committer: answers to post together at the end of this microtask turn, and that post. */
  #outbox: AnswerTo[] = [];
  #posted: Promise<void> | undefined;
  #nextRequest = 0;
  /** Whether this handle ever sent a request (then it has an acknowledgement entry to remove). */
  #sent = false;
  readonly #waiting = new Map<number, Waiting>();
  /** Follower: watches the committer's heartbeat while requests wait. */
  #watchdog: ReturnType<typeof setInterval> | undefined;
  #progress: { key: string; at: number } | undefined;
  #takingOver = false;

  constructor(host: RelayHost) {
    this.#host = host;
    this.#generation = generationOf(host.word);
    this.#channel = new BroadcastChannel(`weir-log-relay:${host.realDir}`);
    this.#channel.onmessage = (event) =>
      this.#receive((event as MessageEvent).data as Request | Answer | Retired);
    this.#channel.unref();
    this.#claim();
  }

  /** Committer: operations received from other handles so far (for tests and benches). */
  relayedOps = 0;
  /** Follower: requests resolved from the acknowledgement after a take-over (tests). */
  resolvedFromAck = 0;
  /**
   * Committer, fault injection for tests: called after a follower's request committed and
   * before its answer is posted (a hook that ends the thread leaves the request committed and
   * unanswered: the case the acknowledgement entry exists for).
   */
  beforeAnswer: (() => void) | undefined;

  /** Whether this handle commits for the others. */
  get committer(): boolean {
    return this.#epoch !== undefined;
  }

  /** This process's fence key namespace (see the file comment). */
  get generation(): string {
    return this.#generation;
  }

  /**
   * Follower side: sends `ops` to the committer and resolves with their outcomes, in order; or
   * with `null` when there is no committer or it retired or was fenced without committing them
   * (then the caller commits them itself). Claims the committer role when it is free.
   */
  send(ops: WireOp[]): Promise<WireOutcome[] | null> | null {
    if (this.#epoch !== undefined) return null;
    const w = Atomics.load(this.#host.word, 0);
    if ((w & FLAG) === 0) {
      this.#claim();
      return null;
    }
    const epoch = w & EPOCH_MASK;
    const id = this.#nextRequest++;
    this.#sent = true;
    const answered = new Promise<WireOutcome[] | null>((resolve, reject) =>
      this.#waiting.set(id, { epoch, resolve, reject }),
    );
    if (this.#waiting.size === 1) {
      this.#channel.ref();
      this.#watch();
    }
    const request: Request = { kind: 'req', epoch, from: this.#id, id, ops: ops.map(packOp) };
    this.#channel.postMessage(request);
    return answered;
  }

  /**
   * Committer side: stops taking requests and tells the followers which ones it took; resolves
   * once every request taken has been queued and answered after `drained` (the queue's idle).
   */
  async retire(drained: () => Promise<void>): Promise<void> {
    const epoch = this.#epoch;
    if (epoch === undefined) return;
    Atomics.compareExchange(this.#host.word, 0, FLAG | epoch, epoch);
    this.#stepDown();
    const retired: Retired = { kind: 'retired', epoch, taken: [...this.#taken] };
    this.#channel.postMessage(retired);
    await drained();
    while (this.#answering.size > 0) await Promise.all(this.#answering);
  }

  /**
   * Committer side, from the group commit: `epoch` was fenced by a follower that took over. This
   * handle is a follower from now on (the shared word already names the new committer).
   */
  fenced(epoch: number): void {
    if (this.#epoch === epoch) this.#stepDown();
  }

  /**
   * Closes the channel. A handle that ever sent a request removes its acknowledgement entry: the
   * returned promise; `undefined` when there is nothing to remove (closing stays synchronous).
   */
  close(): Promise<void> | undefined {
    this.#stepDown();
    this.#channel.close();
    this.#stopWatch();
    // Only a follower closed while the committer still has its request could wait here, and a
    // follower's close waits for its group commit, which waits for the answer.
    for (const { resolve } of this.#waiting.values()) resolve(null);
    this.#waiting.clear();
    return this.#sent ? this.#host.clearAck(this.#id) : undefined;
  }

  #claim(): boolean {
    const word = this.#host.word;
    const w = Atomics.load(word, 0);
    if ((w & FLAG) !== 0) return false;
    const epoch = ((w & EPOCH_MASK) + 1) & EPOCH_MASK;
    if (Atomics.compareExchange(word, 0, w, FLAG | epoch) !== w) return false;
    this.#becomeCommitter(epoch);
    return true;
  }

  #becomeCommitter(epoch: number): void {
    this.#epoch = epoch;
    Atomics.add(this.#host.word, 1, 1);
    this.#heartbeat = setInterval(() => Atomics.add(this.#host.word, 1, 1), BEAT_MS);
    this.#heartbeat.unref();
  }

  #stepDown(): void {
    this.#epoch = undefined;
    if (this.#heartbeat !== undefined) clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  #receive(message: Request | Answer | Retired): void {
    if (message.kind === 'ans') {
      for (const answer of message.answers) {
        if (answer.to === this.#id) this.#settle(answer.id, answer.outcomes);
      }
    } else if (message.kind === 'retired') {
      for (const [id, waiting] of [...this.#waiting]) {
        if (waiting.epoch === message.epoch && !message.taken.includes(`${this.#id}:${id}`)) {
          this.#settle(id, null);
        }
      }
    } else if (this.#epoch !== undefined && message.epoch === this.#epoch) {
      Atomics.add(this.#host.word, 1, 1);
      const key = `${message.from}:${message.id}`;
      this.#taken.add(key);
      this.relayedOps += message.ops.length;
      const unit: RelayUnit = { from: message.from, id: message.id, epoch: message.epoch };
      const answering = this.#host
        .submitUnit(unit, message.ops.map(unpackOp))
        .then((outcomes) => {
          if (outcomes !== null) this.beforeAnswer?.();
          return this.#answer({ to: message.from, id: message.id, outcomes });
        })
        .then(() => {
          this.#taken.delete(key);
          this.#answering.delete(answering);
        });
      this.#answering.add(answering);
    }
  }

  /**
   * Queues an answer; resolves once it is posted. The units of one group settle in one loop
   * (`group-commit.ts`), so their answers are all queued before the microtask that posts them:
   * one message per group, which every other handle on the channel receives once.
   */
  #answer(answer: AnswerTo): Promise<void> {
    this.#outbox.push(answer);
    this.#posted ??= new Promise<void>((posted) =>
      queueMicrotask(() => {
        const message: Answer = { kind: 'ans', answers: this.#outbox };
        this.#outbox = [];
        this.#posted = undefined;
        this.#channel.postMessage(message);
        posted();
      }),
    );
    return this.#posted;
  }

  #settle(id: number, outcomes: WireOutcome[] | null, error?: unknown): void {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return;
    this.#waiting.delete(id);
    if (this.#waiting.size === 0) {
      this.#channel.unref();
      this.#stopWatch();
    }
    if (error !== undefined) waiting.reject(error);
    else waiting.resolve(outcomes);
  }

  // ------------------------------------------------------------------ follower: taking over

  #watch(): void {
    if (this.#watchdog !== undefined) return;
    this.#progress = undefined;
    this.#watchdog = setInterval(() => this.#check(), BEAT_MS);
    this.#watchdog.unref();
  }

  #stopWatch(): void {
    if (this.#watchdog !== undefined) clearInterval(this.#watchdog);
    this.#watchdog = undefined;
    this.#progress = undefined;
  }

  /** Takes over when the committer of the oldest waiting request's epoch shows no life. */
  #check(): void {
    if (this.#takingOver) return;
    const first = this.#waiting.values().next();
    if (first.done === true) return;
    const epoch = first.value.epoch;
    const w = Atomics.load(this.#host.word, 0);
    // Progress of that epoch's committer: its heartbeat while it holds the role, else none.
    const key = w === (FLAG | epoch) ? `${epoch}:${Atomics.load(this.#host.word, 1)}` : `${epoch}:gone`;
    // Another follower took over already: settle at once, without waiting or fencing again.
    const fenced = w !== (FLAG | epoch) && this.#host.isFenced(this.#generation, epoch);
    const now = performance.now();
    if (!fenced && (this.#progress === undefined || this.#progress.key !== key)) {
      this.#progress = { key, at: now };
      return;
    }
    if (!fenced && now - (this.#progress?.at ?? now) < this.#host.committerTimeoutMs) return;
    this.#takingOver = true;
    void this.#takeOver(epoch, fenced).finally(() => {
      this.#takingOver = false;
      this.#progress = undefined;
    });
  }

  async #takeOver(epoch: number, fenced: boolean): Promise<void> {
    const word = this.#host.word;
    const next = (epoch + 1) & EPOCH_MASK;
    if (Atomics.compareExchange(word, 0, FLAG | epoch, FLAG | next) === (FLAG | epoch)) {
      this.#becomeCommitter(next);
    } else this.#claim();
    try {
      if (!fenced) await this.#host.fence(this.#generation, epoch);
    } catch (cause) {
      const error = new LogStorageError(
        `log ${this.#host.dir}: the committer thread stopped answering and its appends could not be fenced`,
        { cause },
      );
      for (const [id, waiting] of [...this.#waiting]) {
        if (waiting.epoch === epoch) this.#settle(id, null, error);
      }
      return;
    }
    const ack = this.#host.readAck(this.#id);
    for (const [id, waiting] of [...this.#waiting]) {
      if (waiting.epoch !== epoch) continue;
      // Committed before the fence (durable: the fence committed after it), or never.
      const committed = ack !== undefined && ack.id === id;
      if (committed) this.resolvedFromAck++;
      this.#settle(id, committed ? ack.outcomes : null);
    }
  }
}

/** The generation words of the shared buffer, set once per buffer (random, never 0). */
function generationOf(word: Int32Array): string {
  for (const i of [2, 3]) {
    if (Atomics.load(word, i) === 0) {
      Atomics.compareExchange(word, i, 0, (Math.random() * 0x7fffffff) | 1);
    }
  }
  return `${Atomics.load(word, 2).toString(16)}-${Atomics.load(word, 3).toString(16)}`;
}
