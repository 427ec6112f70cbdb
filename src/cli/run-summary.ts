/**
 * The timing line of `weir run`'s summary: start-up and steady state apart, so records/s is not
 * diluted by thread start-up and module loading (seconds for a `.ts` job under tsx) on short jobs.
 */

/** What the CLI observed about one finished run; all times in ms. */
export interface RunTimes {
  /** From the command starting to the job's result (wall time of `weir run`, minus printing). */
  readonly wallMs: number;
  /** From the command starting to `startJob` returning (job module loaded and graph built). */
  readonly loadMs: number;
  /** `JobMetrics.durationMs`: deploy of the first attempt to the end of the job. */
  readonly jobMs: number;
  /** `JobMetrics.startupMs`: deploy until every task of the first attempt ran; undefined if never. */
  readonly deployToRunningMs: number | undefined;
  /** Records emitted by the sources (of the attempt that finished). */
  readonly sourceRecords: number;
}

/** Start-up vs steady state of one run. */
export interface RunRates {
  /** Command start until every task ran: module load, graph, threads, state restore. */
  readonly startupMs: number;
  /** Every task running until the end. */
  readonly steadyMs: number;
  /** `sourceRecords / steadyMs`; undefined when the steady phase is too short to divide by. */
  readonly steadyRecordsPerSec: number | undefined;
}

/** Pure: splits a run's time into start-up and steady state, and the steady-state rate. */
export function runRates(t: RunTimes): RunRates {
  // Unknown when the first attempt failed before all its tasks ran: count it all as steady state
  // (the rate is then a lower bound; the summary says so).
  const deployToRunning = Math.min(t.deployToRunningMs ?? 0, t.jobMs);
  const startupMs = t.loadMs + deployToRunning;
  const steadyMs = Math.max(0, t.jobMs - deployToRunning);
  // Below 1 ms the division says nothing (a job that finished as its last task started).
  const steadyRecordsPerSec = steadyMs >= 1 ? (t.sourceRecords * 1000) / steadyMs : undefined;
  return { startupMs, steadyMs, steadyRecordsPerSec };
}

/** The summary's timing line, e.g. `finished in 3.10 s: start-up 2.41 s, then 0.69 s steady at 1,449,275 records/s (1,000,000 source records)`. */
export function formatRunTimes(t: RunTimes): string {
  const r = runRates(t);
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const rate =
    r.steadyRecordsPerSec === undefined
      ? 'too short to rate'
      : `at ${Math.round(r.steadyRecordsPerSec).toLocaleString('en-US')} records/s`;
  const unknown =
    t.deployToRunningMs === undefined ? " (tasks' start-up unknown: the first attempt failed)" : '';
  return (
    `finished in ${s(t.wallMs)}: start-up ${s(r.startupMs)}${unknown}, then ${s(r.steadyMs)} steady ${rate} ` +
    `(${t.sourceRecords.toLocaleString('en-US')} source records)`
  );
}
