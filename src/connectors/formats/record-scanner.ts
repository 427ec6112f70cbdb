/**
 * Splits the bytes of a text file into records with exact byte offsets, incrementally: bytes
 * arrive in chunks of any size and a record is handed out only once it is complete, so the
 * offset after it is a position from which reading can resume (a file source's checkpointed
 * position).
 *
 * Splitting works on bytes, never on decoded text: the bytes that end a record (`\n`, and for
 * CSV `"` and the delimiter) are ASCII and never occur inside a UTF-8 multibyte sequence, so a
 * chunk boundary inside a character cannot split a record wrongly, and each record is decoded
 * whole. `\r\n` and `\n` both end a line. A UTF-8 byte order mark at offset 0 is skipped.
 *
 * - `lines` (also used for JSON Lines): a record is one physical line.
 * - `csv`: RFC 4180 records: a newline inside a quoted field does not end the record. The scan
 *   keeps its state between chunks, so a long quoted field is scanned once, not per chunk.
 *
 * Cost: O(bytes) per record plus one copy of the unconsumed tail per pushed chunk.
 */

/** How records are delimited. */
export type RecordFraming = 'lines' | 'csv';

/** One complete record. Offsets are file offsets; `line` numbers are 1-based. */
export interface ScannedRecord {
  /**
   * The record's bytes without its line terminator (`\n` or `\r\n`). A view of the scanner's
   * buffer, valid until the next {@link RecordScanner.push}: decode or copy it before.
   */
  readonly bytes: Uint8Array;
  /** File offset of the record's first byte. */
  readonly startOffset: number;
  /** File offset just after the record and its terminator: where reading resumes. */
  readonly endOffset: number;
  /** Line number of the record's first line. */
  readonly line: number;
  /** A CSV record that ended inside a quoted field (only at the end of a bounded file). */
  readonly unterminatedQuote: boolean;
}

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const EMPTY = Buffer.alloc(0);
/** Smallest backing store allocated by {@link RecordScanner.push}. */
const MIN_STORE_BYTES = 64 * 1024;

/** CSV scan states, as in RFC 4180's grammar. */
enum Csv {
  FieldStart = 0,
  Unquoted = 1,
  Quoted = 2,
  /** Saw `"` inside a quoted field: an escaped quote (`""`) or the closing quote. */
  QuoteInQuoted = 3,
}

export class RecordScanner {
  /** Buffered bytes, a view of `#store`; `#buf[#pos]` is the first byte not yet handed out. */
  #buf: Buffer = EMPTY;
  /** Backing memory of `#buf`, with room to append after it. */
  #store: Buffer = EMPTY;
  #pos = 0;
  /** File offset of `#buf[#pos]`. Invariant: the offset after the last record handed out. */
  #offset: number;
  /** Lines consumed before `#offset`. */
  #line: number;
  /** CSV only: `#buf` index from which the scan continues, and the state there. */
  #scan = 0;
  #csv: Csv = Csv.FieldStart;
  #bomChecked: boolean;
  readonly #delimiter: number;

  /**
   * @param offset file offset the first pushed byte has (a restored position, or 0)
   * @param line lines before `offset`
   * @param delimiter CSV field delimiter, one ASCII byte
   */
  constructor(
    readonly framing: RecordFraming,
    offset = 0,
    line = 0,
    delimiter = 0x2c,
  ) {
    this.#offset = offset;
    this.#line = line;
    this.#bomChecked = offset !== 0;
    this.#delimiter = delimiter;
  }

  /** File offset after the last record handed out (or skipped BOM). */
  get offset(): number {
    return this.#offset;
  }
  /** Lines consumed before {@link offset}. */
  get line(): number {
    return this.#line;
  }
  /** Bytes pushed but not yet handed out as records. */
  get buffered(): number {
    return this.#buf.length - this.#pos;
  }

  /**
   * Appends the next bytes of the file (copied). Amortized O(chunk): bytes are appended in place
   * while the store has room, and the store grows geometrically, so a record spanning many
   * chunks is not copied once per chunk.
   */
  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    const rest = this.#buf.length - this.#pos;
    const store = this.#store;
    const end = this.#buf.byteOffset - store.byteOffset + this.#buf.length;
    if (rest > 0 && store.length - end >= chunk.length) {
      // Room after the unconsumed bytes: append in place (views handed out earlier end before).
      store.set(chunk, end);
      this.#buf = store.subarray(this.#buf.byteOffset - store.byteOffset, end + chunk.length);
      return;
    }
    const size = rest + chunk.length;
    if (rest === 0 && store.length >= size) {
      // Everything was handed out: reuse the store from its start.
      store.set(chunk, 0);
      this.#buf = store.subarray(0, size);
    } else {
      const next = Buffer.allocUnsafe(Math.max(MIN_STORE_BYTES, rest > 0 ? size * 2 : size));
      this.#buf.copy(next, 0, this.#pos);
      next.set(chunk, rest);
      this.#store = next;
      this.#buf = next.subarray(0, size);
    }
    this.#scan -= this.#pos;
    if (this.#scan < 0) this.#scan = 0;
    this.#pos = 0;
  }

  /**
   * The next complete record, or `null` when more bytes are needed. With `eof` (the file ends
   * where the pushed bytes end), a final record without a terminator is handed out too.
   */
  next(eof: boolean): ScannedRecord | null {
    if (!this.#bomChecked) {
      if (this.buffered < 3 && !eof) return null;
      const b = this.#buf;
      const p = this.#pos;
      if (this.buffered >= 3 && b[p] === 0xef && b[p + 1] === 0xbb && b[p + 2] === 0xbf) {
        this.#pos += 3;
        this.#offset += 3;
        if (this.#scan < this.#pos) this.#scan = this.#pos;
      }
      this.#bomChecked = true;
    }
    return this.framing === 'lines' ? this.#nextLine(eof) : this.#nextCsv(eof);
  }

  #nextLine(eof: boolean): ScannedRecord | null {
    const buf = this.#buf;
    const nl = buf.indexOf(LF, this.#pos);
    if (nl === -1) {
      if (!eof || this.#pos >= buf.length) return null;
      return this.#take(buf.length, buf.length, false, false);
    }
    return this.#take(nl, nl + 1, true, false);
  }

  #nextCsv(eof: boolean): ScannedRecord | null {
    const buf = this.#buf;
    const delimiter = this.#delimiter;
    let state = this.#csv;
    for (let i = Math.max(this.#scan, this.#pos); i < buf.length; i++) {
      const b = buf[i];
      switch (state) {
        case Csv.FieldStart:
        case Csv.Unquoted:
          if (b === LF) {
            this.#csv = Csv.FieldStart;
            this.#scan = i + 1;
            return this.#take(i, i + 1, true, false);
          }
          if (b === delimiter) state = Csv.FieldStart;
          else if (b === QUOTE && state === Csv.FieldStart) state = Csv.Quoted;
          else state = Csv.Unquoted;
          break;
        case Csv.Quoted:
          if (b === QUOTE) state = Csv.QuoteInQuoted;
          break;
        case Csv.QuoteInQuoted:
          if (b === LF) {
            this.#csv = Csv.FieldStart;
            this.#scan = i + 1;
            return this.#take(i, i + 1, true, false);
          }
          if (b === QUOTE) state = Csv.Quoted;
          else if (b === delimiter) state = Csv.FieldStart;
          else state = Csv.Unquoted; // malformed; the field parser reports it
          break;
      }
    }
    this.#csv = state;
    this.#scan = buf.length;
    if (!eof || this.#pos >= buf.length) return null;
    this.#csv = Csv.FieldStart;
    return this.#take(buf.length, buf.length, false, state === Csv.Quoted);
  }

  /** Hands out `#buf[#pos, bodyEnd)` (minus a trailing `\r`) and consumes up to `end`. */
  #take(bodyEnd: number, end: number, terminated: boolean, unterminatedQuote: boolean): ScannedRecord {
    const buf = this.#buf;
    const start = this.#pos;
    let stop = bodyEnd;
    if (stop > start && buf[stop - 1] === CR && !unterminatedQuote) stop--;
    let newlines = 0;
    if (this.framing === 'csv') {
      for (let i = start; i < end; i++) if (buf[i] === LF) newlines++;
    } else if (terminated) {
      newlines = 1;
    }
    if (!terminated) newlines++; // a final line without a terminator is still a line
    const record: ScannedRecord = {
      bytes: buf.subarray(start, stop),
      startOffset: this.#offset,
      endOffset: this.#offset + (end - start),
      line: this.#line + 1,
      unterminatedQuote,
    };
    this.#offset = record.endOffset;
    this.#line += newlines;
    this.#pos = end;
    if (this.#scan < end) this.#scan = end;
    return record;
  }
}
