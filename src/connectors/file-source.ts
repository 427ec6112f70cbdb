/**
 * `sources.file({ path | paths | glob, format, csv?, follow?, onError?, deadLetter? })`: records
 * from text files (`lines`, `jsonl` or `csv`, see `formats/text-format.ts`).
 *
 * Splits and positions: every file is a split. On a fresh start the files (sorted by path) are
 * dealt round-robin to the subtasks. A split's position is the byte offset just after the last
 * record consumed (emitted, skipped or blank) plus the number of lines before it; every split is
 * one operator-state entry ({@link FileSplitState}), so a restore, also at another parallelism,
 * resumes each file exactly where the checkpoint was: the records before the offset are covered
 * by the checkpoint, the ones after it are read again.
 *
 * Reading: `fs.readSync` in chunks of {@link CHUNK_BYTES}, at most {@link MAX_READS_PER_POLL} per
 * poll, and at most `max` records per poll, so a poll never blocks for long. Bounded files are
 * read one after another; a final line without a newline is a record at end of file. With
 * `follow: true` the source is unbounded: all files are open, read round-robin, and polled again
 * after {@link FOLLOW_IDLE_MS} when all are at their end; a final line is emitted only once its
 * newline arrives. The file set is fixed at start (a glob is not re-evaluated). A file that is
 * missing, unreadable, vanishes or is truncated or replaced while followed is a
 * {@link FileSourceError} naming it.
 *
 * Malformed records (invalid UTF-8, invalid JSON, bad CSV quoting, a CSV row whose field count
 * differs from the header): `onError: 'fail'` (default) fails the task with a
 * {@link MalformedRecordError} naming file, line and reason; `'skip'` consumes the record, counts
 * it in `metrics().skippedLines` and, with `deadLetter`, writes a {@link DeadLetter} to that sink
 * (driven in this task by the source operator, exactly-once with the positions). A malformed
 * CSV header always fails: nothing after it could be read.
 *
 * `metrics()`: `records` (emitted), `skippedLines`, `bytesRead` (this attempt's reads; a restore
 * re-reads from the checkpointed offsets).
 *
 * A restored subtask reads exactly the splits in its share of the restored state (possibly none);
 * the path options are not consulted again, so the file set stays that of the first start.
 *
 * One file (over 400 lines) because options, split assignment and the reader implement one
 * contract (the split state) that is easier to check in one place.
 */

import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { globSync } from 'tinyglobby';
import type { CommittingSink } from '../api/committing-sink.js';
import type { Collector } from '../api/functions.js';
import type { PollResult, Sink, SourceLag, SourceReader } from '../api/source.js';
import { FileSourceError, InvalidOptionError, MalformedRecordError } from '../errors.js';
import type { DeadLetter, DeadLetterSource, DeadLetterSourceContext } from './dead-letter.js';
import { RecordScanner, type ScannedRecord } from './formats/record-scanner.js';
import { decodeRecord, TEXT_FORMATS, type TextFormat } from './formats/text-format.js';

export interface FileSourceOptions {
  /** One file. Exactly one of `path`, `paths`, `glob` is required; relative paths use the cwd. */
  readonly path?: string;
  readonly paths?: readonly string[];
  /** A glob (tinyglobby syntax) evaluated once at start; it must match at least one file. */
  readonly glob?: string;
  readonly format: TextFormat;
  readonly csv?: {
    /** The first record is a header: records become objects keyed by its names. Default false. */
    readonly header?: boolean;
    /** One ASCII character other than `"`, `\r`, `\n`. Default `,`. */
    readonly delimiter?: string;
  };
  /** Tail the files (unbounded). Default false. */
  readonly follow?: boolean;
  /** What a malformed record does. Default `'fail'`. */
  readonly onError?: 'fail' | 'skip';
  /** Where skipped records go (only with `onError: 'skip'`). */
  readonly deadLetter?: Sink<DeadLetter> | CommittingSink<DeadLetter, any>;
}

/** Operator-state entry: one file and how far it has been consumed. */
export interface FileSplitState {
  /** Absolute path. */
  readonly file: string;
  /** Byte offset after the last consumed record. */
  readonly offset: number;
  /** Lines before `offset`. */
  readonly line: number;
  /** CSV with header: the header, once read (the offset is then past it). */
  readonly header?: readonly string[];
}

/** Bytes per read. */
export const CHUNK_BYTES = 64 * 1024;
/** Reads per poll: bounds the time one poll spends on I/O (~1 MiB). */
export const MAX_READS_PER_POLL = 16;
/** A record may not exceed this many bytes (a missing newline would otherwise buffer the file). */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;
/** Poll interval of a followed file at its end. */
export const FOLLOW_IDLE_MS = 50;

const MORE: PollResult = { state: 'more' };
const END: PollResult = { state: 'end' };
const IDLE: PollResult = { state: 'idle', ms: FOLLOW_IDLE_MS };

export function file<T = unknown>(options: FileSourceOptions): DeadLetterSource<T> {
  const o = options ?? ({} as FileSourceOptions);
  const given = (['path', 'paths', 'glob'] as const).filter((k) => o[k] !== undefined);
  if (given.length !== 1) {
    throw new InvalidOptionError(
      'sources.file',
      `exactly one of path, paths, glob is required, got ${given.length === 0 ? 'none' : given.join(', ')}`,
    );
  }
  if (o.path !== undefined && (typeof o.path !== 'string' || o.path === '')) {
    throw new InvalidOptionError('sources.file.path', 'must be a non-empty string');
  }
  if (
    o.paths !== undefined &&
    (!Array.isArray(o.paths) ||
      o.paths.length === 0 ||
      o.paths.some((p) => typeof p !== 'string' || p === ''))
  ) {
    throw new InvalidOptionError('sources.file.paths', 'must be a non-empty array of non-empty strings');
  }
  if (o.glob !== undefined && (typeof o.glob !== 'string' || o.glob === '')) {
    throw new InvalidOptionError('sources.file.glob', 'must be a non-empty string');
  }
  if (!TEXT_FORMATS.includes(o.format)) {
    throw new InvalidOptionError(
      'sources.file.format',
      `must be one of ${TEXT_FORMATS.join(', ')}, got ${String(o.format)}`,
    );
  }
  if (o.csv !== undefined && o.format !== 'csv') {
    throw new InvalidOptionError(
      'sources.file.csv',
      `applies to format 'csv' only, the format is '${o.format}'`,
    );
  }
  const delimiter = o.csv?.delimiter ?? ',';
  if (
    typeof delimiter !== 'string' ||
    delimiter.length !== 1 ||
    delimiter.charCodeAt(0) > 0x7f ||
    '"\r\n'.includes(delimiter)
  ) {
    throw new InvalidOptionError(
      'sources.file.csv.delimiter',
      `must be one ASCII character other than a quote or a line break, got ${JSON.stringify(delimiter)}`,
    );
  }
  if (o.csv?.header !== undefined && typeof o.csv.header !== 'boolean') {
    throw new InvalidOptionError('sources.file.csv.header', 'must be a boolean');
  }
  if (o.follow !== undefined && typeof o.follow !== 'boolean') {
    throw new InvalidOptionError('sources.file.follow', 'must be a boolean');
  }
  const onError = o.onError ?? 'fail';
  if (onError !== 'fail' && onError !== 'skip') {
    throw new InvalidOptionError('sources.file.onError', `must be 'fail' or 'skip', got ${String(onError)}`);
  }
  if (o.deadLetter !== undefined) {
    if (
      typeof o.deadLetter !== 'object' ||
      o.deadLetter === null ||
      typeof o.deadLetter.createWriter !== 'function'
    ) {
      throw new InvalidOptionError(
        'sources.file.deadLetter',
        'must be a sink, e.g. sinks.file({ dir, format })',
      );
    }
    if (onError !== 'skip') {
      throw new InvalidOptionError(
        'sources.file.deadLetter',
        "needs onError: 'skip' (with 'fail' nothing is skipped)",
      );
    }
  }
  // Resolved here, in the thread that built the job: worker threads share the process cwd.
  const cwd = process.cwd();
  const explicit = o.path !== undefined ? [o.path] : o.paths;
  const config: ReaderConfig = {
    format: o.format,
    header: o.csv?.header ?? false,
    delimiter,
    follow: o.follow ?? false,
    onError,
  };
  return {
    type: 'file',
    bounded: !config.follow,
    deadLetter: o.deadLetter,
    createReader(ctx: DeadLetterSourceContext): SourceReader<T> {
      let splits: FileSplitState[];
      if (ctx.restoredState !== undefined) {
        splits = (ctx.restoredState as FileSplitState[]).map((s) => ({ ...s }));
      } else {
        const files = explicit
          ? [...new Set(explicit.map((p) => resolve(cwd, p)))].sort()
          : globSync(o.glob!, { cwd, absolute: true, onlyFiles: true }).sort();
        if (files.length === 0) throw new FileSourceError(resolve(cwd, o.glob!), 'the glob matches no file');
        splits = files
          .filter((_, i) => i % ctx.parallelism === ctx.subtaskIndex)
          .map((f) => ({ file: f, offset: 0, line: 0 }));
      }
      return new FileReader<T>(splits, config, ctx.deadLetters);
    },
  };
}

interface ReaderConfig {
  readonly format: TextFormat;
  readonly header: boolean;
  readonly delimiter: string;
  readonly follow: boolean;
  readonly onError: 'fail' | 'skip';
}

/** A split being read. `scanner.offset`/`scanner.line` are its position. */
interface OpenSplit {
  readonly file: string;
  readonly scanner: RecordScanner;
  header: readonly string[] | undefined;
  fd: number | null;
  ino: number;
  /** File offset of the next read: `scanner.offset + scanner.buffered`. */
  readPos: number;
  /** A bounded file was read to its end. */
  eof: boolean;
  done: boolean;
}

class FileReader<T> implements SourceReader<T> {
  readonly #splits: OpenSplit[];
  readonly #config: ReaderConfig;
  readonly #deadLetters: Collector<DeadLetter> | undefined;
  /** Bounded: the split being read. Follow: where the round-robin continues. */
  #current = 0;
  #skippedLines = 0;
  #records = 0;
  #bytesRead = 0;
  /** Strict: invalid UTF-8 makes a record malformed. `ignoreBOM`: only the scanner strips a BOM (at offset 0). */
  readonly #utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  /** Read buffer; the scanner copies what it keeps. */
  readonly #chunk = Buffer.allocUnsafe(CHUNK_BYTES);

  constructor(
    splits: FileSplitState[],
    config: ReaderConfig,
    deadLetters: Collector<DeadLetter> | undefined,
  ) {
    this.#config = config;
    this.#deadLetters = deadLetters;
    const framing = config.format === 'csv' ? 'csv' : 'lines';
    const delimiterByte = config.delimiter.charCodeAt(0);
    this.#splits = splits.map((s) => ({
      file: s.file,
      scanner: new RecordScanner(framing, s.offset, s.line, delimiterByte),
      header: s.header,
      fd: null,
      ino: 0,
      readPos: s.offset,
      eof: false,
      done: false,
    }));
  }

  poll(out: Collector<T>, max: number): PollResult {
    return this.#config.follow ? this.#pollFollow(out, max) : this.#pollBounded(out, max);
  }

  #pollBounded(out: Collector<T>, max: number): PollResult {
    let emitted = 0;
    let reads = 0;
    while (emitted < max) {
      while (this.#current < this.#splits.length && this.#splits[this.#current].done) this.#current++;
      if (this.#current >= this.#splits.length) return END;
      const split = this.#splits[this.#current];
      const record = split.scanner.next(split.eof);
      if (record) {
        if (this.#handle(split, record, out)) emitted++;
        continue;
      }
      if (split.eof) {
        this.#closeSplit(split);
        split.done = true;
        continue;
      }
      if (reads >= MAX_READS_PER_POLL) break;
      reads++;
      if (this.#read(split) === 0) split.eof = true;
    }
    return MORE;
  }

  #pollFollow(out: Collector<T>, max: number): PollResult {
    let emitted = 0;
    let reads = 0;
    // Splits found at their end in a row: once every split is, the source is idle.
    let atEnd = 0;
    const n = this.#splits.length;
    if (n === 0) return IDLE;
    while (emitted < max && atEnd < n) {
      const split = this.#splits[this.#current % n];
      const record = split.scanner.next(false);
      if (record) {
        if (this.#handle(split, record, out)) emitted++;
        atEnd = 0;
        continue;
      }
      if (reads >= MAX_READS_PER_POLL) {
        this.#current = (this.#current + 1) % n; // a busy file must not starve the others
        return MORE;
      }
      reads++;
      if (this.#read(split) === 0) {
        this.#checkFollowed(split);
        atEnd++;
        this.#current = (this.#current + 1) % n;
      } else {
        atEnd = 0;
      }
    }
    return emitted > 0 || atEnd < n ? MORE : IDLE;
  }

  /** Reads the next chunk of `split` into its scanner; returns the bytes read (0 at end of file). */
  #read(split: OpenSplit): number {
    if (split.fd === null) this.#openSplit(split);
    if (split.scanner.buffered > MAX_RECORD_BYTES) {
      throw new FileSourceError(
        split.file,
        `the record at line ${split.scanner.line + 1} exceeds ${MAX_RECORD_BYTES} bytes (no line end found)`,
      );
    }
    const chunk = this.#chunk;
    let n: number;
    try {
      n = readSync(split.fd!, chunk, 0, CHUNK_BYTES, split.readPos);
    } catch (e) {
      throw new FileSourceError(split.file, `cannot be read: ${(e as Error).message}`, { cause: e });
    }
    if (n > 0) {
      split.scanner.push(chunk.subarray(0, n));
      split.readPos += n;
      this.#bytesRead += n;
    }
    return n;
  }

  #openSplit(split: OpenSplit): void {
    try {
      split.fd = openSync(split.file, 'r');
      const st = fstatSync(split.fd);
      split.ino = st.ino;
      if (st.size < split.readPos) {
        throw new FileSourceError(
          split.file,
          `is ${st.size} bytes, shorter than the restored position ${split.readPos}: it was truncated or replaced`,
        );
      }
    } catch (e) {
      if (e instanceof FileSourceError) throw e;
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'does not exist' : `cannot be opened: ${(e as Error).message}`;
      throw new FileSourceError(split.file, why, { cause: e });
    }
  }

  /** A followed file at its end: still the same file, and not shorter than what was read? */
  #checkFollowed(split: OpenSplit): void {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(split.file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new FileSourceError(
        split.file,
        code === 'ENOENT' ? 'vanished while followed' : `cannot be read: ${(e as Error).message}`,
        { cause: e },
      );
    }
    if (st.ino !== split.ino)
      throw new FileSourceError(split.file, 'was replaced while followed (rotation is not supported)');
    if (st.size < split.readPos) {
      throw new FileSourceError(
        split.file,
        `was truncated while followed (${st.size} bytes, ${split.readPos} already read)`,
      );
    }
  }

  #closeSplit(split: OpenSplit): void {
    if (split.fd === null) return;
    const fd = split.fd;
    split.fd = null;
    closeSync(fd);
  }

  /** Decodes one record and emits, skips or rejects it. True when a record was emitted. */
  #handle(split: OpenSplit, record: ScannedRecord, out: Collector<T>): boolean {
    const { format, delimiter } = this.#config;
    let text: string;
    try {
      text = this.#utf8.decode(record.bytes);
    } catch {
      return this.#reject(split, record, Buffer.from(record.bytes).toString('utf8'), 'invalid UTF-8');
    }
    if (record.unterminatedQuote)
      return this.#reject(split, record, text, 'unterminated quoted field at end of file');
    const decoded = decodeRecord(format, text, delimiter);
    if (decoded.kind === 'blank') return false;
    if (decoded.kind === 'malformed') return this.#reject(split, record, text, decoded.reason);
    let value = decoded.value;
    if (format === 'csv' && this.#config.header) {
      const fields = value as string[];
      if (split.header === undefined) {
        split.header = fields;
        return false;
      }
      if (fields.length !== split.header.length) {
        return this.#reject(
          split,
          record,
          text,
          `expected ${split.header.length} fields (as the header), got ${fields.length}`,
        );
      }
      const obj: Record<string, string> = {};
      for (let i = 0; i < fields.length; i++) obj[split.header[i]] = fields[i];
      value = obj;
    }
    this.#records++;
    out.collect(value as T);
    return true;
  }

  #reject(split: OpenSplit, record: ScannedRecord, text: string, reason: string): boolean {
    const headerPending = this.#config.format === 'csv' && this.#config.header && split.header === undefined;
    if (this.#config.onError === 'fail' || headerPending) {
      throw new MalformedRecordError(split.file, record.line, headerPending ? `header: ${reason}` : reason);
    }
    this.#skippedLines++;
    this.#deadLetters?.collect({ file: split.file, line: record.line, reason, text });
    return false;
  }

  snapshotState(): unknown[] {
    return this.#splits.map((s): FileSplitState => {
      const entry: FileSplitState = { file: s.file, offset: s.scanner.offset, line: s.scanner.line };
      return s.header === undefined ? entry : { ...entry, header: s.header };
    });
  }

  metrics(): Readonly<Record<string, number>> {
    return { records: this.#records, skippedLines: this.#skippedLines, bytesRead: this.#bytesRead };
  }

  /**
   * Bytes of this subtask's files not yet consumed (file size minus position), one `fstat` per
   * open file and one `stat` per file not opened yet. A file that cannot be stat'ed (not there
   * yet, or removed) makes the lag unknown: the read itself reports that failure.
   */
  lag(): SourceLag | undefined {
    let value = 0;
    for (const split of this.#splits) {
      if (split.done) continue;
      let size: number;
      try {
        size = split.fd !== null ? fstatSync(split.fd).size : statSync(split.file).size;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
      value += Math.max(0, size - split.scanner.offset);
    }
    return { value, unit: 'bytes' };
  }

  close(): void {
    for (const s of this.#splits) this.#closeSplit(s);
  }
}
