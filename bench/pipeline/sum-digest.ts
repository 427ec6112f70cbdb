/**
 * A checksum of the final per-key sums, so every implementation can be checked to compute the
 * same result. It is order-independent (partitions may finish in any order and a Map may iterate
 * in any order) and mergeable (parallel consumers own disjoint keys; their digests add up).
 *
 * `total` stays exact while it is below 2^53: for this pipeline that holds up to N ≈ 9·10^7.
 */

export interface SumDigest {
  /** Distinct keys with a sum. */
  readonly keys: number;
  /** `{ key, sum }` records that reached the sink (one per record that passed the filter). */
  readonly emitted: number;
  /** Σ of the final sums over all keys. */
  readonly total: number;
  /** Σ over keys of fnv1a(`key=sum`), mod 2^32: pins each sum to its key. */
  readonly mix: number;
}

/** 32-bit FNV-1a over UTF-16 code units. Also the partitioner of the worker-thread baseline. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Digest of one partition's final sums. O(keys); call it after the clock has stopped. */
export function digestOf(sums: ReadonlyMap<string, number>, emitted: number): SumDigest {
  let total = 0;
  let mix = 0;
  for (const [key, sum] of sums) {
    total += sum;
    mix = (mix + fnv1a(`${key}=${sum}`)) >>> 0;
  }
  return { keys: sums.size, emitted, total, mix };
}

/** Digest of the union of partitions that own disjoint key sets. */
export function mergeDigests(digests: readonly SumDigest[]): SumDigest {
  return digests.reduce(
    (a, b) => ({
      keys: a.keys + b.keys,
      emitted: a.emitted + b.emitted,
      total: a.total + b.total,
      mix: (a.mix + b.mix) >>> 0,
    }),
    { keys: 0, emitted: 0, total: 0, mix: 0 },
  );
}

/** The string the runner compares across implementations. */
export function checksumOf(digest: SumDigest): string {
  return `keys=${digest.keys} emitted=${digest.emitted} total=${digest.total} mix=${digest.mix.toString(16).padStart(8, '0')}`;
}

/**
 * Digest from the emitted `{ key, sum }` stream itself, in any order and across any number of
 * partitions: the final sum of a key is its largest emitted sum (values are ≥ 0, so running
 * sums never decrease). For implementations whose state is not reachable after the run (e.g. a
 * weir job with a collect sink — use a small n, collecting every output costs memory). With
 * at-least-once replays, `emitted` counts the duplicates too, so it will not match: compare
 * `keys`/`total`/`mix` then.
 */
export function digestOfEmitted(
  records: Iterable<{ readonly key: string; readonly sum: number }>,
): SumDigest {
  const finals = new Map<string, number>();
  let emitted = 0;
  for (const { key, sum } of records) {
    emitted++;
    const previous = finals.get(key);
    if (previous === undefined || sum > previous) finals.set(key, sum);
  }
  return digestOf(finals, emitted);
}
