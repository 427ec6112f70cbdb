/** Order statistics over small sample arrays (a few rounds), so sorting a copy is fine. */

/** Median of `values` (mean of the two middle values for an even count); `NaN` when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Smallest value; `NaN` when empty. */
export function min(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : Math.min(...values);
}

/** Largest value; `NaN` when empty. */
export function max(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : Math.max(...values);
}
