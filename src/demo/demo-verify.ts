/**
 * The demo's correctness check, as pure functions over the job's output and an expectation
 * computed independently (a plain loop over the click generator on the main thread, no weir).
 *
 * Exactly-once: every click has exactly one output record, the record is the right click, and
 * per page (per user) the running counts are exactly 1, 2, …, clicks of that page (user): a
 * count that was applied twice or lost after the restore shows up even when the records
 * themselves are not duplicated.
 * At-least-once: no click is missing and no record is corrupt; duplicates are counted, and so is
 * how far the final counts overshoot (state replays after a restore may count a click twice).
 *
 * Windows (clicks per user per 1 s tumbling event-time window): exactly-once, every (user,
 * window) of the stream has exactly one result and its count is exact; at-least-once, every one
 * has a result counting at least its clicks (a lower count means clicks were lost), repeated
 * results and overshooting counts are reported. Either way a result for a window in which the
 * user did not click is corrupt.
 *
 * Cost: O(n + output) time, O(n + keys) memory.
 */

import type { CheckpointMode } from '../api/source.js';
import { clickAt, demoWindowStart } from './demo-clicks.js';
import type { CountedClick, WindowCount } from './demo-records.js';

export interface DemoExpectation {
  readonly n: number;
  readonly users: number;
  /** Clicks per page. */
  readonly pageClicks: ReadonlyMap<string, number>;
  /** Clicks per user. */
  readonly userClicks: ReadonlyMap<string, number>;
  /** Clicks per user and window, by {@link windowKey}. */
  readonly windowClicks: ReadonlyMap<string, number>;
}

/** Key of a (user, window start) pair in {@link DemoExpectation.windowClicks}. */
export function windowKey(user: string, start: number): string {
  return `${user}@${start}`;
}

export interface DemoVerdict {
  readonly mode: CheckpointMode;
  readonly ok: boolean;
  /** Output records. */
  readonly records: number;
  /** Distinct clicks in the output. */
  readonly distinct: number;
  /** Clicks without an output record. */
  readonly missing: number;
  /** Output records beyond the first for their click. */
  readonly duplicates: number;
  /** Records naming no click of the stream, or with another user/page than their click. */
  readonly corrupt: number;
  /**
   * Exactly-once: running-count values that are wrong (out of 1..n for their key, repeated, or
   * never emitted). Always computed; only exactly-once fails on it.
   */
  readonly countErrors: number;
  /** Sum over pages and users of how far the highest count exceeds the true count. */
  readonly overcount: number;
  /** Window results in the output. */
  readonly windowRecords: number;
  /** Windows of the stream without a result counting at least their clicks (lost clicks). */
  readonly windowsLost: number;
  /** Window results beyond the first for their (user, window). */
  readonly windowDuplicates: number;
  /** Window results whose count is not the window's true count (exactly-once fails on it). */
  readonly windowCountErrors: number;
  /** Sum over window results of how far the count exceeds the true count. */
  readonly windowOvercount: number;
  /** Window results for a (user, window) without clicks, or not a well-formed result. */
  readonly windowsCorrupt: number;
  /** Up to five examples of what is wrong, for the report. */
  readonly problems: readonly string[];
}

/** Counts clicks per page, per user and per user and window by generating the stream on this thread. */
export function computeExpectation(n: number, users: number): DemoExpectation {
  const pageClicks = new Map<string, number>();
  const userClicks = new Map<string, number>();
  const windowClicks = new Map<string, number>();
  for (let seq = 0; seq < n; seq++) {
    const c = clickAt(seq, users);
    pageClicks.set(c.page, (pageClicks.get(c.page) ?? 0) + 1);
    userClicks.set(c.user, (userClicks.get(c.user) ?? 0) + 1);
    const w = windowKey(c.user, demoWindowStart(c.ts));
    windowClicks.set(w, (windowClicks.get(w) ?? 0) + 1);
  }
  return { n, users, pageClicks, userClicks, windowClicks };
}

const MAX_PROBLEMS = 5;

export function verifyDemoOutput(
  mode: CheckpointMode,
  output: readonly CountedClick[],
  windows: readonly WindowCount[],
  expected: DemoExpectation,
): DemoVerdict {
  const problems: string[] = [];
  const note = (p: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const seen = new Uint32Array(expected.n);
  let corrupt = 0;
  const pages = new KeyCounts(expected.pageClicks);
  const users = new KeyCounts(expected.userClicks);
  for (const r of output) {
    if (!Number.isSafeInteger(r.seq) || r.seq < 0 || r.seq >= expected.n) {
      corrupt++;
      note(`record for unknown click seq=${r.seq}`);
      continue;
    }
    const click = clickAt(r.seq, expected.users);
    if (click.user !== r.user || click.page !== r.page) {
      corrupt++;
      note(`click ${r.seq} is ${click.user} on ${click.page}, output says ${r.user} on ${r.page}`);
      continue;
    }
    seen[r.seq]++;
    pages.add(r.page, r.pageViews);
    users.add(r.user, r.userClicks);
  }
  let distinct = 0;
  let firstMissing = -1;
  for (let seq = 0; seq < expected.n; seq++) {
    if (seen[seq] > 0) distinct++;
    else if (firstMissing < 0) firstMissing = seq;
  }
  const valid = output.length - corrupt;
  const missing = expected.n - distinct;
  const duplicates = valid - distinct;
  if (missing > 0) note(`${missing} click(s) missing from the output, the first is seq=${firstMissing}`);
  if (duplicates > 0) note(`${duplicates} duplicate output record(s)`);
  const pageCheck = pages.check('page');
  const userCheck = users.check('user');
  const countErrors = pageCheck.errors + userCheck.errors;
  if (mode === 'exactly-once') for (const p of [...pageCheck.examples, ...userCheck.examples]) note(p);
  const w = checkWindows(windows, expected.windowClicks);
  if (w.lost > 0) note(`${w.lost} window(s) without a result counting all their clicks, e.g. ${w.firstLost}`);
  if (w.corrupt > 0) note(`${w.corrupt} window result(s) for a user and window without clicks`);
  if (mode === 'exactly-once') {
    if (w.duplicates > 0) note(`${w.duplicates} duplicate window result(s)`);
    if (w.countErrors > 0) note(`${w.countErrors} window result(s) with a wrong count, e.g. ${w.firstWrong}`);
  }
  const ok =
    mode === 'exactly-once'
      ? missing === 0 &&
        duplicates === 0 &&
        corrupt === 0 &&
        countErrors === 0 &&
        w.lost === 0 &&
        w.duplicates === 0 &&
        w.countErrors === 0 &&
        w.corrupt === 0
      : missing === 0 && corrupt === 0 && w.lost === 0 && w.corrupt === 0;
  return {
    mode,
    ok,
    records: output.length,
    distinct,
    missing,
    duplicates,
    corrupt,
    countErrors,
    overcount: pageCheck.overcount + userCheck.overcount,
    windowRecords: windows.length,
    windowsLost: w.lost,
    windowDuplicates: w.duplicates,
    windowCountErrors: w.countErrors,
    windowOvercount: w.overcount,
    windowsCorrupt: w.corrupt,
    problems,
  };
}

/** Window results against the true counts per (user, window). */
function checkWindows(windows: readonly WindowCount[], expected: ReadonlyMap<string, number>) {
  /** Highest count seen per window, and results per window. */
  const best = new Map<string, number>();
  const results = new Map<string, number>();
  let corrupt = 0;
  let countErrors = 0;
  let overcount = 0;
  let firstWrong = '';
  for (const r of windows) {
    const key = windowKey(r.user, r.start);
    const n = expected.get(key);
    if (n === undefined || !Number.isSafeInteger(r.clicks)) {
      corrupt++;
      continue;
    }
    results.set(key, (results.get(key) ?? 0) + 1);
    best.set(key, Math.max(best.get(key) ?? 0, r.clicks));
    if (r.clicks !== n) {
      countErrors++;
      if (firstWrong === '') firstWrong = `${key}: ${r.clicks} clicks, true count ${n}`;
    }
    overcount += Math.max(0, r.clicks - n);
  }
  let lost = 0;
  let firstLost = '';
  let duplicates = 0;
  for (const [key, n] of expected) {
    if ((best.get(key) ?? 0) < n) {
      lost++;
      if (firstLost === '') firstLost = `${key} (${best.get(key) ?? 'no result'} of ${n} clicks)`;
    }
    duplicates += Math.max(0, (results.get(key) ?? 0) - 1);
  }
  return { lost, firstLost, duplicates, countErrors, firstWrong, overcount, corrupt };
}

/** Per key: how often each running-count value 1..expected was emitted, and the highest value. */
class KeyCounts {
  readonly #expected: ReadonlyMap<string, number>;
  readonly #hits = new Map<string, Uint32Array>();
  readonly #max = new Map<string, number>();
  #unknownKeys = 0;
  #outOfRange = 0;

  constructor(expected: ReadonlyMap<string, number>) {
    this.#expected = expected;
  }

  add(key: string, value: number): void {
    const n = this.#expected.get(key);
    if (n === undefined) {
      this.#unknownKeys++;
      return;
    }
    this.#max.set(key, Math.max(this.#max.get(key) ?? 0, value));
    if (!Number.isInteger(value) || value < 1 || value > n) {
      this.#outOfRange++;
      return;
    }
    let hits = this.#hits.get(key);
    if (!hits) this.#hits.set(key, (hits = new Uint32Array(n + 1)));
    hits[value]++;
  }

  check(what: string): { errors: number; overcount: number; examples: string[] } {
    let errors = this.#unknownKeys + this.#outOfRange;
    let overcount = 0;
    const examples: string[] = [];
    if (this.#outOfRange > 0) examples.push(`${this.#outOfRange} ${what} count(s) above the true total`);
    for (const [key, n] of this.#expected) {
      const hits = this.#hits.get(key);
      let wrong = 0;
      for (let v = 1; v <= n; v++) if ((hits?.[v] ?? 0) !== 1) wrong++;
      if (wrong > 0 && examples.length < 2) {
        examples.push(`${what} ${key}: ${wrong} of its running counts 1..${n} not emitted exactly once`);
      }
      errors += wrong;
      overcount += Math.max(0, (this.#max.get(key) ?? 0) - n);
    }
    return { errors, overcount, examples };
  }
}

/** The demo's exit code: 1 when any check failed (exactly-once not exact, at-least-once lost a click). */
export function demoExitCode(verdicts: readonly DemoVerdict[]): 0 | 1 {
  return verdicts.every((v) => v.ok) ? 0 : 1;
}
