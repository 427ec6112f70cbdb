/**
 * "Did you mean …?" for misspelt command names, flags and option keys (the CLI, job options,
 * `mapAsync` options): the closest candidate by edit distance (insert, delete, substitute, swap two
 * neighbours), if it is close enough to be a likely typo. Cost: O(|input| × |candidate|) per
 * candidate; the tables have a few dozen entries.
 */

/** Optimal-string-alignment distance between `a` and `b` (Levenshtein plus adjacent swaps). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [
    i,
    ...new Array<number>(b.length).fill(0),
  ]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The candidate closest to `input` (case-insensitive), or undefined when none is within a third
 * of the input's length (at least 1, at most 3 edits): beyond that a suggestion is a guess.
 * Ties go to the earlier candidate, so list the common ones first.
 */
export function closestMatch(input: string, candidates: readonly string[]): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(input.length / 3)));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const distance = editDistance(input.toLowerCase(), c.toLowerCase());
    if (distance < bestDistance) {
      best = c;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** `" (did you mean X?)"`, or `""` when nothing is close. */
export function didYouMean(
  input: string,
  candidates: readonly string[],
  show: (c: string) => string = (c) => c,
): string {
  const match = closestMatch(input, candidates);
  return match === undefined ? '' : ` (did you mean ${show(match)}?)`;
}
