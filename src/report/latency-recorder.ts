/**
 * Latency distribution of a run (e.g. source-to-sink per record, or checkpoint durations), over
 * an HDR histogram from hdr-histogram-js: constant memory, ~0.1 % value error at 3 significant
 * digits, O(1) `record`, so it can sit on a hot path.
 *
 * Values are recorded in whole microseconds (the histogram holds integers) and reported in
 * milliseconds. The histogram auto-resizes, so there is no upper bound to configure.
 * Cost: one pure-JS histogram increment per `record` (no WebAssembly, so no async init).
 */

import {
  build,
  decodeFromCompressedBase64,
  encodeIntoCompressedBase64,
  type Histogram,
} from 'hdr-histogram-js';

export interface LatencySummary {
  readonly count: number;
  /** All in milliseconds, to the microsecond. `NaN` when nothing was recorded. */
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
}

export interface LatencyRecorderOptions {
  /** Value precision of the histogram (hdr's `numberOfSignificantValueDigits`); default 3. */
  readonly significantDigits?: 1 | 2 | 3 | 4 | 5;
}

export class LatencyRecorder {
  readonly #histogram: Histogram;

  constructor(options: LatencyRecorderOptions = {}) {
    this.#histogram = build({
      bitBucketSize: 64,
      autoResize: true,
      lowestDiscernibleValue: 1,
      numberOfSignificantValueDigits: options.significantDigits ?? 3,
      useWebAssembly: false,
    });
  }

  /**
   * Records one latency in milliseconds. Negative values (clock skew between threads'
   * `performance.timeOrigin`s) are clamped to 0 rather than thrown: this runs on hot paths.
   */
  record(ms: number): void {
    this.#histogram.recordValue(ms > 0 ? Math.round(ms * 1000) : 0);
  }

  /** Records `now - startMs`, both from `performance.now()` of this thread. */
  recordSince(startMs: number, now: number = performance.now()): void {
    this.record(now - startMs);
  }

  /** Adds another recorder's values (e.g. per-worker recorders merged on the main thread). */
  add(other: LatencyRecorder): void {
    this.#histogram.add(other.#histogram);
  }

  get count(): number {
    return this.#histogram.totalCount;
  }

  /** Latency at `percentile` (0–100), ms; `NaN` when nothing was recorded. */
  at(percentile: number): number {
    const h = this.#histogram;
    return h.totalCount === 0 ? Number.NaN : h.getValueAtPercentile(percentile) / 1000;
  }

  summary(): LatencySummary {
    const h = this.#histogram;
    if (h.totalCount === 0) {
      return {
        count: 0,
        p50: Number.NaN,
        p99: Number.NaN,
        p999: Number.NaN,
        max: Number.NaN,
        mean: Number.NaN,
      };
    }
    const ms = (micros: number): number => micros / 1000;
    return {
      count: h.totalCount,
      p50: ms(h.getValueAtPercentile(50)),
      p99: ms(h.getValueAtPercentile(99)),
      p999: ms(h.getValueAtPercentile(99.9)),
      max: ms(h.maxValue),
      mean: ms(h.mean),
    };
  }

  reset(): void {
    this.#histogram.reset();
  }

  /**
   * The histogram in HdrHistogram's compressed base64 form (values in µs): how a worker hands
   * its latencies to the main thread. A job module without this class builds its histogram with
   * hdr-histogram-js directly (any bucket size) and calls `encodeIntoCompressedBase64` itself.
   */
  encode(): string {
    return encodeIntoCompressedBase64(this.#histogram);
  }

  /** A recorder holding the values of an {@link encode}d histogram (µs values, as recorded). */
  static decode(base64: string, options: LatencyRecorderOptions = {}): LatencyRecorder {
    const recorder = new LatencyRecorder(options);
    recorder.#histogram.add(decodeFromCompressedBase64(base64, 64, false));
    return recorder;
  }
}
