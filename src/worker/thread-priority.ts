/**
 * A job's worker threads run at a lower CPU priority than the thread that started the job
 * (JobOptions.workerNice), so the embedding service's own work — its request path on the main
 * thread — is scheduled first and the job gets what is left.
 *
 * Why: measured in the demo (issue 13), the main thread appending clicks beside a job at
 * parallelism 2 (~10 busy threads on 2 cores) stalled 100–900 ms at a time, not in any long
 * synchronous step but waiting for a core behind the job's threads at equal priority; with the
 * job 10 nice levels lower the append p99 fell to 0.41–0.70× of before. Linux keeps a nice value
 * per thread (setpriority on the calling thread's id, which is what `os.setPriority(0, …)` does),
 * so a worker thread can lower itself without touching the main thread or V8's GC helpers.
 * Relative to the thread's starting value (its creator's: a thread inherits it), so a service
 * started under `nice` keeps the same order among its threads.
 */

import { getPriority, setPriority } from 'node:os';
import { isMainThread } from 'node:worker_threads';

/** The lowest priority there is (the highest nice value). */
const MAX_NICE = 19;

/** Per thread (module state is per thread): a thread reused by a restarted job is lowered once. */
let lowered = false;

/**
 * In a worker thread, lowers the calling thread's priority by `nice` levels below the one it
 * started with, at most to 19; once per thread. No-op on the main thread, for `nice` 0, and off
 * Linux: elsewhere setpriority would lower the whole process, the service with it (the option
 * refuses a non-zero value there, see job-options.ts; this guard keeps an internal caller from
 * doing it).
 */
export function lowerWorkerThreadPriority(nice: number): void {
  if (isMainThread || nice <= 0 || lowered || process.platform !== 'linux') return;
  lowered = true;
  setPriority(0, Math.min(MAX_NICE, getPriority(0) + nice));
}
