/**
 * Group commit for one log handle: every asynchronous log operation (append, transactional
 * append, retention run) queued while the previous group was being written is planned together
 * and written in ONE LMDB transaction with ONE fsync; each operation's promise settles with its
 * own result when that transaction is durable.
 *
 * Protocol, per group (one group in flight per handle at a time):
 * 1. Take queued operations in FIFO order, whole operations only, up to `maxBatchRecords`
 *    records (an operation larger than that forms a group of its own: appends are atomic).
 * 2. Renew the read snapshot (it now includes everything committed by anyone, this handle's
 *    previous group too) and plan every operation on one {@link PlanView}, in queue order; so
 *    offsets are assigned from the committed tail, densely, in call order. An operation whose
 *    planning throws (its topic was deleted) is rejected alone and the group is planned again
 *    without it.
 * 3. Apply the group as conditional writes (`plan-view.ts`). If another thread or process
 *    committed a change to what the group read, nothing is written and the group goes back to 2.
 *    No JavaScript runs while LMDB's write lock is held, so a worker thread terminated at any
 *    moment never leaves the lock taken (see `topic.ts`).
 *
 * Latency. An operation queued while the handle is idle starts a group after `lingerMs` (0: at
 * the next event-loop turn, so that the appends of one turn share a transaction). Operations
 * queued while a group is in flight start the next group as soon as it commits, without
 * lingering: under load, batching comes from the commit time itself.
 *
 * Across threads: on a follower handle a group is first offered to the process's committer
 * (`thread-relay.ts`), which plans and commits it with its own; only when there is none (or it
 * retired or was fenced without taking the group) is it committed here as above. On the committer,
 * a follower's request is queued as one unit (never split between groups) and the group's
 * transaction also writes the follower's acknowledgement and is conditional on the unit's
 * committer epoch not being fenced (see `thread-relay.ts`).
 *
 * Errors: a storage failure rejects every operation of the group with LogStorageError; giving up
 * after MAX_ATTEMPTS conflicting groups (only under extreme cross-process contention) too.
 */

import { LogStorageError, WeirError } from '../errors.js';
import { applyConditionally, PlanView } from './plan-view.js';
import { failed, outcomeError, succeeded, type WireOp, type WireOutcome } from './relay-wire.js';
import type { RelayUnit } from './thread-relay.js';

/** An operation planned on a view: returns its result, having written its ops into the view. */
export type PlanFunction<R> = (view: PlanView) => R;

interface QueuedOperation {
  readonly records: number;
  readonly plan: PlanFunction<unknown>;
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** The operation as data, for the process's committer (`thread-relay.ts`). */
  readonly wire: WireOp | undefined;
  /** Committer side: the follower request this operation belongs to, and its index there. */
  readonly unit?: UnitState;
  readonly index?: number;
}

/** A follower request being committed here (`thread-relay.ts`). */
interface UnitState {
  readonly unit: RelayUnit;
  /** Outcomes settled so far, by index in the request. */
  readonly outcomes: (WireOutcome | undefined)[];
  pending: number;
  fenced: boolean;
  readonly done: (outcomes: WireOutcome[] | null) => void;
}

/** Rejection reason of a fenced unit's operations (answered "not committed", never surfaced). */
const FENCED = Symbol('fenced');

/** Hands a group to the process's committer thread; `null`: none there, commit it here. */
export interface GroupRelay {
  send(ops: WireOp[]): Promise<WireOutcome[] | null> | null;
}

export interface GroupCommitOptions {
  readonly dir: string;
  /** Wait this long from idle before starting a group (0: next event-loop turn). */
  readonly lingerMs: number;
  /** Records per group at most (an operation larger than this is written alone). */
  readonly maxBatchRecords: number;
  /** Called before planning each group: renew the read snapshot. */
  readonly renewSnapshot: () => void;
  /** Called after each group committed (wakes tailing readers). */
  readonly onCommit: () => void;
  /**
   * Committer side: writes a follower unit's acknowledgement into the group and makes the group
   * conditional on the unit's epoch not being fenced.
   */
  readonly stampUnit: (view: PlanView, unit: RelayUnit, outcomes: WireOutcome[]) => void;
  /** Committer side: whether `epoch` was fenced (read after `renewSnapshot`). */
  readonly isFenced: (epoch: number) => boolean;
  /** Committer side: `epoch` was fenced; this handle is not its committer any more. */
  readonly onFenced: (epoch: number) => void;
}

/** Conflicting groups before giving up (each one means another writer committed meanwhile). */
export const MAX_ATTEMPTS = 1000;

export class GroupCommit {
  readonly #o: GroupCommitOptions;
  /** FIFO; operations leave it only when taken into a group. */
  #queue: QueuedOperation[] = [];
  /** Resolves when the queue has drained; `undefined` while idle. */
  #running: Promise<void> | undefined;

  /** Set on follower handles (`thread-relay.ts`). */
  #relay: GroupRelay | undefined;

  constructor(options: GroupCommitOptions) {
    this.#o = options;
  }

  /** Lets this handle's groups go to the process's committer while there is one (`thread-relay.ts`). */
  useRelay(relay: GroupRelay): void {
    this.#relay = relay;
  }

  /** Whether operations are queued or a group is in flight. */
  get busy(): boolean {
    return this.#running !== undefined;
  }

  /** Queues `plan`; resolves with its result once its group is durable. */
  submit<R>(records: number, plan: PlanFunction<R>, wire?: WireOp): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ records, plan, resolve: resolve as (r: unknown) => void, reject, wire });
      if (this.#running === undefined) this.#running = this.#drain();
    });
  }

  /**
   * Committer side: queues a follower's request as one unit; resolves with every operation's
   * outcome once its group is durable, or with `null` when its epoch was fenced (nothing of it was
   * written). Never rejects.
   */
  submitUnit(
    unit: RelayUnit,
    items: { records: number; plan: PlanFunction<unknown> }[],
  ): Promise<WireOutcome[] | null> {
    return new Promise((done) => {
      if (items.length === 0) {
        done([]);
        return;
      }
      const state: UnitState = { unit, outcomes: [], pending: items.length, fenced: false, done };
      const settle = (index: number, outcome: WireOutcome | null) => {
        if (outcome === null) state.fenced = true;
        else state.outcomes[index] = outcome;
        if (--state.pending === 0) done(state.fenced ? null : (state.outcomes as WireOutcome[]));
      };
      for (let index = 0; index < items.length; index++) {
        this.#queue.push({
          records: items[index].records,
          plan: items[index].plan,
          wire: undefined,
          unit: state,
          index,
          resolve: (result) => settle(index, succeeded(result)),
          reject: (error) => settle(index, error === FENCED ? null : failed(error)),
        });
      }
      if (this.#running === undefined) this.#running = this.#drain();
    });
  }

  /** Resolves when every operation submitted so far has settled. */
  idle(): Promise<void> {
    return this.#running ?? Promise.resolve();
  }

  async #drain(): Promise<void> {
    try {
      await linger(this.#o.lingerMs);
      while (this.#queue.length > 0) {
        const group = this.#take();
        try {
          if (!(await this.#relayed(group))) await this.#commit(group);
        } catch (error) {
          const failure = asStorageError(error, this.#o.dir);
          for (const op of group) op.reject(failure);
        }
      }
    } finally {
      this.#running = undefined;
    }
  }

  #take(): QueuedOperation[] {
    let records = 0;
    let n = 0;
    while (n < this.#queue.length) {
      const next = this.#queue[n].records;
      const sameUnit =
        n > 0 && this.#queue[n].unit !== undefined && this.#queue[n].unit === this.#queue[n - 1].unit;
      if (n > 0 && records + next > this.#o.maxBatchRecords && !sameUnit) break;
      records += next;
      n++;
    }
    return this.#queue.splice(0, n);
  }

  /** Sends the group to the process's committer when there is one; false: commit it here. */
  async #relayed(group: QueuedOperation[]): Promise<boolean> {
    const relay = this.#relay;
    if (relay === undefined || group.some((op) => op.wire === undefined)) return false;
    const sent = relay.send(group.map((op) => op.wire as WireOp));
    if (sent === null) return false;
    const outcomes = await sent;
    if (outcomes === null) return false; // the committer retired without taking it
    for (let i = 0; i < group.length; i++) {
      const outcome = outcomes[i];
      if (outcome === undefined) {
        group[i].reject(
          new LogStorageError(`log ${this.#o.dir}: the committer thread closed without answering`),
        );
      } else if (outcome.ok) group[i].resolve(outcome.result);
      else group[i].reject(outcomeError(outcome, this.#o.dir));
    }
    return true;
  }

  async #commit(group: QueuedOperation[]): Promise<void> {
    for (let attempt = 1; group.length > 0; attempt++) {
      this.#o.renewSnapshot();
      const view = new PlanView();
      const results: unknown[] = [];
      let failed = -1;
      for (let i = 0; i < group.length; i++) {
        try {
          results.push(group[i].plan(view));
        } catch (error) {
          group[i].reject(error);
          failed = i;
          break;
        }
      }
      if (failed >= 0) {
        // Its reads or writes may be in the view: plan the others again on a fresh one.
        group = group.filter((_, i) => i !== failed);
        continue;
      }
      const units = unitsOf(group);
      for (const u of units) this.#o.stampUnit(view, u.unit, outcomesOf(u, group, results));
      if (view.ops.length === 0 || (await applyConditionally(view))) {
        for (let i = 0; i < group.length; i++) group[i].resolve(results[i]);
        if (view.ops.length > 0) this.#o.onCommit();
        return;
      }
      if (units.length > 0) {
        // A follower may have fenced a committer epoch of this group (`thread-relay.ts`): its units
        // can never commit; answer them "not committed" and go on with the rest.
        this.#o.renewSnapshot();
        const fenced = new Set(units.filter((u) => this.#o.isFenced(u.unit.epoch)));
        if (fenced.size > 0) {
          for (const op of group) if (op.unit !== undefined && fenced.has(op.unit)) op.reject(FENCED);
          group = group.filter((op) => op.unit === undefined || !fenced.has(op.unit));
          for (const epoch of new Set([...fenced].map((u) => u.unit.epoch))) this.#o.onFenced(epoch);
          continue;
        }
      }
      if (attempt >= MAX_ATTEMPTS) {
        throw new LogStorageError(
          `log ${this.#o.dir}: a group of ${group.length} appends gave up after ${attempt} attempts: other writers kept changing what it read`,
        );
      }
    }
  }
}

/** The follower units of a group, in order. */
function unitsOf(group: QueuedOperation[]): UnitState[] {
  const units: UnitState[] = [];
  for (const op of group)
    if (op.unit !== undefined && units.at(-1) !== op.unit && !units.includes(op.unit)) units.push(op.unit);
  return units;
}

/** A unit's outcomes if this group commits: its operations here succeed, the others failed earlier. */
function outcomesOf(u: UnitState, group: QueuedOperation[], results: unknown[]): WireOutcome[] {
  const outcomes = [...u.outcomes];
  for (let i = 0; i < group.length; i++) {
    if (group[i].unit === u) outcomes[group[i].index as number] = succeeded(results[i]);
  }
  return outcomes as WireOutcome[];
}

function linger(ms: number): Promise<void> {
  return new Promise((resolve) => (ms === 0 ? setImmediate(resolve) : setTimeout(resolve, ms)));
}

/** Our own typed errors pass through; anything LMDB throws becomes a LogStorageError. */
export function asStorageError(error: unknown, dir: string): unknown {
  if (error instanceof WeirError) return error;
  return new LogStorageError(`log ${dir}: write transaction failed`, { cause: error });
}
