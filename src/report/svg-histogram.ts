/**
 * A histogram as inline SVG: labelled bins on the x axis, one bar per series in each bin
 * (grouped), counts (or shares) on the y axis, and a legend. Bin labels are thinned to fit.
 */

import { seriesColor } from './chart-palette.js';
import { linearScale, niceTicks } from './chart-scale.js';
import { escapeHtml } from './escape-html.js';
import { MARGIN, svgFrame } from './svg-frame.js';

export interface HistogramSeries {
  readonly name: string;
  /** One value per bin, in bin order. */
  readonly values: readonly number[];
  readonly color?: string;
}

export interface HistogramSpec {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  /** Bin labels, left to right. */
  readonly bins: readonly string[];
  readonly series: readonly HistogramSeries[];
  readonly width?: number;
  readonly height?: number;
}

export function renderHistogram(spec: HistogramSpec): string {
  const width = spec.width ?? 760;
  const height = spec.height ?? 300;
  const plotRight = width - MARGIN.right;
  const plotBottom = height - MARGIN.bottom;
  const values = spec.series.flatMap((s) => s.values.filter((v) => Number.isFinite(v)));
  const yNice = niceTicks(0, values.length ? Math.max(...values) : 1, 5);
  const sy = linearScale(yNice.min, yNice.max, plotBottom, MARGIN.top);
  const bins = Math.max(1, spec.bins.length);
  const binWidth = (plotRight - MARGIN.left) / bins;
  const barWidth = (binWidth * 0.84) / Math.max(1, spec.series.length);
  const labelEvery = Math.max(1, Math.ceil((bins * 44) / (plotRight - MARGIN.left)));

  const parts: string[] = [];
  svgFrame(parts, { width, height, title: spec.title, ticks: yNice.ticks, sy, plotRight });
  spec.series.forEach((s, si) => {
    const color = s.color ?? seriesColor(si);
    s.values.forEach((v, bi) => {
      if (!Number.isFinite(v) || v <= 0) return;
      const x = MARGIN.left + bi * binWidth + binWidth * 0.08 + si * barWidth;
      const y = sy(v);
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${(plotBottom - y).toFixed(1)}" fill="${color}"><title>${escapeHtml(`${s.name} · ${spec.bins[bi] ?? bi}: ${v.toLocaleString('en-US')}`)}</title></rect>`,
      );
    });
  });
  spec.bins.forEach((label, bi) => {
    if (bi % labelEvery !== 0) return;
    const x = (MARGIN.left + (bi + 0.5) * binWidth).toFixed(1);
    parts.push(`<text x="${x}" y="${plotBottom + 16}" text-anchor="middle">${escapeHtml(label)}</text>`);
  });
  parts.push(
    `<line x1="${MARGIN.left}" x2="${plotRight}" y1="${plotBottom}" y2="${plotBottom}" stroke="#555"/>`,
    `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${plotBottom}" stroke="#555"/>`,
    `<text x="${(MARGIN.left + plotRight) / 2}" y="${plotBottom + 32}" text-anchor="middle">${escapeHtml(spec.xLabel)}</text>`,
    `<text transform="translate(16 ${(MARGIN.top + plotBottom) / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(spec.yLabel)}</text>`,
  );
  let lx = MARGIN.left;
  const ly = height - 10;
  spec.series.forEach((s, si) => {
    parts.push(`<rect x="${lx}" y="${ly - 9}" width="12" height="10" fill="${s.color ?? seriesColor(si)}"/>`);
    parts.push(`<text x="${lx + 16}" y="${ly}">${escapeHtml(s.name)}</text>`);
    lx += 32 + s.name.length * 6.2;
  });
  parts.push('</svg>');
  return parts.join('\n');
}
