/**
 * The combined results of `weir bench` as one self-contained HTML page: inline CSS, tables, and
 * inline SVG bar charts; no scripts, no external assets. Draws each suite's `report`
 * (`suite-report.ts`), so it knows nothing about the suites themselves.
 */

import type { CombinedResults, SuiteRun } from './combined-results.js';
import { formatMachineInfo } from './machine-info.js';
import type { ReportChart, ReportTable } from './suite-report.js';

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Right-aligned when every cell is a number or a figure, as in `print-table.ts`. */
const FIGURE = /^(?:[-+]?\.?\d|-$)/;

export function tableHtml(table: ReportTable): string {
  const columns: string[] = [];
  for (const row of table.rows)
    for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const numeric = columns.map((col) =>
    table.rows.every(
      (r) => r[col] === undefined || typeof r[col] === 'number' || FIGURE.test(String(r[col])),
    ),
  );
  const cell = (tag: 'th' | 'td', text: string, i: number): string =>
    `<${tag}${numeric[i] ? ' class="num"' : ''}>${escapeHtml(text)}</${tag}>`;
  const head = columns.map((c, i) => cell('th', c, i)).join('');
  const body = table.rows
    .map(
      (r) =>
        `<tr>${columns.map((c, i) => cell('td', r[c] === undefined ? '' : String(r[c]), i)).join('')}</tr>`,
    )
    .join('\n');
  return `<h3>${escapeHtml(table.title)}</h3>\n<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

const LABEL_W = 280;
const BAR_W = 420;
const ROW_H = 22;

function figure(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toPrecision(3);
}

/** Horizontal bars scaled to the largest of the values and the reference; non-finite bars are left out. */
export function chartSvg(chart: ReportChart): string {
  const bars = chart.bars.filter((b) => Number.isFinite(b.value));
  const top = Math.max(...bars.map((b) => b.value), chart.reference?.value ?? 0, Number.MIN_VALUE);
  const height = bars.length * ROW_H + 24;
  const x = (v: number): number => LABEL_W + (Math.max(0, v) / top) * BAR_W;
  const rows = bars.map((b, i) => {
    const y = i * ROW_H + 4;
    return (
      `<text x="${LABEL_W - 6}" y="${y + 14}" text-anchor="end">${escapeHtml(b.label)}</text>` +
      `<rect x="${LABEL_W}" y="${y + 2}" width="${(x(b.value) - LABEL_W).toFixed(1)}" height="${ROW_H - 6}" class="bar"/>` +
      `<text x="${(x(b.value) + 4).toFixed(1)}" y="${y + 14}">${escapeHtml(figure(b.value) + chart.unit)}</text>`
    );
  });
  const ref = chart.reference
    ? `<line x1="${x(chart.reference.value).toFixed(1)}" x2="${x(chart.reference.value).toFixed(1)}" y1="0" y2="${height - 18}" class="ref"/>` +
      `<text x="${x(chart.reference.value).toFixed(1)}" y="${height - 4}" text-anchor="middle" class="ref-label">${escapeHtml(chart.reference.label)}</text>`
    : '';
  return (
    `<h3>${escapeHtml(chart.title)}</h3>\n` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${LABEL_W + BAR_W + 80}" height="${height}" role="img" aria-label="${escapeHtml(chart.title)}">` +
    `${rows.join('')}${ref}</svg>`
  );
}

function suiteHtml(run: SuiteRun): string {
  const head = `<h2 id="${escapeHtml(run.name)}">${escapeHtml(run.name)}</h2>`;
  const meta = `<p class="meta">${escapeHtml(run.command)} — ${(run.durationMs / 1000).toFixed(1)} s</p>`;
  if (run.status === 'failed' || !run.result) {
    return `${head}\n${meta}\n<p class="failed">failed (exit code ${run.exitCode ?? '–'})${run.error ? `: ${escapeHtml(run.error)}` : ''}</p>`;
  }
  const report = run.result.report;
  if (!report) return `${head}\n${meta}\n<p>This suite's JSON has no report section; see the JSON file.</p>`;
  return [
    head,
    `<p><strong>${escapeHtml(report.title)}</strong></p>`,
    meta,
    ...report.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`),
    ...report.tables.map(tableHtml),
    ...report.charts.map(chartSvg),
  ].join('\n');
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f3f3f3}.num{text-align:right;font-variant-numeric:tabular-nums}
.meta{color:#666;font-family:monospace}.note{color:#444}.failed{color:#b00;font-weight:bold}
svg text{font:12px system-ui,sans-serif;fill:#222}.bar{fill:#4a7bb7}.ref{stroke:#b00;stroke-dasharray:4 3}
.ref-label{fill:#b00}.banner{background:#fff4d6;border:1px solid #e0c060;padding:.5em 1em}`;

export function renderHtml(results: CombinedResults): string {
  const title = `weir bench — ${results.machine.date}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p class="meta">${escapeHtml(results.command)}</p>
<p>${escapeHtml(formatMachineInfo(results.machine))}</p>
${results.quick ? '<p class="banner">--quick: smoke-run sizes; the figures are not for quoting.</p>' : ''}
<p>${results.suites.map((s) => `<a href="#${escapeHtml(s.name)}">${escapeHtml(s.name)}</a> (${s.status})`).join(' · ')}</p>
${results.suites.map(suiteHtml).join('\n')}
</body></html>
`;
}
