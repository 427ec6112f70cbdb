/**
 * CSV fields per RFC 4180: fields separated by a one-character delimiter, optionally enclosed
 * in double quotes; inside quotes, `""` is a quote and delimiters and line breaks are data.
 * Values are strings (no type inference). Parsing works on one record's text, as cut by
 * {@link RecordScanner} (without its final line terminator).
 */

/** Outcome of parsing one record: the fields, or why the record is malformed. */
export type CsvParseResult =
  | { readonly ok: true; readonly fields: string[] }
  | { readonly ok: false; readonly reason: string };

/** Parses one CSV record into its fields. `text` has no trailing line terminator. */
export function parseCsvRecord(text: string, delimiter = ','): CsvParseResult {
  const fields: string[] = [];
  let i = 0;
  const n = text.length;
  for (;;) {
    // at the start of a field
    if (i < n && text[i] === '"') {
      let value = '';
      let j = i + 1;
      for (;;) {
        const q = text.indexOf('"', j);
        if (q === -1) return { ok: false, reason: `unterminated quoted field ${fields.length + 1}` };
        value += text.slice(j, q);
        if (text[q + 1] === '"') {
          value += '"';
          j = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      fields.push(value);
      if (i === n) return { ok: true, fields };
      if (text[i] !== delimiter) {
        return {
          ok: false,
          reason: `unexpected ${JSON.stringify(text[i])} after the closing quote of field ${fields.length}`,
        };
      }
      i++;
      continue;
    }
    let end = text.indexOf(delimiter, i);
    if (end === -1) end = n;
    const value = text.slice(i, end);
    const quote = value.indexOf('"');
    if (quote !== -1) {
      return {
        ok: false,
        reason: `a quote inside unquoted field ${fields.length + 1} (quote the field and double the quote)`,
      };
    }
    fields.push(value);
    if (end === n) return { ok: true, fields };
    i = end + 1;
  }
}

/** Encodes one field: quoted when it holds the delimiter, a quote, `\r` or `\n`. */
export function encodeCsvField(value: unknown, delimiter = ','): string {
  let s: string;
  if (value === null || value === undefined) s = '';
  else if (typeof value === 'string') s = value;
  else if (typeof value === 'object') s = JSON.stringify(value);
  else s = String(value);
  if (s.includes(delimiter) || s.includes('"') || s.includes('\n') || s.includes('\r')) {
    return `"${s.replaceAll('"', '""')}"`;
  }
  return s;
}

/** Encodes one record (fields in order) as a CSV line ending in `\n`. */
export function encodeCsvRow(fields: readonly unknown[], delimiter = ','): string {
  let line = '';
  for (let i = 0; i < fields.length; i++) {
    if (i > 0) line += delimiter;
    line += encodeCsvField(fields[i], delimiter);
  }
  // A lone empty field is written quoted: an empty line would read back as a blank line.
  if (fields.length === 1 && line === '') line = '""';
  return `${line}\n`;
}
