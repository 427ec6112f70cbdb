/**
 * A self-contained HTML report: a title and a list of blocks (headings, paragraphs, lists,
 * tables, line charts, histograms) rendered to one HTML string with inline CSS and inline SVG.
 * No scripts and no external assets, so the file opens anywhere, offline.
 */

import { escapeHtml } from './escape-html.js';
import { type HistogramSpec, renderHistogram } from './svg-histogram.js';
import { type LineChartSpec, renderLineChart } from './svg-line-chart.js';

export interface ReportTable {
  readonly caption?: string;
  readonly head: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** The closed vocabulary of report blocks. */
export type ReportBlock =
  | { readonly kind: 'heading'; readonly text: string }
  | { readonly kind: 'paragraph'; readonly text: string }
  | { readonly kind: 'list'; readonly items: readonly string[] }
  | { readonly kind: 'table'; readonly table: ReportTable }
  | { readonly kind: 'line-chart'; readonly chart: LineChartSpec }
  | { readonly kind: 'histogram'; readonly chart: HistogramSpec };

export interface HtmlReport {
  readonly title: string;
  readonly blocks: readonly ReportBlock[];
}

const STYLE = `
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1d1d1d; line-height: 1.45; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.75rem 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f3f3f3; }
caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: 0.3rem; }
figure { margin: 1rem 0; } svg { max-width: 100%; height: auto; }
code { background: #f3f3f3; padding: 0 0.2rem; }
`;

export function renderHtmlReport(report: HtmlReport): string {
  const body = report.blocks.map(renderBlock).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(report.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(report.title)}</h1>
${body}
</body>
</html>
`;
}

function renderBlock(block: ReportBlock): string {
  switch (block.kind) {
    case 'heading':
      return `<h2>${escapeHtml(block.text)}</h2>`;
    case 'paragraph':
      return `<p>${escapeHtml(block.text)}</p>`;
    case 'list':
      return `<ul>\n${block.items.map((i) => `<li>${escapeHtml(i)}</li>`).join('\n')}\n</ul>`;
    case 'table':
      return renderTable(block.table);
    case 'line-chart':
      return `<figure>${renderLineChart(block.chart)}</figure>`;
    case 'histogram':
      return `<figure>${renderHistogram(block.chart)}</figure>`;
    default: {
      const unreachable: never = block;
      throw new Error(`unknown report block ${JSON.stringify(unreachable)}`);
    }
  }
}

function renderTable(table: ReportTable): string {
  const head = table.head.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const rows = table.rows
    .map(
      (r) =>
        `<tr>${r.map((c, i) => (i === 0 ? `<th>${escapeHtml(c)}</th>` : `<td>${escapeHtml(c)}</td>`)).join('')}</tr>`,
    )
    .join('\n');
  const caption = table.caption ? `<caption>${escapeHtml(table.caption)}</caption>` : '';
  return `<table>${caption}<thead><tr>${head}</tr></thead>\n<tbody>\n${rows}\n</tbody></table>`;
}
