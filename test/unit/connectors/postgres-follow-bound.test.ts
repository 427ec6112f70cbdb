/**
 * FollowBound (sources.postgres, incrementing mode): scripted probe sequences, then a seeded
 * simulation of concurrent inserting transactions (ids handed out before commit, commits out of id
 * order, aborts) checking that a reader that reads only through the bound emits every committed id
 * exactly once and in order; and that the same simulation catches a reader that reads to `max`.
 */
import { describe, expect, it } from 'vitest';
import { FollowBound } from '../../../src/connectors/postgres-follow-bound.js';
import { seededChooser } from '../worker/barrier/gate-simulation.js';

describe('FollowBound', () => {
  it('makes a max safe two probes later when no transaction runs', () => {
    const b = new FollowBound();
    expect(b.observe(10n, 10n, 5n)).toBe(false); // candidate 5
    expect(b.pending).toBe(true);
    expect(b.observe(11n, 11n, 7n)).toBe(false); // its xmax noted: 11
    expect(b.observe(11n, 11n, 7n)).toBe(true); // xmin 11 ≥ 11: 5 is safe
    expect(b.safe).toBe(5n);
    expect(b.pending).toBe(true); // 7 waits next
    expect(b.observe(11n, 11n, 7n)).toBe(false);
    expect(b.observe(11n, 11n, 7n)).toBe(true);
    expect(b.safe).toBe(7n);
    expect(b.pending).toBe(false);
    expect(b.observe(11n, 11n, 7n)).toBe(false); // nothing new: idle
    expect(b.pending).toBe(false);
  });

  it('waits for a transaction running at the second probe to end', () => {
    const b = new FollowBound();
    b.observe(20n, 20n, 3n);
    b.observe(20n, 22n, 3n); // xid 20, 21 running: xmax 22
    expect(b.observe(21n, 23n, 9n)).toBe(false); // 21 still runs
    expect(b.observe(21n, 23n, 9n)).toBe(false);
    expect(b.safe).toBe(null);
    expect(b.observe(23n, 23n, 9n)).toBe(true);
    expect(b.safe).toBe(3n);
  });

  it('has no bound for an empty table, and refuses a snapshot with xmin above xmax', () => {
    const b = new FollowBound();
    for (let i = 0; i < 3; i++) expect(b.observe(5n, 5n, null)).toBe(false);
    expect(b.pending).toBe(false);
    expect(() => b.observe(6n, 5n, null)).toThrow(RangeError);
  });

  /**
   * Transactions take ids (nextval) and get their xid at their first write up to `window` steps
   * later; they insert more rows, commit or abort at random; every `interval` steps the reader
   * probes and reads the committed ids in (last read, limit], `limit` being the bound or, for the
   * naive reader, the max. Returns the ids read and the ids committed.
   */
  function simulate(seed: number, naive: boolean): { read: number[]; committed: number[] } {
    const choose = seededChooser(seed);
    const interval = 4;
    const window = interval - 1;
    interface Tx {
      xid: number | null;
      xidAt: number; // step at which the first write assigns the xid
      ids: number[];
      ended: boolean;
    }
    let nextId = 1;
    let nextXid = 100;
    const running: Tx[] = [];
    const visible = new Set<number>();
    const committed: number[] = [];
    const read: number[] = [];
    let last = 0;
    const bound = new FollowBound();
    const probe = () => {
      const xids = running.filter((t) => t.xid !== null).map((t) => t.xid!);
      const xmin = xids.length === 0 ? nextXid : Math.min(...xids);
      const max = visible.size === 0 ? null : Math.max(...visible);
      bound.observe(BigInt(xmin), BigInt(nextXid), max === null ? null : BigInt(max));
      const limit = naive ? max : bound.safe === null ? null : Number(bound.safe);
      if (limit === null) return;
      const rows = [...visible].filter((id) => id > last && id <= limit).sort((a, b) => a - b);
      for (const id of rows) read.push(id);
      if (rows.length > 0) last = rows[rows.length - 1];
    };
    const steps = 400;
    for (let step = 0; step < steps + 20 * interval; step++) {
      for (const t of running) if (t.xid === null && step >= t.xidAt) t.xid = nextXid++;
      if (step < steps) {
        const action = choose(4);
        if (action === 0 || running.length === 0) {
          running.push({ xid: null, xidAt: step + choose(window + 1), ids: [nextId++], ended: false });
        } else {
          const t = running[choose(running.length)];
          if (action === 1) {
            t.ids.push(nextId++);
            if (t.xid === null) t.xid = nextXid++;
          } else if (t.xid !== null) {
            t.ended = true;
            if (action === 2) {
              for (const id of t.ids) visible.add(id);
              committed.push(...t.ids);
            }
          }
        }
      } else {
        // Wind down: every transaction gets its xid and commits.
        for (const t of running) {
          if (t.xid === null) t.xid = nextXid++;
          t.ended = true;
          for (const id of t.ids) visible.add(id);
          committed.push(...t.ids);
        }
      }
      for (let i = running.length - 1; i >= 0; i--) if (running[i].ended) running.splice(i, 1);
      if (step % interval === 0) probe();
    }
    return { read, committed: committed.sort((a, b) => a - b) };
  }

  it('a reader through the bound reads every committed id once, in order (seeded, 200 runs)', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const { read, committed } = simulate(seed, false);
      expect(committed.length).toBeGreaterThan(50);
      expect(read, `seed ${seed}`).toEqual(committed);
    }
  });

  it('the same simulation catches a reader that reads straight to max (it skips rows)', () => {
    let skipped = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const { read, committed } = simulate(seed, true);
      if (read.length < committed.length) skipped++;
    }
    expect(skipped).toBeGreaterThan(0);
  });
});
