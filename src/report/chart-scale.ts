/**
 * Axis scales for the SVG charts: a linear map from a data domain to pixels and "nice" tick
 * values (1, 2, 2.5 or 5 times a power of ten), as in d3's `ticks`.
 */

export interface Tick {
  readonly value: number;
  readonly label: string;
}

/** Maps `[domainMin, domainMax]` onto `[rangeMin, rangeMax]`; a zero-width domain maps to the middle. */
export function linearScale(
  domainMin: number,
  domainMax: number,
  rangeMin: number,
  rangeMax: number,
): (v: number) => number {
  const span = domainMax - domainMin;
  if (!(span > 0)) return () => (rangeMin + rangeMax) / 2;
  const k = (rangeMax - rangeMin) / span;
  return (v) => rangeMin + (v - domainMin) * k;
}

/** A step of 1, 2, 2.5 or 5 × 10^k giving about `count` intervals over `span`. */
export function niceStep(span: number, count: number): number {
  if (!(span > 0) || !(count > 0)) return 1;
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const f = raw / power;
  const m = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
  return m * power;
}

/** Tick values at multiples of a nice step covering `[min, max]`, and the extended domain. */
export function niceTicks(
  min: number,
  max: number,
  count = 5,
): { readonly min: number; readonly max: number; readonly ticks: Tick[] } {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return { min: 0, max: 1, ticks: [] };
  if (max <= min) max = min + 1;
  const step = niceStep(max - min, count);
  const lo = Math.floor(min / step) * step;
  const hi = Math.ceil(max / step) * step;
  const ticks: Tick[] = [];
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9) + (step % 1 === 0.5 ? 1 : 0));
  for (let i = 0; lo + i * step <= hi + step * 1e-9; i++) {
    const value = lo + i * step;
    ticks.push({ value, label: formatTick(value, decimals) });
  }
  return { min: lo, max: hi, ticks };
}

function formatTick(value: number, decimals: number): string {
  const fixed = Math.abs(value) < 1e-12 ? 0 : value;
  return fixed.toLocaleString('en-US', {
    minimumFractionDigits: Math.min(decimals, 6),
    maximumFractionDigits: Math.min(decimals + 1, 6),
  });
}
