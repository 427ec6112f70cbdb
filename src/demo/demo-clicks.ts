/**
 * The demo's click stream: sequence number → click event, deterministic, so that the job (in
 * worker threads) and the verifier (on the main thread) derive the same events from the same
 * numbers without sharing any state. Users and pages are skewed (a few hot pages and heavy
 * users), like real traffic; `ts` is an event time that runs ~2 s out of order at most (the
 * demo's windows use it). Click `seq` goes to log partition `seq mod partitions`, so within a
 * partition clicks are in `seq` order and the offset of click `seq` is `floor(seq / partitions)`.
 *
 * Cost: a few integer multiplications per event.
 */

export interface ClickEvent {
  /** Position in the stream: 0, 1, 2, … (unique per click). */
  readonly seq: number;
  readonly user: string;
  readonly page: string;
  /** Event time, ms since the epoch: at most {@link CLICK_MAX_LATENESS_MS} behind earlier clicks. */
  readonly ts: number;
}

/** Pages of the demo site; the first ones are hot. */
export const DEMO_PAGES: readonly string[] = [
  '/',
  '/search',
  '/cart',
  '/checkout',
  '/account',
  '/help',
  ...Array.from({ length: 42 }, (_, i) => `/product/${i + 1}`),
];

/** Event time of click 0: 2026-01-01T00:00:00Z. */
export const CLICK_EPOCH_MS = Date.UTC(2026, 0, 1);
/** Event-time clicks per ms (25 000 per second), independent of the replay rate. */
const CLICKS_PER_MS = 25;
/** Maximum out-of-orderness of `ts`, ms. */
export const CLICK_MAX_LATENESS_MS = 2000;

/** A 32-bit avalanche hash (lowbias32 by Chris Wellons): a stateless pseudo-random source. */
export function hash32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A uniform value in [0, 1) from `seq` and a stream salt. */
function unit(seq: number, salt: number): number {
  return hash32(hash32(seq) ^ salt) / 4294967296;
}

/** The click at position `seq` of a stream over `users` users. */
export function clickAt(seq: number, users: number): ClickEvent {
  return { seq, user: clickUser(seq, users), page: clickPage(seq), ts: clickTs(seq) };
}

/**
 * The click at position `seq` as the feed appends it: {@link clickAt}'s fields, in the same order
 * (so its msgpack encoding is the same bytes as `{ ...clickAt(seq, users), appendedAt }`), plus
 * `appendedAt`, built as one object literal. Cost (issue 13, Node 20 / V8 11.3): the spread's
 * object held 368 heap bytes against this literal's 120 (it also built `clickAt`'s object to copy
 * from), and the clicks of the appends in flight are what the main isolate's scavenges copy: the
 * feed's heap allocation fell from ~1 040–1 220 to ~540–590 bytes per click and the bytes
 * surviving scavenges to about a quarter (bench/README.md, "The main isolate's GC").
 */
// The result is `LoggedClick` (demo-records.ts), spelt out here: that module imports this one.
export function loggedClickAt(
  seq: number,
  users: number,
  appendedAt: number,
): ClickEvent & { readonly appendedAt: number } {
  return { seq, user: clickUser(seq, users), page: clickPage(seq), ts: clickTs(seq), appendedAt };
}

// Squaring / cubing a uniform value skews towards 0: low ids are the heavy users and hot pages.
function clickUser(seq: number, users: number): string {
  const u = unit(seq, 0x9e3779b9);
  return `u${Math.floor(u * u * users)}`;
}

function clickPage(seq: number): string {
  const p = unit(seq, 0x85ebca6b);
  return DEMO_PAGES[Math.floor(p * p * p * DEMO_PAGES.length)];
}

function clickTs(seq: number): number {
  const late = unit(seq, 0xc2b2ae35);
  return CLICK_EPOCH_MS + Math.floor(seq / CLICKS_PER_MS) - Math.floor(late * CLICK_MAX_LATENESS_MS);
}

/** Size of the demo's tumbling event-time windows, ms. */
export const DEMO_WINDOW_MS = 1000;

/** Start of the tumbling window of `ts`. */
export function demoWindowStart(ts: number): number {
  return ts - (((ts % DEMO_WINDOW_MS) + DEMO_WINDOW_MS) % DEMO_WINDOW_MS);
}

/** The log partition click `seq` is appended to. */
export function clickPartition(seq: number, partitions: number): number {
  return seq % partitions;
}

/** Records in partition `partition` once clicks `0 .. n-1` are appended (its end offset). */
export function partitionEnd(n: number, partition: number, partitions: number): number {
  return partition < n ? Math.floor((n - 1 - partition) / partitions) + 1 : 0;
}
