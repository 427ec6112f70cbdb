/**
 * A latency distribution for the demo: an HDR histogram (hdr-histogram-js, 3 significant
 * digits, microsecond units, auto-resizing) for percentiles, and the raw values for a binned
 * histogram. Values are milliseconds in and out; negative values (clock skew between threads'
 * time origins) are clamped to 0.
 */

import { build, type Histogram } from 'hdr-histogram-js';

export interface LatencySummary {
  readonly count: number;
  /** Milliseconds; `NaN` when nothing was recorded. */
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
}

export class LatencyDistribution {
  readonly #histogram: Histogram = build({
    bitBucketSize: 64,
    autoResize: true,
    lowestDiscernibleValue: 1,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });
  readonly #values: number[] = [];

  record(ms: number): void {
    const v = Number.isFinite(ms) && ms > 0 ? ms : 0;
    this.#values.push(v);
    this.#histogram.recordValue(Math.round(v * 1000));
  }

  get count(): number {
    return this.#values.length;
  }

  /** Latency at `percentile` (0–100), ms. */
  at(percentile: number): number {
    if (this.#values.length === 0) return Number.NaN;
    return this.#histogram.getValueAtPercentile(percentile) / 1000;
  }

  summary(): LatencySummary {
    const h = this.#histogram;
    if (this.#values.length === 0) {
      const nan = Number.NaN;
      return { count: 0, p50: nan, p99: nan, p999: nan, max: nan, mean: nan };
    }
    return {
      count: h.totalCount,
      p50: this.at(50),
      p99: this.at(99),
      p999: this.at(99.9),
      max: h.maxValue / 1000,
      mean: h.mean / 1000,
    };
  }

  /** Counts per bin `[edges[i], edges[i+1])`; the last bin is open-ended. */
  binCounts(edges: readonly number[]): number[] {
    const counts = new Array<number>(edges.length).fill(0);
    for (const v of this.#values) {
      let i = edges.length - 1;
      while (i > 0 && v < edges[i]) i--;
      counts[i]++;
    }
    return counts;
  }
}
