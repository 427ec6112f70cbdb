import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeCsvRow, parseCsvRecord } from '../../../src/connectors/formats/csv.js';
import { type RecordFraming, RecordScanner } from '../../../src/connectors/formats/record-scanner.js';
import { decodeRecord, encodeRecord } from '../../../src/connectors/formats/text-format.js';

interface Scanned {
  text: string;
  start: number;
  end: number;
  line: number;
  unterminatedQuote: boolean;
}

/** Scans `bytes` from `offset` (with `line` lines before it), pushing chunks of the given sizes. */
function scanAll(
  framing: RecordFraming,
  bytes: Uint8Array,
  chunkSizes: readonly number[] = [bytes.length || 1],
  offset = 0,
  line = 0,
): Scanned[] {
  const s = new RecordScanner(framing, offset, line);
  const out: Scanned[] = [];
  let at = offset;
  let i = 0;
  const drain = (eof: boolean) => {
    for (let r = s.next(eof); r; r = s.next(eof)) {
      out.push({
        text: Buffer.from(r.bytes).toString('utf8'),
        start: r.startOffset,
        end: r.endOffset,
        line: r.line,
        unterminatedQuote: r.unterminatedQuote,
      });
    }
  };
  while (at < bytes.length) {
    const size = Math.max(1, chunkSizes[i++ % chunkSizes.length]);
    s.push(bytes.subarray(at, Math.min(bytes.length, at + size)));
    at += size;
    drain(false);
  }
  drain(true);
  expect(s.offset).toBe(bytes.length);
  return out;
}

const enc = (s: string) => new TextEncoder().encode(s);

describe('RecordScanner: lines', () => {
  it('splits on \\n and \\r\\n with exact byte offsets and line numbers', () => {
    const bytes = enc('a\r\nbé\n\nlast');
    expect(scanAll('lines', bytes)).toEqual([
      { text: 'a', start: 0, end: 3, line: 1, unterminatedQuote: false },
      { text: 'bé', start: 3, end: 7, line: 2, unterminatedQuote: false },
      { text: '', start: 7, end: 8, line: 3, unterminatedQuote: false },
      { text: 'last', start: 8, end: 12, line: 4, unterminatedQuote: false },
    ]);
  });

  it('holds back a final line without newline until end of file', () => {
    const s = new RecordScanner('lines');
    s.push(enc('x\nyz'));
    expect(Buffer.from(s.next(false)!.bytes).toString()).toBe('x');
    expect(s.next(false)).toBeNull();
    expect(s.offset).toBe(2);
    s.push(enc('\n'));
    expect(Buffer.from(s.next(false)!.bytes).toString()).toBe('yz');
    expect(s.offset).toBe(5);
    expect(s.next(true)).toBeNull();
  });

  it('keeps multibyte characters split across chunks whole, for every chunk size', () => {
    const text = '€uro\n𝄞 clef\nñ\n日本語の行\n';
    const bytes = enc(text);
    const whole = scanAll('lines', bytes);
    expect(whole.map((r) => r.text)).toEqual(['€uro', '𝄞 clef', 'ñ', '日本語の行']);
    for (let size = 1; size <= bytes.length; size++) expect(scanAll('lines', bytes, [size])).toEqual(whole);
  });

  it('a record spanning many chunks (buffer growth) is exact', () => {
    const long = 'é'.repeat(150_000);
    const bytes = enc(`a\n${long}\nb\n`);
    expect(scanAll('lines', bytes, [1000, 70_000, 3]).map((r) => r.text)).toEqual(['a', long, 'b']);
  });

  it('skips a UTF-8 byte order mark at offset 0 only', () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...enc('a\n\ufeffb\n')]);
    const r = scanAll('lines', bytes, [1]);
    expect(r.map((x) => x.text)).toEqual(['a', '\ufeffb']);
    expect(r[0].start).toBe(3);
  });
});

describe('RecordScanner: csv', () => {
  it('keeps newlines inside quotes in the record and counts its lines', () => {
    const bytes = enc('id,text\r\n1,"two\r\nlines"\n2,"say ""hi"", ok"\n3,x');
    const r = scanAll('csv', bytes);
    expect(r.map((x) => [x.text, x.line])).toEqual([
      ['id,text', 1],
      ['1,"two\r\nlines"', 2],
      ['2,"say ""hi"", ok"', 4],
      ['3,x', 5],
    ]);
    expect(r[1]).toMatchObject({ start: 9, end: 24 });
  });

  it('a quote inside an unquoted field does not open a quoted section', () => {
    expect(scanAll('csv', enc('a"b,c\nd,e\n')).map((x) => x.text)).toEqual(['a"b,c', 'd,e']);
  });

  it('flags a record that ends inside quotes at end of file', () => {
    const r = scanAll('csv', enc('a,b\n1,"open\nmore'));
    expect(r[1]).toMatchObject({ text: '1,"open\nmore', unterminatedQuote: true, line: 2 });
  });

  it('honours another delimiter', () => {
    const s = new RecordScanner('csv', 0, 0, ';'.charCodeAt(0));
    s.push(enc('"a;\n";b\nc;d\n'));
    expect(Buffer.from(s.next(false)!.bytes).toString()).toBe('"a;\n";b');
  });
});

/** Text made of characters that exercise the scanner: terminators, quotes, multibyte. */
const trickyText = fc
  .array(fc.constantFrom('a', 'é', '€', '𝄞', ',', '"', '\n', '\r\n', '\r', ' ', '{', '}'), { maxLength: 60 })
  .map((parts) => parts.join(''));

describe('RecordScanner properties', () => {
  for (const framing of ['lines', 'csv'] as const) {
    it(`${framing}: chunking does not matter, and resuming at any recorded offset yields the same suffix`, () => {
      fc.assert(
        fc.property(
          trickyText,
          fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }),
          (text, sizes) => {
            const bytes = enc(text);
            const whole = scanAll(framing, bytes);
            expect(scanAll(framing, bytes, sizes)).toEqual(whole);
            // records tile the file (after a BOM) without gaps
            for (let i = 1; i < whole.length; i++) expect(whole[i].start).toBe(whole[i - 1].end);
            for (let i = 0; i < whole.length; i++) {
              const resumed = scanAll(
                framing,
                bytes,
                sizes,
                whole[i].end,
                whole[i].line - 1 + lineSpan(whole[i]),
              );
              expect(resumed).toEqual(whole.slice(i + 1));
            }
          },
        ),
        { numRuns: 300 },
      );
    });
  }
});

/** Lines a record consumed (the scanner's line counter advance). */
function lineSpan(r: Scanned): number {
  // body newlines, plus one for the terminator or the unterminated final line
  return (r.text.match(/\n/g)?.length ?? 0) + 1;
}

describe('parseCsvRecord', () => {
  it('parses RFC 4180 fields', () => {
    expect(parseCsvRecord('a,,"b,c","d ""q""","e\r\nf"')).toEqual({
      ok: true,
      fields: ['a', '', 'b,c', 'd "q"', 'e\r\nf'],
    });
    expect(parseCsvRecord(',')).toEqual({ ok: true, fields: ['', ''] });
    expect(parseCsvRecord('a;b', ';')).toEqual({ ok: true, fields: ['a', 'b'] });
  });

  it('names what is malformed', () => {
    expect(parseCsvRecord('a,b"c')).toEqual({
      ok: false,
      reason: expect.stringContaining('quote inside unquoted field 2'),
    });
    expect(parseCsvRecord('"a"x,b')).toEqual({
      ok: false,
      reason: expect.stringContaining('after the closing quote of field 1'),
    });
    expect(parseCsvRecord('a,"b')).toEqual({ ok: false, reason: 'unterminated quoted field 2' });
  });

  it('encode then scan then parse gives the fields back', () => {
    const field = fc.string({ unit: fc.constantFrom('a', ',', '"', '\n', '\r', 'é', ' '), maxLength: 8 });
    fc.assert(
      fc.property(fc.array(fc.array(field, { minLength: 1, maxLength: 4 }), { maxLength: 6 }), (rows) => {
        const text = rows.map((r) => encodeCsvRow(r)).join('');
        const records = scanAll('csv', enc(text));
        const parsed = records.map((r) => decodeRecord('csv', r.text));
        expect(parsed).toEqual(rows.map((fields) => ({ kind: 'value', value: fields })));
      }),
      { numRuns: 300 },
    );
  });
});

describe('decodeRecord / encodeRecord', () => {
  it('lines keep empty lines; jsonl and csv skip blank ones', () => {
    expect(decodeRecord('lines', '')).toEqual({ kind: 'value', value: '' });
    expect(decodeRecord('jsonl', '  ')).toEqual({ kind: 'blank' });
    expect(decodeRecord('csv', '')).toEqual({ kind: 'blank' });
  });

  it('jsonl reports invalid JSON', () => {
    expect(decodeRecord('jsonl', '{"a":1}')).toEqual({ kind: 'value', value: { a: 1 } });
    const bad = decodeRecord('jsonl', '{"a":');
    expect(bad.kind).toBe('malformed');
    expect(bad.kind === 'malformed' && bad.reason).toMatch(/^invalid JSON/);
  });

  it('encodes jsonl and csv (objects need a header)', () => {
    expect(encodeRecord('jsonl', { a: 1 }, undefined)).toEqual({ ok: true, text: '{"a":1}\n' });
    expect(encodeRecord('jsonl', undefined, undefined).ok).toBe(false);
    expect(encodeRecord('jsonl', 1n, undefined).ok).toBe(false);
    expect(encodeRecord('csv', { b: 'x,y', a: 1 }, ['a', 'b'])).toEqual({ ok: true, text: '1,"x,y"\n' });
    expect(encodeRecord('csv', { a: 1 }, undefined)).toEqual({
      ok: false,
      reason: expect.stringContaining('csv.header'),
    });
    expect(encodeRecord('csv', [1, 2], ['a'])).toEqual({
      ok: false,
      reason: expect.stringContaining('2 fields'),
    });
    expect(encodeRecord('csv', [''], undefined)).toEqual({ ok: true, text: '""\n' });
  });
});
