/** Series and marker colours shared by the SVG charts (readable on white, distinct in greyscale). */
export const SERIES_COLORS: readonly string[] = ['#1f6fb2', '#d9622b', '#2a9d55', '#8c4fb5', '#7a7a7a'];

/** Colour of the `i`-th series, cycling. */
export function seriesColor(i: number): string {
  return SERIES_COLORS[i % SERIES_COLORS.length];
}
