/**
 * Why two failure-free runs of a job committed different output (pure heuristics over the
 * differing records and the job's shape). Causes with evidence in the records come first, then
 * the ones the records cannot show (a random key leaves no fraction in the output). weir itself replays nothing in a failure-free run, so a difference there is the
 * job's (or its environment's), not the runtime's.
 */

export interface LikelyCause {
  readonly cause: 'wall-clock time' | 'random values' | 'input order' | 'external input';
  readonly why: string;
}

/** Numbers within a year of `now` read as epoch milliseconds. */
const YEAR_MS = 365 * 24 * 3600 * 1000;

function numbersIn(v: unknown, out: number[], depth = 0): void {
  if (typeof v === 'number') out.push(v);
  else if (depth < 4 && v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) numbersIn(x, out, depth + 1);
  }
}

/**
 * `multipleInputs`: whether some task of the job reads more than one input channel (parallelism
 * above 1 upstream, a union or a connect), the only way records can reach it in a different
 * order from one failure-free run to the next.
 */
export function likelyCauses(
  differing: readonly unknown[],
  now: number,
  multipleInputs: boolean,
): LikelyCause[] {
  const numbers: number[] = [];
  for (const r of differing) numbersIn(r, numbers);
  const clock = numbers.some((n) => Number.isInteger(n) && Math.abs(n - now) < YEAR_MS);
  const random = numbers.some((n) => n > 0 && n < 1 && !Number.isInteger(n * 1e6));
  const seen: LikelyCause[] = [];
  const unseen: LikelyCause[] = [];
  (clock ? seen : unseen).push({
    cause: 'wall-clock time',
    why: `${clock ? 'differing records hold numbers that look like current epoch milliseconds; ' : ''}a function that reads Date.now() or new Date() (or a processing-time window) gives other values in every run; use event time from the record instead`,
  });
  (random ? seen : unseen).push({
    cause: 'random values',
    why: `${random ? 'differing records hold fractions in (0, 1) like Math.random() returns; ' : ''}a function that calls Math.random() or crypto.randomUUID() (in a value or a key) gives other values in every run; derive them from the record (a hash) or a seeded generator`,
  });
  if (multipleInputs) {
    unseen.push({
      cause: 'input order',
      why: 'a task of this job reads several input channels (parallelism above 1 upstream, union, connect): records arrive in a different order in every run, and an order-dependent result (a running aggregate, "first seen") differs; run with --parallelism 1, or make the result order-independent',
    });
  }
  unseen.push({
    cause: 'external input',
    why: 'a source or function that reads something outside the job (a file, a service, the environment) that changed between runs',
  });
  return [...seen, ...unseen];
}
