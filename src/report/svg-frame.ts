/** What every chart of the report starts with: the SVG element, its title, and the y grid. */

import type { Tick } from './chart-scale.js';
import { escapeHtml } from './escape-html.js';

/** Plot margins shared by the charts, px. */
export const MARGIN = { left: 70, right: 20, top: 34, bottom: 62 } as const;

/** Opens the `<svg>` (the caller closes it) with title text and horizontal grid lines at `ticks`. */
export function svgFrame(
  parts: string[],
  frame: {
    readonly width: number;
    readonly height: number;
    readonly title: string;
    readonly ticks: readonly Tick[];
    readonly sy: (v: number) => number;
    readonly plotRight: number;
  },
): void {
  const { width, height, title, ticks, sy, plotRight } = frame;
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeHtml(title)}" font-family="system-ui, sans-serif" font-size="11">`,
  );
  parts.push(`<title>${escapeHtml(title)}</title>`);
  parts.push(`<text x="${MARGIN.left}" y="18" font-size="13" font-weight="600">${escapeHtml(title)}</text>`);
  for (const t of ticks) {
    const y = sy(t.value).toFixed(1);
    parts.push(`<line x1="${MARGIN.left}" x2="${plotRight}" y1="${y}" y2="${y}" stroke="#e3e3e3"/>`);
    parts.push(
      `<text x="${MARGIN.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${escapeHtml(t.label)}</text>`,
    );
  }
}
