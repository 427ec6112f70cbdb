/**
 * The demo's click source: `sources.log` reading the topic the main thread is appending to, that
 * ends once each of its partitions has been read up to an end offset known up front.
 *
 * Why not `sources.log({ bounded: true })`: a bounded log source stops at the end offsets
 * observed when the job first starts, and the demo starts the job while the main thread is still
 * appending (like a service appending clicks from its request handlers). The demo knows how many
 * clicks it will append and to which partition each goes (`clickPartition`), hence every
 * partition's final end offset; so it reads unbounded (a caught-up reader idles and sees new
 * appends) and ends when its partitions reach those ends. Positions stay the log source's own
 * operator state (one entry per partition), read back through its `snapshotState`, so restores
 * and the end condition agree.
 *
 * The appender must not append beyond the announced ends (the demo appends exactly `n` clicks).
 */

import type { Collector } from '../api/functions.js';
import type { PollResult, Source, SourceContext, SourceReader } from '../api/source.js';
import type { LogSplit } from '../connectors/log-source.js';

const END: PollResult = { state: 'end' };

/** `inner` (an unbounded `sources.log`) ending at `endOf(partition)` in every partition. */
export function logUntilEnds<T>(inner: Source<T>, endOf: (partition: number) => number): Source<T> {
  return {
    type: `${inner.type}-until-known-ends`,
    bounded: true,
    createReader(ctx: SourceContext): SourceReader<T> {
      return new UntilEndsReader(inner.createReader(ctx), endOf);
    },
  };
}

class UntilEndsReader<T> implements SourceReader<T> {
  readonly #inner: SourceReader<T>;
  readonly #endOf: (partition: number) => number;

  constructor(inner: SourceReader<T>, endOf: (partition: number) => number) {
    this.#inner = inner;
    this.#endOf = endOf;
  }

  /** True when every partition this reader holds has been read up to its end (also when it holds none). */
  #reachedEnds(): boolean {
    const splits = this.#inner.snapshotState(0) as LogSplit[];
    return splits.every((s) => s.next >= this.#endOf(s.partition));
  }

  poll(out: Collector<T>, max: number): PollResult {
    if (this.#reachedEnds()) return END;
    return this.#inner.poll(out, max);
  }

  snapshotState(checkpointId: number): unknown[] {
    return this.#inner.snapshotState(checkpointId);
  }

  metrics(): Readonly<Record<string, number>> {
    return this.#inner.metrics?.() ?? {};
  }

  close(): void {
    this.#inner.close?.();
  }
}
