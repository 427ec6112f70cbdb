/**
 * Record formats of the file connectors: how one record's text becomes a value (sources) and
 * how a value becomes text (sinks).
 *
 * - `lines`: each line is a string record, empty lines included (`''`): in a plain line format
 *   an empty line is data.
 * - `jsonl`: each line is one JSON value; blank (whitespace-only) lines are skipped.
 * - `csv`: RFC 4180 (see `csv.ts`); empty lines are skipped. Records are `string[]`, or objects
 *   keyed by the header row's names when the file has a header.
 */

import { encodeCsvRow, parseCsvRecord } from './csv.js';

export type TextFormat = 'lines' | 'jsonl' | 'csv';
export const TEXT_FORMATS: readonly TextFormat[] = ['lines', 'jsonl', 'csv'];

/** What one record's text turned out to be. */
export type DecodedRecord =
  | { readonly kind: 'value'; readonly value: unknown }
  /** A blank line the format skips (jsonl, csv): consumed, neither a record nor an error. */
  | { readonly kind: 'blank' }
  | { readonly kind: 'malformed'; readonly reason: string };

const BLANK: DecodedRecord = { kind: 'blank' };

/** Decodes the text of one record (a line, or a CSV record) as `format`. CSV gives `string[]`. */
export function decodeRecord(format: TextFormat, text: string, csvDelimiter = ','): DecodedRecord {
  switch (format) {
    case 'lines':
      return { kind: 'value', value: text };
    case 'jsonl': {
      if (text.trim() === '') return BLANK;
      try {
        return { kind: 'value', value: JSON.parse(text) };
      } catch (e) {
        return { kind: 'malformed', reason: `invalid JSON: ${(e as Error).message}` };
      }
    }
    case 'csv': {
      if (text === '') return BLANK;
      const r = parseCsvRecord(text, csvDelimiter);
      return r.ok ? { kind: 'value', value: r.fields } : { kind: 'malformed', reason: r.reason };
    }
    default: {
      const never: never = format;
      throw new RangeError(`unknown text format ${String(never)}`);
    }
  }
}

/** Outcome of encoding one value for a sink. */
export type EncodedRecord =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly reason: string };

/**
 * Encodes one value as a line (with its `\n`). jsonl: `JSON.stringify`. csv: an array is a row;
 * with `header`, an object's properties are taken in header order (an array must match its
 * length); without a header an object has no defined column order and is refused.
 */
export function encodeRecord(
  format: 'jsonl' | 'csv',
  value: unknown,
  header: readonly string[] | undefined,
  csvDelimiter = ',',
): EncodedRecord {
  if (format === 'jsonl') {
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch (e) {
      return { ok: false, reason: `cannot be encoded as JSON: ${(e as Error).message}` };
    }
    if (text === undefined) return { ok: false, reason: `cannot be encoded as JSON: ${typeof value}` };
    return { ok: true, text: `${text}\n` };
  }
  if (Array.isArray(value)) {
    if (header && value.length !== header.length) {
      return { ok: false, reason: `row has ${value.length} fields, the header has ${header.length}` };
    }
    return { ok: true, text: encodeCsvRow(value, csvDelimiter) };
  }
  if (typeof value === 'object' && value !== null) {
    if (!header) return { ok: false, reason: 'an object record needs csv.header (the column order)' };
    const row = header.map((h) => (value as Record<string, unknown>)[h]);
    return { ok: true, text: encodeCsvRow(row, csvDelimiter) };
  }
  if (header && header.length !== 1) {
    return { ok: false, reason: `a single value is one field, the header has ${header.length}` };
  }
  return { ok: true, text: encodeCsvRow([value], csvDelimiter) };
}
