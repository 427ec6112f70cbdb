/**
 * The demo's correctness check must fail when the output is wrong, not only pass when it is
 * right: outputs are built by a scripted model of the job (two source subtasks interleaved by a
 * seeded generator, running counts per page and per user), with and without restore mistakes;
 * window results start from the exact ones (counted here with a plain loop) and are perturbed.
 */

import { describe, expect, it } from 'vitest';
import { clickAt, DEMO_WINDOW_MS, demoWindowStart } from '../../../src/demo/demo-clicks.js';
import type { CountedClick, WindowCount } from '../../../src/demo/demo-records.js';
import { computeExpectation, demoExitCode, verifyDemoOutput } from '../../../src/demo/demo-verify.js';

const N = 3000;
const USERS = 200;
const expected = computeExpectation(N, USERS);

/** The exact window results: clicks per user per window, counted by a plain loop. */
function exactWindows(): WindowCount[] {
  const byKey = new Map<string, WindowCount>();
  for (let seq = 0; seq < N; seq++) {
    const c = clickAt(seq, USERS);
    const start = demoWindowStart(c.ts);
    const prev = byKey.get(`${c.user}@${start}`);
    byKey.set(`${c.user}@${start}`, { user: c.user, start, clicks: (prev?.clicks ?? 0) + 1 });
  }
  return [...byKey.values()];
}
const WINDOWS = exactWindows();

function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

/** Arrival order at the keyed operators: two contiguous source splits interleaved. */
function arrivalOrder(seed: number): number[] {
  const next = seeded(seed);
  const order: number[] = [];
  let a = 0;
  let b = N / 2;
  while (a < N / 2 || b < N) {
    if (b >= N || (a < N / 2 && next() < 0.5)) order.push(a++);
    else order.push(b++);
  }
  return order;
}

class Counts {
  pages = new Map<string, number>();
  users = new Map<string, number>();
  apply(seq: number): CountedClick {
    const c = clickAt(seq, USERS);
    const pageViews = (this.pages.get(c.page) ?? 0) + 1;
    const userClicks = (this.users.get(c.user) ?? 0) + 1;
    this.pages.set(c.page, pageViews);
    this.users.set(c.user, userClicks);
    return { seq, user: c.user, page: c.page, pageViews, userClicks, appendedAt: 0 };
  }
  copy(): Counts {
    const c = new Counts();
    c.pages = new Map(this.pages);
    c.users = new Map(this.users);
    return c;
  }
}

/**
 * A run with a crash after `crashAt` records and a restore of the state (and source position)
 * taken after `checkpointAt` records. `keepUncommitted`: the output processed between the
 * checkpoint and the crash stays (at-least-once) or is discarded (exactly-once).
 * `rewindState: false` models a broken restore that keeps the crashed attempt's counts.
 */
function run(
  opts: { checkpointAt?: number; crashAt?: number; keepUncommitted?: boolean; rewindState?: boolean } = {},
) {
  const order = arrivalOrder(7);
  const { checkpointAt = -1, crashAt = -1, keepUncommitted = false, rewindState = true } = opts;
  let state = new Counts();
  let snapshot = state.copy();
  const out: CountedClick[] = [];
  for (let i = 0; i < (crashAt < 0 ? order.length : crashAt); i++) {
    if (i === checkpointAt) snapshot = state.copy();
    out.push(state.apply(order[i]));
  }
  if (crashAt < 0) return out;
  const kept = keepUncommitted ? out : out.slice(0, checkpointAt);
  if (rewindState) state = snapshot;
  for (let i = checkpointAt; i < order.length; i++) kept.push(state.apply(order[i]));
  return kept;
}

describe('verifyDemoOutput', () => {
  it('passes a straight run in both modes', () => {
    const out = run();
    const eo = verifyDemoOutput('exactly-once', out, WINDOWS, expected);
    expect(eo).toMatchObject({
      ok: true,
      records: N,
      distinct: N,
      missing: 0,
      duplicates: 0,
      countErrors: 0,
    });
    expect(verifyDemoOutput('at-least-once', out, WINDOWS, expected).ok).toBe(true);
  });

  it('passes an exactly-once restore (uncommitted output discarded, state rewound)', () => {
    const out = run({ checkpointAt: 1000, crashAt: 1600 });
    expect(verifyDemoOutput('exactly-once', out, WINDOWS, expected)).toMatchObject({
      ok: true,
      duplicates: 0,
      countErrors: 0,
    });
  });

  it('fails exactly-once on replayed (duplicated) output; at-least-once counts the duplicates', () => {
    const out = run({ checkpointAt: 1000, crashAt: 1600, keepUncommitted: true });
    const eo = verifyDemoOutput('exactly-once', out, WINDOWS, expected);
    expect(eo.ok).toBe(false);
    expect(eo.duplicates).toBe(600);
    expect(eo.problems.join('\n')).toMatch(/600 duplicate/);
    const alo = verifyDemoOutput('at-least-once', out, WINDOWS, expected);
    expect(alo).toMatchObject({ ok: true, missing: 0, duplicates: 600 });
  });

  it('fails exactly-once on a single duplicated record', () => {
    const out = run();
    out.splice(10, 0, { ...out[500] });
    expect(verifyDemoOutput('exactly-once', out, WINDOWS, expected)).toMatchObject({
      ok: false,
      duplicates: 1,
    });
  });

  it('fails exactly-once when counts were applied twice even though no record is duplicated', () => {
    const out = run({ checkpointAt: 1000, crashAt: 1600, rewindState: false });
    const eo = verifyDemoOutput('exactly-once', out, WINDOWS, expected);
    expect(eo.duplicates).toBe(0);
    expect(eo.missing).toBe(0);
    expect(eo.countErrors).toBeGreaterThan(0);
    expect(eo.ok).toBe(false);
    const alo = verifyDemoOutput('at-least-once', out, WINDOWS, expected);
    expect(alo.ok).toBe(true);
    expect(alo.overcount).toBeGreaterThan(0);
  });

  it('fails both modes when a record is missing', () => {
    const out = run({ checkpointAt: 1000, crashAt: 1600, keepUncommitted: true });
    const victim = out.findIndex((r) => r.seq === 2999);
    out.splice(victim, 1);
    for (const mode of ['exactly-once', 'at-least-once'] as const) {
      const v = verifyDemoOutput(mode, out, WINDOWS, expected);
      expect(v.ok, mode).toBe(false);
      expect(v.missing, mode).toBe(1);
      expect(v.problems.join('\n'), mode).toMatch(/first is seq=2999/);
    }
  });

  it('fails both modes on a corrupt record (wrong page for its click, or an unknown click)', () => {
    const wrongPage = run();
    const r = wrongPage[0];
    wrongPage[0] = { ...r, page: r.page === '/' ? '/help' : '/' };
    const unknown = [...run(), { ...run()[0], seq: N + 5 }];
    for (const out of [wrongPage, unknown]) {
      for (const mode of ['exactly-once', 'at-least-once'] as const) {
        const v = verifyDemoOutput(mode, out, WINDOWS, expected);
        expect(v.ok, mode).toBe(false);
        expect(v.corrupt, mode).toBe(1);
      }
    }
  });

  it('computes the expectation by counting the generated clicks', () => {
    let pages = 0;
    for (const n of expected.pageClicks.values()) pages += n;
    let users = 0;
    for (const n of expected.userClicks.values()) users += n;
    expect(pages).toBe(N);
    expect(users).toBe(N);
  });

  it('gives a non-zero exit code when the exactly-once check fails', () => {
    const good = verifyDemoOutput('at-least-once', run(), WINDOWS, expected);
    const duplicated = run({ checkpointAt: 1000, crashAt: 1600, keepUncommitted: true });
    const badEo = verifyDemoOutput('exactly-once', duplicated, WINDOWS, expected);
    expect(demoExitCode([verifyDemoOutput('exactly-once', run(), WINDOWS, expected), good])).toBe(0);
    expect(demoExitCode([badEo, good])).toBe(1);
    expect(demoExitCode([verifyDemoOutput('at-least-once', duplicated, WINDOWS, expected)])).toBe(0);
  });
});

describe('verifyDemoOutput: windows', () => {
  const counts = run();
  const check = (mode: 'exactly-once' | 'at-least-once', windows: WindowCount[]) =>
    verifyDemoOutput(mode, counts, windows, expected);
  /** A window with more than one click (so a lower count is still a valid result). */
  const busy = WINDOWS.findIndex((w) => w.clicks > 1);

  it('passes the exact results in both modes', () => {
    expect(WINDOWS.length).toBe(expected.windowClicks.size);
    expect(WINDOWS.some((w) => w.start !== WINDOWS[0].start)).toBe(true); // several windows
    for (const mode of ['exactly-once', 'at-least-once'] as const) {
      expect(check(mode, WINDOWS), mode).toMatchObject({
        ok: true,
        windowRecords: WINDOWS.length,
        windowsLost: 0,
        windowDuplicates: 0,
        windowCountErrors: 0,
      });
    }
  });

  it('fails exactly-once on a repeated window result; at-least-once counts it', () => {
    const windows = [...WINDOWS, { ...WINDOWS[3] }];
    expect(check('exactly-once', windows)).toMatchObject({ ok: false, windowDuplicates: 1 });
    expect(check('at-least-once', windows)).toMatchObject({ ok: true, windowDuplicates: 1 });
  });

  it('fails exactly-once on an overcounted window; at-least-once reports the overshoot', () => {
    const windows = WINDOWS.map((w, i) => (i === busy ? { ...w, clicks: w.clicks + 2 } : w));
    const eo = check('exactly-once', windows);
    expect(eo).toMatchObject({ ok: false, windowCountErrors: 1, windowOvercount: 2 });
    expect(eo.problems.join('\n')).toMatch(/wrong count/);
    expect(check('at-least-once', windows)).toMatchObject({ ok: true, windowOvercount: 2 });
  });

  it('fails both modes when a window is missing or undercounted (clicks lost)', () => {
    const missing = WINDOWS.filter((_, i) => i !== busy);
    const under = WINDOWS.map((w, i) => (i === busy ? { ...w, clicks: w.clicks - 1 } : w));
    // an undercounted result next to a correct one is not a loss (a replay may emit both)
    const underAndExact = [...under, WINDOWS[busy]];
    for (const mode of ['exactly-once', 'at-least-once'] as const) {
      for (const windows of [missing, under]) {
        const v = check(mode, windows);
        expect(v.ok, mode).toBe(false);
        expect(v.windowsLost, mode).toBe(1);
        expect(v.problems.join('\n'), mode).toMatch(/without a result counting all their clicks/);
      }
      expect(check(mode, underAndExact).windowsLost, mode).toBe(0);
    }
  });

  it('fails both modes on a result for a user and window without clicks', () => {
    const w = WINDOWS[0];
    const windows = [...WINDOWS, { ...w, start: w.start - 100 * DEMO_WINDOW_MS }];
    for (const mode of ['exactly-once', 'at-least-once'] as const) {
      expect(check(mode, windows), mode).toMatchObject({ ok: false, windowsCorrupt: 1 });
    }
  });
});
