/**
 * A line chart as inline SVG: one or more series over a shared x axis, vertical markers (e.g.
 * checkpoint completions, a failure), axis ticks and a legend. No scripts, no external assets;
 * marker details are in `<title>` tooltips. Cost: O(total points) string building.
 */

import { seriesColor } from './chart-palette.js';
import { linearScale, niceTicks, type Tick } from './chart-scale.js';
import { escapeHtml } from './escape-html.js';
import { MARGIN, svgFrame } from './svg-frame.js';

export interface LineSeries {
  readonly name: string;
  /** `[x, y]` in data units, in x order. Non-finite points break the line. */
  readonly points: readonly (readonly [number, number])[];
  readonly color?: string;
}

export interface ChartMarker {
  readonly x: number;
  /** Legend entry the marker belongs to (markers of one kind share colour and legend entry). */
  readonly kind: string;
  /** Tooltip text. */
  readonly label: string;
  readonly color: string;
  readonly dashed?: boolean;
}

export interface LineChartSpec {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly LineSeries[];
  readonly markers?: readonly ChartMarker[];
  /** Fixed x ticks (e.g. percentiles on a transformed axis); the x domain spans them. */
  readonly xTicks?: readonly Tick[];
  /** x range to show (e.g. the same for charts meant to be compared); default: the data's. */
  readonly xDomain?: readonly [number, number];
  /** Lower bound of the y axis; default 0. */
  readonly yMin?: number;
  readonly width?: number;
  readonly height?: number;
}

export function renderLineChart(spec: LineChartSpec): string {
  const width = spec.width ?? 760;
  const height = spec.height ?? 320;
  const plotRight = width - MARGIN.right;
  const plotBottom = height - MARGIN.bottom;
  const finite = spec.series.flatMap((s) =>
    s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)),
  );
  const markers = spec.markers ?? [];

  let xMin: number;
  let xMax: number;
  let xTicks: readonly Tick[];
  if (spec.xTicks && spec.xTicks.length >= 2) {
    xTicks = spec.xTicks;
    xMin = Math.min(...xTicks.map((t) => t.value));
    xMax = Math.max(...xTicks.map((t) => t.value));
  } else {
    const xs = [...finite.map(([x]) => x), ...markers.map((m) => m.x), ...(spec.xDomain ?? [])];
    const nice = niceTicks(xs.length ? Math.min(...xs) : 0, xs.length ? Math.max(...xs) : 1, 8);
    xMin = nice.min;
    xMax = nice.max;
    xTicks = nice.ticks;
  }
  const ys = finite.map(([, y]) => y);
  const yNice = niceTicks(spec.yMin ?? 0, ys.length ? Math.max(...ys) : 1, 5);
  const sx = linearScale(xMin, xMax, MARGIN.left, plotRight);
  const sy = linearScale(yNice.min, yNice.max, plotBottom, MARGIN.top);

  const parts: string[] = [];
  svgFrame(parts, { width, height, title: spec.title, ticks: yNice.ticks, sy, plotRight });
  for (const t of xTicks) {
    const x = sx(t.value).toFixed(1);
    parts.push(`<line x1="${x}" x2="${x}" y1="${plotBottom}" y2="${plotBottom + 4}" stroke="#555"/>`);
    parts.push(`<text x="${x}" y="${plotBottom + 16}" text-anchor="middle">${escapeHtml(t.label)}</text>`);
  }
  parts.push(
    `<line x1="${MARGIN.left}" x2="${plotRight}" y1="${plotBottom}" y2="${plotBottom}" stroke="#555"/>`,
    `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${plotBottom}" stroke="#555"/>`,
    `<text x="${(MARGIN.left + plotRight) / 2}" y="${plotBottom + 32}" text-anchor="middle">${escapeHtml(spec.xLabel)}</text>`,
    `<text transform="translate(16 ${(MARGIN.top + plotBottom) / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(spec.yLabel)}</text>`,
  );
  // markers under the series
  for (const m of markers) {
    if (m.x < xMin || m.x > xMax) continue;
    const x = sx(m.x).toFixed(1);
    parts.push(
      `<line x1="${x}" x2="${x}" y1="${MARGIN.top}" y2="${plotBottom}" stroke="${m.color}" stroke-width="${m.dashed ? 1 : 2}"${m.dashed ? ' stroke-dasharray="3 3"' : ''}><title>${escapeHtml(m.label)}</title></line>`,
    );
  }
  spec.series.forEach((s, i) => {
    const color = s.color ?? seriesColor(i);
    let d = '';
    let pen = false;
    for (const [x, y] of s.points) {
      if (!Number.isFinite(x) || !Number.isFinite(y)) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${sx(x).toFixed(1)} ${sy(y).toFixed(1)}`;
      pen = true;
    }
    if (d)
      parts.push(
        `<path d="${d}" fill="none" stroke="${color}" stroke-width="1.8"><title>${escapeHtml(s.name)}</title></path>`,
      );
  });
  // legend: series, then one entry per marker kind
  const legend: { name: string; color: string; dashed: boolean; line: boolean }[] = spec.series.map(
    (s, i) => ({
      name: s.name,
      color: s.color ?? seriesColor(i),
      dashed: false,
      line: true,
    }),
  );
  const kinds = new Map<string, ChartMarker>();
  for (const m of markers) if (!kinds.has(m.kind)) kinds.set(m.kind, m);
  for (const m of kinds.values())
    legend.push({ name: m.kind, color: m.color, dashed: m.dashed ?? false, line: false });
  let lx = MARGIN.left;
  const ly = height - 10;
  for (const e of legend) {
    parts.push(
      e.line
        ? `<line x1="${lx}" x2="${lx + 18}" y1="${ly - 4}" y2="${ly - 4}" stroke="${e.color}" stroke-width="2.5"/>`
        : `<line x1="${lx + 9}" x2="${lx + 9}" y1="${ly - 11}" y2="${ly + 2}" stroke="${e.color}" stroke-width="2"${e.dashed ? ' stroke-dasharray="3 3"' : ''}/>`,
    );
    parts.push(`<text x="${lx + 22}" y="${ly}">${escapeHtml(e.name)}</text>`);
    lx += 32 + e.name.length * 6.2;
  }
  parts.push('</svg>');
  return parts.join('\n');
}
