/**
 * `sources.sequence({ from, to, ratePerSec? })`: the integers `from` (inclusive) to `to`
 * (exclusive), split into one contiguous range per subtask. Replayable: each range is a split
 * whose position (`next`) is snapshotted as operator state at every barrier, so a restore
 * resumes exactly after the last record the checkpoint covers.
 */

import type { Collector } from '../api/functions.js';
import type { PollResult, Source, SourceContext, SourceReader } from '../api/source.js';
import { InvalidOptionError } from '../errors.js';

export interface SequenceOptions {
  readonly from: number;
  readonly to: number;
  /** Total records per second across all subtasks; unlimited when absent. */
  readonly ratePerSec?: number;
}

/** Operator-state entry: one split and how far it has been read. */
export interface SequenceSplit {
  readonly start: number;
  readonly end: number;
  /** Next value to emit; `next === end` means the split is finished. */
  next: number;
}

const MORE: PollResult = { state: 'more' };
const END: PollResult = { state: 'end' };

export function sequence(options: SequenceOptions): Source<number> {
  const { from, to, ratePerSec } = options ?? ({} as SequenceOptions);
  if (!Number.isSafeInteger(from))
    throw new InvalidOptionError('sequence.from', `must be a safe integer, got ${from}`);
  if (!Number.isSafeInteger(to))
    throw new InvalidOptionError('sequence.to', `must be a safe integer, got ${to}`);
  if (to < from) throw new InvalidOptionError('sequence.to', `must be ≥ from (${from}), got ${to}`);
  if (ratePerSec !== undefined && !(ratePerSec > 0 && Number.isFinite(ratePerSec))) {
    throw new InvalidOptionError(
      'sequence.ratePerSec',
      `must be a positive finite number, got ${ratePerSec}`,
    );
  }
  return {
    type: 'sequence',
    bounded: true,
    createReader(ctx: SourceContext): SourceReader<number> {
      const splits = ctx.restoredState
        ? (ctx.restoredState as SequenceSplit[]).map((s) => ({ ...s }))
        : [initialSplit(from, to, ctx.subtaskIndex, ctx.parallelism)];
      const rate = ratePerSec === undefined ? undefined : ratePerSec / ctx.parallelism;
      return new SequenceReader(splits, rate);
    },
  };
}

export function initialSplit(from: number, to: number, subtask: number, parallelism: number): SequenceSplit {
  const n = to - from;
  const start = from + Math.floor((subtask * n) / parallelism);
  const end = from + Math.floor(((subtask + 1) * n) / parallelism);
  return { start, end, next: start };
}

class SequenceReader implements SourceReader<number> {
  readonly #splits: SequenceSplit[];
  #current = 0;
  /** Records per ms for this subtask, or undefined when unlimited. */
  readonly #ratePerMs: number | undefined;
  #startedAt = 0;
  #emitted = 0;

  constructor(splits: SequenceSplit[], ratePerSec: number | undefined) {
    this.#splits = splits;
    this.#ratePerMs = ratePerSec === undefined ? undefined : ratePerSec / 1000;
  }

  poll(out: Collector<number>, max: number): PollResult {
    while (
      this.#current < this.#splits.length &&
      this.#splits[this.#current].next >= this.#splits[this.#current].end
    ) {
      this.#current++;
    }
    if (this.#current >= this.#splits.length) return END;
    let budget = max;
    if (this.#ratePerMs !== undefined) {
      const now = performance.now();
      if (this.#emitted === 0) this.#startedAt = now;
      const allowed = Math.floor((now - this.#startedAt) * this.#ratePerMs) + 1 - this.#emitted;
      if (allowed <= 0) return { state: 'idle', ms: Math.max(1, Math.ceil(1 / this.#ratePerMs)) };
      budget = Math.min(budget, allowed);
    }
    const split = this.#splits[this.#current];
    const first = split.next;
    const stop = Math.min(split.end, first + budget);
    // `next` advances per record so that a snapshot taken after a failure inside downstream
    // chained code still names exactly the records that were emitted.
    for (let v = first; v < stop; v++) {
      split.next = v + 1;
      out.collect(v);
    }
    this.#emitted += stop - first;
    return MORE;
  }

  snapshotState(): unknown[] {
    return this.#splits.map((s) => ({ start: s.start, end: s.end, next: s.next }));
  }
}
