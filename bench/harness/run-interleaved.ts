/**
 * Runs benchmark cases interleaved: every round runs each case once, in an order rotated by one
 * position per round, and reports per case the median/min/max throughput and the ratio to a
 * baseline case.
 *
 * Why interleave: on the 2-core bench machine the second core comes and goes, so multi-threaded
 * timings swing up to 2× between minutes. Running all cases back to back within a round and
 * comparing each to the baseline *of the same round* cancels most of that drift; the rotation
 * keeps any "runs first / runs after X" effect (JIT state, GC debt, thermal) from always landing
 * on the same case. Absolute records/s are reported too, but the ratios are the figures to quote.
 *
 * What is timed is up to each case: `run()` returns the record count and the milliseconds it
 * measured itself, so a case can exclude its own set-up (e.g. worker start-up) and say so.
 */

import { max, median, min } from './stats.js';

/** What one run of a case reports. Cases may return more fields (e.g. a checksum). */
export interface Sample {
  /** Records processed (the throughput numerator; for pipelines: source records). */
  readonly records: number;
  /** Measured wall-clock milliseconds for those records. */
  readonly ms: number;
}

export interface BenchCase<S extends Sample = Sample> {
  /** Unique within one `runInterleaved` call; the baseline is named by it. */
  readonly name: string;
  /** One full run. Called `warmup + rounds` times, never concurrently with another case. */
  run(): Promise<S>;
}

export interface InterleaveOptions<S extends Sample = Sample> {
  /** Measured rounds (≥ 1). */
  readonly rounds: number;
  /** Unrecorded rounds run first, to get every case through the JIT (≥ 0). */
  readonly warmup: number;
  /** Name of the case the ratios are relative to. */
  readonly baseline: string;
  /** Called after every run (warmup runs too), e.g. to print progress or verify a checksum. */
  readonly onSample?: (event: { name: string; round: number; warmup: boolean; sample: S }) => void;
}

/** median/min/max of one quantity over the measured rounds. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface CaseStats<S extends Sample = Sample> {
  readonly name: string;
  /** The measured samples, in round order (warmup runs excluded). */
  readonly samples: readonly S[];
  /** records / second over the measured rounds. */
  readonly recordsPerSec: Spread;
  readonly ms: Spread;
  /**
   * Per-round ratio `thisCase.recordsPerSec / baseline.recordsPerSec`, both from the same round,
   * then median/min/max over rounds. > 1 means faster than the baseline. Exactly 1 for the baseline.
   */
  readonly ratioToBaseline: Spread;
}

export interface InterleavedResult<S extends Sample = Sample> {
  readonly rounds: number;
  readonly warmup: number;
  readonly baseline: string;
  /** Execution order of every round (warmup rounds first), for the record. */
  readonly order: readonly (readonly string[])[];
  /** In the order the cases were given. */
  readonly cases: readonly CaseStats<S>[];
}

function spread(values: readonly number[]): Spread {
  return { median: median(values), min: min(values), max: max(values) };
}

function checkOptions(
  names: readonly string[],
  options: Pick<InterleaveOptions, 'rounds' | 'warmup' | 'baseline'>,
): void {
  if (names.length === 0) throw new RangeError('runInterleaved: no cases');
  if (new Set(names).size !== names.length) {
    throw new RangeError(`runInterleaved: duplicate case names in ${names.join(', ')}`);
  }
  if (!Number.isInteger(options.rounds) || options.rounds < 1) {
    throw new RangeError(`runInterleaved: rounds must be an integer ≥ 1, got ${options.rounds}`);
  }
  if (!Number.isInteger(options.warmup) || options.warmup < 0) {
    throw new RangeError(`runInterleaved: warmup must be an integer ≥ 0, got ${options.warmup}`);
  }
  if (!names.includes(options.baseline)) {
    throw new RangeError(`runInterleaved: baseline '${options.baseline}' is not one of ${names.join(', ')}`);
  }
}

/** Collects garbage between runs when Node runs with `--expose-gc`, so one case's garbage is not billed to the next. */
function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc === 'function') gc();
}

/**
 * Runs `warmup + rounds` rounds; round `r` runs the cases starting at index `r mod cases.length`.
 * Cases run strictly one after another. A throwing case aborts the whole run (a benchmark that
 * silently drops a case would misreport the ratios).
 */
export async function runInterleaved<S extends Sample>(
  cases: readonly BenchCase<S>[],
  options: InterleaveOptions<S>,
): Promise<InterleavedResult<S>> {
  const names = cases.map((c) => c.name);
  checkOptions(names, options);
  const samples: S[][] = cases.map(() => []);
  const order: string[][] = [];
  const total = options.warmup + options.rounds;
  for (let round = 0; round < total; round++) {
    const warmup = round < options.warmup;
    const roundOrder: string[] = [];
    for (let j = 0; j < cases.length; j++) {
      const index = (round + j) % cases.length;
      const c = cases[index];
      roundOrder.push(c.name);
      collectGarbage();
      const sample = await c.run();
      if (!warmup) samples[index].push(sample);
      options.onSample?.({ name: c.name, round, warmup, sample });
    }
    order.push(roundOrder);
  }

  const rate = (s: Sample): number => (s.records * 1000) / s.ms;
  const baseline = samples[names.indexOf(options.baseline)];
  return {
    rounds: options.rounds,
    warmup: options.warmup,
    baseline: options.baseline,
    order,
    cases: cases.map((c, i) => ({
      name: c.name,
      samples: samples[i],
      recordsPerSec: spread(samples[i].map(rate)),
      ms: spread(samples[i].map((s) => s.ms)),
      ratioToBaseline: spread(samples[i].map((s, round) => rate(s) / rate(baseline[round]))),
    })),
  };
}
