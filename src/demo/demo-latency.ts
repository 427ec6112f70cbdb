/**
 * A latency distribution for the demo: the shared {@link LatencyRecorder} (HDR histogram) for
 * percentiles, and the raw values for a binned histogram. Values are milliseconds in and out;
 * negative values (clock skew between threads' time origins) are clamped to 0.
 */

import { LatencyRecorder, type LatencySummary } from '../report/latency-recorder.js';

export type { LatencySummary };

export class LatencyDistribution {
  readonly #recorder = new LatencyRecorder();
  readonly #values: number[] = [];

  record(ms: number): void {
    const v = Number.isFinite(ms) && ms > 0 ? ms : 0;
    this.#values.push(v);
    this.#recorder.record(v);
  }

  get count(): number {
    return this.#values.length;
  }

  /** Latency at `percentile` (0–100), ms. */
  at(percentile: number): number {
    return this.#recorder.at(percentile);
  }

  summary(): LatencySummary {
    return this.#recorder.summary();
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
