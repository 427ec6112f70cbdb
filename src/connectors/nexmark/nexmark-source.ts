/**
 * `sources.nexmark({ events, ratePerSec?, seed?, … })`: the Nexmark event stream (people,
 * auctions, bids; see `event-generator.ts`), bounded at `events` events.
 *
 * Splits: subtask `s` of `p` starts with the split of event numbers `s, s + p, s + 2p, …`, so
 * every subtask's share is spread evenly over event time and each subtask's output is in event
 * time order (up to the configured out-of-order groups). A split's position (`next`) is operator
 * state, snapshotted at every barrier; a restore regenerates from there (events are a pure
 * function of their number), also at another parallelism: the splits are then redistributed and
 * a subtask holding several emits them merged by event number, which keeps its output in order.
 */

import type { Collector } from '../../api/functions.js';
import type { PollResult, Source, SourceContext, SourceReader } from '../../api/source.js';
import { InvalidOptionError } from '../../errors.js';
import { nexmarkEvent } from './event-generator.js';
import { type GeneratorConfig, generatorConfig, type NexmarkOptions } from './generator-config.js';
import type { NexmarkEvent } from './nexmark-events.js';

/** Operator-state entry: the event numbers `next, next + stride, …` below `end` still to emit. */
export interface NexmarkSplit {
  readonly stride: number;
  readonly end: number;
  /** Next event number to emit; `next >= end` means the split is finished. */
  next: number;
}

const MORE: PollResult = { state: 'more' };
const END: PollResult = { state: 'end' };

export function nexmark(options: NexmarkOptions): Source<NexmarkEvent> {
  const config = generatorConfig(options);
  return {
    type: 'nexmark',
    bounded: true,
    createReader(ctx: SourceContext): SourceReader<NexmarkEvent> {
      const splits = ctx.restoredState
        ? ctx.restoredState.map((s) => restoredSplit(s, config))
        : [initialNexmarkSplit(config.events, ctx.subtaskIndex, ctx.parallelism)];
      const rate = config.ratePerSec === undefined ? undefined : config.ratePerSec / ctx.parallelism;
      return new NexmarkReader(config, splits, rate);
    },
  };
}

export function initialNexmarkSplit(events: number, subtask: number, parallelism: number): NexmarkSplit {
  return { stride: parallelism, end: events, next: subtask };
}

/** A snapshot entry checked against this job's configuration: a changed `events` is refused. */
function restoredSplit(entry: unknown, config: GeneratorConfig): NexmarkSplit {
  const s = entry as NexmarkSplit;
  if (
    typeof s !== 'object' ||
    s === null ||
    !Number.isSafeInteger(s.stride) ||
    s.stride < 1 ||
    !Number.isSafeInteger(s.next) ||
    s.end !== config.events
  ) {
    throw new InvalidOptionError(
      'nexmark.events',
      `the checkpoint's nexmark position ${JSON.stringify(entry)} does not belong to a stream of ${config.events} events; restore with the options the checkpoint was taken with`,
    );
  }
  return { stride: s.stride, end: s.end, next: s.next };
}

class NexmarkReader implements SourceReader<NexmarkEvent> {
  readonly #config: GeneratorConfig;
  readonly #splits: NexmarkSplit[];
  /** Records per ms for this subtask, or undefined when unlimited. */
  readonly #ratePerMs: number | undefined;
  #startedAt = 0;
  #emitted = 0;

  constructor(config: GeneratorConfig, splits: NexmarkSplit[], ratePerSec: number | undefined) {
    this.#config = config;
    this.#splits = splits;
    this.#ratePerMs = ratePerSec === undefined ? undefined : ratePerSec / 1000;
  }

  /** The unfinished split with the lowest next event number, or undefined when all are done. */
  #lowest(): NexmarkSplit | undefined {
    let best: NexmarkSplit | undefined;
    for (const s of this.#splits) if (s.next < s.end && (best === undefined || s.next < best.next)) best = s;
    return best;
  }

  poll(out: Collector<NexmarkEvent>, max: number): PollResult {
    let budget = max;
    if (this.#ratePerMs !== undefined) {
      const now = performance.now();
      if (this.#emitted === 0) this.#startedAt = now;
      const allowed = Math.floor((now - this.#startedAt) * this.#ratePerMs) + 1 - this.#emitted;
      if (allowed <= 0) return { state: 'idle', ms: Math.max(1, Math.ceil(1 / this.#ratePerMs)) };
      budget = Math.min(budget, allowed);
    }
    const config = this.#config;
    let emitted = 0;
    if (this.#splits.length === 1) {
      const split = this.#splits[0];
      if (split.next >= split.end) return END;
      for (; emitted < budget && split.next < split.end; emitted++) {
        const n = split.next;
        // `next` advances before the collect: a snapshot after a failure in chained downstream
        // code names exactly the events emitted.
        split.next = n + split.stride;
        out.collect(nexmarkEvent(config, n));
      }
    } else {
      for (; emitted < budget; emitted++) {
        const split = this.#lowest();
        if (split === undefined) break;
        const n = split.next;
        split.next = n + split.stride;
        out.collect(nexmarkEvent(config, n));
      }
      if (emitted === 0) return END;
    }
    this.#emitted += emitted;
    return MORE;
  }

  snapshotState(): unknown[] {
    return this.#splits.map((s) => ({ stride: s.stride, end: s.end, next: s.next }));
  }
}
