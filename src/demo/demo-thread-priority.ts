/**
 * The demo's job threads run at a lower CPU priority than the main thread that appends the clicks.
 *
 * Why: the main thread is the demo's "service": its append latency is what the demo measures. On
 * a small machine the job's worker threads (parallelism 2: ~10 threads) keep every core busy, and
 * the main thread, at equal priority, waits its turn behind them: its event loop stalled for
 * 100–900 ms at a time while appending (the profile shows no long synchronous step there, only
 * gaps where it was not scheduled and GC pauses whose wall time was 10–50× their CPU time).
 * A service that embeds weir wants the same order: requests first, the stream job with what is
 * left. Linux keeps a nice value per thread (setpriority on the calling thread), so a worker
 * thread can lower its own priority without touching the main thread or V8's GC helpers. Relative
 * to the main thread's, so a demo started with `nice` keeps the same order among its threads.
 */

import { getPriority, setPriority } from 'node:os';
import { isMainThread } from 'node:worker_threads';

/** Default: job threads ~10 nice levels below the main thread, ~1/10 of its CPU weight under contention. */
export const DEMO_WORKER_NICE = 10;

/** Per thread (module state is per thread): a reused thread of a restarted job is lowered once. */
let lowered = false;

/**
 * In a worker thread, lowers the calling thread's priority by `nice` levels below the one it
 * started with (the main thread's: a thread inherits its creator's), at most to 19; once per
 * thread. No-op on the main thread (the job module is also loaded there, to build the graph) and
 * for `nice` 0.
 */
export function lowerWorkerThreadPriority(nice: number): void {
  if (isMainThread || nice <= 0 || lowered) return;
  lowered = true;
  setPriority(0, Math.min(19, getPriority(0) + nice));
}
