/**
 * Dead letters: input records a source rejected (`onError: 'skip'`) and hands to a sink of the
 * user's choice. The dead-letter sink is a real {@link Sink}, driven by the source operator in
 * the source's own task: its writer is created with the reader, pre-commits in the source's
 * snapshot, and commits on the same checkpoint notifications, so dead letters are exactly-once
 * too. Its snapshot entries travel inside the source's operator state, wrapped so that restore
 * can tell them from the source's own entries.
 */

import type { CommittingSink } from '../api/committing-sink.js';
import type { Collector } from '../api/functions.js';
import type { Sink, Source, SourceContext, SourceReader } from '../api/source.js';

/** A rejected record as written to the dead-letter sink. */
export interface DeadLetter {
  /** The file (or other input) it came from. */
  readonly file: string;
  /** 1-based line number of the record's first line. */
  readonly line: number;
  /** Why it was rejected. */
  readonly reason: string;
  /** The record's text (without its line terminator). */
  readonly text: string;
}

/** What a source with a dead-letter sink gets from the source operator besides the usual context. */
export interface DeadLetterSourceContext extends SourceContext {
  /** Where to write dead letters; `undefined` when the source has no dead-letter sink. */
  readonly deadLetters?: Collector<DeadLetter>;
}

/** A source that may name a dead-letter sink. */
export interface DeadLetterSource<T> extends Source<T> {
  readonly deadLetter: DeadLetterSink | undefined;
  createReader(ctx: DeadLetterSourceContext): SourceReader<T>;
}

/** A dead-letter sink: a writer sink, or a committing one (`sinks.file`, `sinks.custom`). */
export type DeadLetterSink = Sink<DeadLetter> | CommittingSink<DeadLetter, unknown>;

export function deadLetterSinkOf(source: Source<unknown>): DeadLetterSink | undefined {
  return (source as Partial<DeadLetterSource<unknown>>).deadLetter ?? undefined;
}

/** Operator-state entry of the source operator that holds one entry of its dead-letter sink. */
export interface DeadLetterStateEntry {
  readonly deadLetterSinkState: unknown;
}

export function isDeadLetterStateEntry(entry: unknown): entry is DeadLetterStateEntry {
  return typeof entry === 'object' && entry !== null && 'deadLetterSinkState' in entry;
}
