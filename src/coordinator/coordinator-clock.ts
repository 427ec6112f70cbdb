/** The coordinator's only access to time: injected, so tests drive it with a fake clock. */

export type TimerHandle = unknown;

export interface CoordinatorClock {
  /** ms since the epoch; stamped into barriers and checkpoint metadata. */
  now(): number;
  /** Runs `fn` once after `ms`; the handle is only passed back to {@link clearTimeout}. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/**
 * The real clock. Timers are unref'd: a running job is kept alive by its workers, and a
 * coordinator someone forgot to stop must not hold the process open.
 */
export const systemCoordinatorClock: CoordinatorClock = Object.freeze({
  now: () => Date.now(),
  setTimeout: (fn: () => void, ms: number): TimerHandle => setTimeout(fn, ms).unref(),
  clearTimeout: (handle: TimerHandle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
});
