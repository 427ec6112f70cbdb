/**
 * Aligned plain-text tables for benchmark reports. A column is right-aligned when every value in
 * it is a number or a formatted figure (a string starting with a digit, sign or '-' placeholder,
 * such as `'7.61 M'` or `'0.51×'`), otherwise left-aligned; columns are the union of the rows'
 * keys in first-seen order. Formatting of values (units,
 * precision) is the caller's job; {@link formatRate} and {@link formatRatio} cover the usual ones.
 */

/** A formatted number: `7.61 M`, `-3`, `0.51×–0.62×`, or `-` for "not applicable". */
const FIGURE = /^(?:[-+]?\.?\d|-$)/;

export type TableRow = Readonly<Record<string, string | number>>;

/** The table as a string (header, a rule, one line per row), no trailing newline. */
export function formatTable(rows: readonly TableRow[]): string {
  const columns: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const cells = rows.map((row) => columns.map((col) => (row[col] === undefined ? '' : String(row[col]))));
  const numeric = columns.map((col) =>
    rows.every((row) => {
      const value = row[col];
      return value === undefined || typeof value === 'number' || FIGURE.test(value);
    }),
  );
  const width = columns.map((col, i) => Math.max(col.length, ...cells.map((line) => line[i].length)));
  const pad = (text: string, i: number): string =>
    numeric[i] ? text.padStart(width[i]) : text.padEnd(width[i]);
  const lines = [
    columns.map((col, i) => pad(col, i)).join('  '),
    width.map((w) => '-'.repeat(w)).join('  '),
    ...cells.map((line) => line.map((text, i) => pad(text, i)).join('  ')),
  ];
  return lines.map((line) => line.trimEnd()).join('\n');
}

/** Writes {@link formatTable} to stdout. */
export function printTable(rows: readonly TableRow[]): void {
  process.stdout.write(`${formatTable(rows)}\n`);
}

/** `7_612_345` → `'7.61 M'` (records/s without the unit, three significant digits). */
export function formatRate(perSec: number): string {
  if (!Number.isFinite(perSec)) return String(perSec);
  if (perSec >= 1e6) return `${(perSec / 1e6).toPrecision(3)} M`;
  if (perSec >= 1e3) return `${(perSec / 1e3).toPrecision(3)} k`;
  return perSec.toPrecision(3);
}

/** `0.5123` → `'0.51×'`. */
export function formatRatio(ratio: number): string {
  return `${ratio.toFixed(2)}×`;
}
