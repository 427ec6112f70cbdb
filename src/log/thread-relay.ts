/**
 * Cross-thread group commit: the asynchronous writes of every handle on one log directory in one
 * process are committed in ONE LMDB transaction (one fsync) by the main thread's handle, when the
 * main thread has the directory open.
 *
 * Roles. The first main-thread handle on a directory claims the relay and becomes its committer;
 * every other handle of the process on that directory (worker threads, further main-thread
 * handles) is a follower. A follower's group (`group-commit.ts`) is sent to the committer as plain
 * data ({@link WireOp}: records already encoded and routed by the follower, so an encoding error
 * still rejects only its own call), queued there behind the committer's own operations and planned
 * with them; the committer answers with each operation's result. A follower has one group in
 * flight at a time, sent or committed by itself, so its calls still land in call order. When no
 * committer is there (no main-thread handle, or it is closing) a follower commits its group itself,
 * as before: conditional writes serialised by LMDB's write lock (also across processes).
 *
 * Why the main thread only: a committer must outlive the followers' requests. `worker.terminate()`
 * can stop a worker thread at any moment, which would leave its followers' appends neither
 * committed nor refused; the main thread stops only with the whole process.
 *
 * Hand-over protocol, without counting anything a terminated thread could leave behind: one
 * 32-bit word shared by every thread's handle on the environment (an lmdb-js user shared buffer)
 * holds bit 30 = a committer is there and bits 0–13 = its epoch. A follower that finds the flag set
 * posts its request tagged with the epoch. Retiring (closing), the committer clears the flag, then
 * posts `retired` naming the requests it received and has not answered yet, and from then on
 * ignores requests of its epoch; it answers those it named before its channel closes. A follower
 * waiting on a request of that epoch that is not named commits that group itself: it was never
 * taken. (The follower's channel exists before it reads the flag, so it cannot miss `retired`.)
 * A committer that received a request always answers it, since the main thread stops only with
 * the process; a follower terminated meanwhile just never reads the answer.
 *
 * Transport: a BroadcastChannel named after the directory's real path (requests and answers; a
 * follower ignores answers meant for others), ref'd only while a follower waits for an answer.
 * Cost per follower group: one structured-clone copy of its encoded records each way of a post.
 */

import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';
import { InvalidOptionError, LogStorageError, type WeirError } from '../errors.js';
import type { PreparedAppend } from './topic.js';

/** An asynchronous log operation as data (what a follower sends). */
export type WireOp =
  | {
      readonly kind: 'append';
      readonly topic: string;
      readonly topicId: number;
      readonly prepared: PreparedAppend;
      readonly tx: { readonly transactionId: string; readonly writer: string } | null;
    }
  | { readonly kind: 'retention'; readonly topic: string; readonly topicId: number };

/** One operation's outcome, as sent back. */
export type WireOutcome =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly name: string; readonly message: string; readonly option?: string };

interface Request {
  readonly kind: 'req';
  readonly epoch: number;
  readonly from: string;
  readonly id: number;
  readonly ops: WireOp[];
}

interface Retired {
  readonly kind: 'retired';
  readonly epoch: number;
  /** `${from}:${id}` of the requests received and not answered yet. */
  readonly taken: string[];
}

interface Answer {
  readonly kind: 'ans';
  readonly to: string;
  readonly id: number;
  readonly outcomes: WireOutcome[];
}

const FLAG = 1 << 30;
const EPOCH_MASK = 0x3fff;

let followerSeq = 0;

export interface RelayHost {
  readonly dir: string;
  /** The environment-wide shared word (Int32Array of length ≥ 1). */
  readonly word: Int32Array;
  readonly realDir: string;
  /** Committer side: queue `op` on this handle's group commit; resolves with its result. */
  readonly submit: (op: WireOp) => Promise<unknown>;
}

export class ThreadRelay {
  readonly #host: RelayHost;
  readonly #channel: BroadcastChannel;
  /** Set while this handle is the committer. */
  #epoch: number | undefined;
  /** Committer: requests received and not answered yet, by `${from}:${id}`. */
  readonly #taken = new Set<string>();
  /** Committer: answers being prepared (close waits for them to be posted). */
  readonly #answering = new Set<Promise<void>>();
  readonly #id = `${process.pid}:${threadId}:${++followerSeq}`;
  #nextRequest = 0;
  readonly #waiting = new Map<
    number,
    { readonly epoch: number; readonly resolve: (outcomes: WireOutcome[] | null) => void }
  >();

  constructor(host: RelayHost) {
    this.#host = host;
    this.#channel = new BroadcastChannel(`weir-log-relay:${host.realDir}`);
    this.#channel.onmessage = (event) =>
      this.#receive((event as MessageEvent).data as Request | Answer | Retired);
    this.#channel.unref();
    if (isMainThread) this.#claim();
  }

  /** Committer: operations received from other handles so far (for tests and benches). */
  relayedOps = 0;

  /** Whether this handle commits for the others. */
  get committer(): boolean {
    return this.#epoch !== undefined;
  }

  /**
   * Follower side: sends `ops` to the committer and resolves with their outcomes, in order; or
   * with `null` when there is no committer or it retired without taking them (then the caller
   * commits them itself).
   */
  send(ops: WireOp[]): Promise<WireOutcome[] | null> | null {
    if (this.#epoch !== undefined) return null;
    const w = Atomics.load(this.#host.word, 0);
    if ((w & FLAG) === 0) return null;
    const epoch = w & EPOCH_MASK;
    const id = this.#nextRequest++;
    const answered = new Promise<WireOutcome[] | null>((resolve) =>
      this.#waiting.set(id, { epoch, resolve }),
    );
    if (this.#waiting.size === 1) this.#channel.ref();
    const request: Request = { kind: 'req', epoch, from: this.#id, id, ops };
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
    Atomics.and(this.#host.word, 0, ~FLAG);
    this.#epoch = undefined;
    const retired: Retired = { kind: 'retired', epoch, taken: [...this.#taken] };
    this.#channel.postMessage(retired);
    await drained();
    while (this.#answering.size > 0) await Promise.all(this.#answering);
  }

  close(): void {
    this.#channel.close();
    // Only a follower closed while the committer still has its request could wait here, and a
    // follower's close waits for its group commit, which waits for the answer.
    for (const { resolve } of this.#waiting.values()) resolve(null);
    this.#waiting.clear();
  }

  #claim(): void {
    const word = this.#host.word;
    const w = Atomics.load(word, 0);
    if ((w & FLAG) !== 0) return;
    const epoch = ((w & EPOCH_MASK) + 1) & EPOCH_MASK;
    if (Atomics.compareExchange(word, 0, w, FLAG | epoch) === w) this.#epoch = epoch;
  }

  #receive(message: Request | Answer | Retired): void {
    if (message.kind === 'ans') {
      if (message.to === this.#id) this.#settle(message.id, message.outcomes);
    } else if (message.kind === 'retired') {
      for (const [id, waiting] of [...this.#waiting]) {
        if (waiting.epoch === message.epoch && !message.taken.includes(`${this.#id}:${id}`)) {
          this.#settle(id, null);
        }
      }
    } else if (this.#epoch !== undefined && message.epoch === this.#epoch) {
      const key = `${message.from}:${message.id}`;
      this.#taken.add(key);
      this.relayedOps += message.ops.length;
      const settled = message.ops.map((op) => this.#host.submit(op).then(succeeded, failed));
      const answering = Promise.all(settled).then((outcomes) => {
        const answer: Answer = { kind: 'ans', to: message.from, id: message.id, outcomes };
        this.#channel.postMessage(answer);
        this.#taken.delete(key);
        this.#answering.delete(answering);
      });
      this.#answering.add(answering);
    }
  }

  #settle(id: number, outcomes: WireOutcome[] | null): void {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return;
    this.#waiting.delete(id);
    if (this.#waiting.size === 0) this.#channel.unref();
    waiting.resolve(outcomes);
  }
}

function succeeded(result: unknown): WireOutcome {
  return { ok: true, result };
}

function failed(error: unknown): WireOutcome {
  if (error instanceof InvalidOptionError) {
    return { ok: false, name: error.name, message: error.message, option: error.option };
  }
  const e = error instanceof Error ? error : new Error(String(error));
  return { ok: false, name: e.name, message: e.message };
}

/** A follower's view of a failed outcome: the committer's typed error, rebuilt. */
export function outcomeError(outcome: WireOutcome & { ok: false }, dir: string): WeirError {
  if (outcome.name === 'InvalidOptionError' && outcome.option !== undefined) {
    const prefix = `invalid option ${outcome.option}: `;
    const detail = outcome.message.startsWith(prefix)
      ? outcome.message.slice(prefix.length)
      : outcome.message;
    return new InvalidOptionError(outcome.option, detail);
  }
  return new LogStorageError(`log ${dir}: the main thread's committer failed the append: ${outcome.message}`);
}
