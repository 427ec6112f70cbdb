import { describe, expect, it } from 'vitest';
import {
  type FailureTarget,
  isStopFailure,
  planFailures,
  type StopFailure,
} from '../../../src/verify/failure-schedule.js';

const targets: FailureTarget[] = [
  { uid: 'map:a:0', name: 'a', parallelism: 2, recordsIn: 10_000 },
  { uid: 'keyed-process:b:0', name: 'b', parallelism: 3, recordsIn: 6000 },
  { uid: 'filter:idle:0', name: 'idle', parallelism: 1, recordsIn: 0 },
];

describe('planFailures', () => {
  it('is a pure function of the seed: same seed, same schedule; another seed, another one', () => {
    const a = planFailures({ seed: 7, count: 3, kinds: ['throw', 'exit'], targets });
    expect(planFailures({ seed: 7, count: 3, kinds: ['throw', 'exit'], targets })).toEqual(a);
    const others = [8, 9, 10, 11].map((seed) =>
      planFailures({ seed, count: 3, kinds: ['throw', 'exit'], targets }),
    );
    expect(others.some((o) => JSON.stringify(o) !== JSON.stringify(a))).toBe(true);
  });

  it('puts failure i in attempt i, in an operator that saw records, early in its subtask share', () => {
    for (let seed = 0; seed < 200; seed++) {
      const faults = planFailures({ seed, count: 4, kinds: ['throw', 'exit'], targets });
      expect(faults.map((f) => f.attempt)).toEqual([0, 1, 2, 3]);
      for (const f of faults) {
        if (isStopFailure(f)) throw new Error('only throw and exit were asked for');
        const t = targets.find((x) => x.uid === f.operatorUid)!;
        expect(t.recordsIn).toBeGreaterThan(0); // never the idle operator
        expect(f.subtaskIndex).toBeGreaterThanOrEqual(0);
        expect(f.subtaskIndex).toBeLessThan(t.parallelism);
        expect(f.atRecord).toBeGreaterThanOrEqual(Math.floor((0.05 * t.recordsIn) / t.parallelism));
        expect(f.atRecord).toBeLessThanOrEqual(Math.ceil((0.3 * t.recordsIn) / t.parallelism));
        expect(['throw', 'exit']).toContain(f.kind);
      }
    }
  });

  it('uses only the kinds asked for, and every kind over enough seeds', () => {
    const kinds = new Set<string>();
    for (let seed = 0; seed < 50; seed++) {
      for (const f of planFailures({ seed, count: 2, kinds: ['exit'], targets })) expect(f.kind).toBe('exit');
      for (const f of planFailures({ seed, count: 2, kinds: ['throw', 'exit'], targets })) kinds.add(f.kind);
    }
    expect([...kinds].sort()).toEqual(['exit', 'throw']);
  });

  it('plans nothing without failures, kinds or operators with records', () => {
    expect(planFailures({ seed: 1, count: 0, kinds: ['throw'], targets })).toEqual([]);
    expect(planFailures({ seed: 1, count: 2, kinds: [], targets })).toEqual([]);
    expect(planFailures({ seed: 1, count: 2, kinds: ['throw'], targets: [targets[2]] })).toEqual([]);
  });

  it('stop failures: 1-3 checkpoints into their attempt; savepoint and sigkill keep the parallelism, rescale changes it by one', () => {
    const seen = { savepoint: 0, rescale: 0, sigkill: 0, down: 0 };
    for (let seed = 0; seed < 200; seed++) {
      const faults = planFailures({
        seed,
        count: 4,
        kinds: ['savepoint', 'rescale', 'sigkill'],
        targets,
        parallelism: 2,
      });
      expect(faults).toEqual(
        planFailures({ seed, count: 4, kinds: ['savepoint', 'rescale', 'sigkill'], targets, parallelism: 2 }),
      );
      let p = 2;
      for (const [i, f] of faults.entries()) {
        expect(f.attempt).toBe(i);
        const stop = f as StopFailure;
        expect(isStopFailure(stop)).toBe(true);
        expect(stop.afterCheckpoints).toBeGreaterThanOrEqual(1);
        expect(stop.afterCheckpoints).toBeLessThanOrEqual(3);
        if (stop.kind !== 'rescale') expect(stop.parallelism).toBe(p);
        else {
          expect(Math.abs(stop.parallelism - p)).toBe(1);
          expect(stop.parallelism).toBeGreaterThanOrEqual(1);
          if (stop.parallelism < p) seen.down++;
        }
        seen[stop.kind]++;
        p = stop.parallelism;
      }
    }
    expect(seen.savepoint).toBeGreaterThan(0);
    expect(seen.rescale).toBeGreaterThan(0);
    expect(seen.sigkill).toBeGreaterThan(0);
    expect(seen.down).toBeGreaterThan(0);
  });

  it('without an operator to fail in, only stop failures are planned', () => {
    const faults = planFailures({ seed: 3, count: 3, kinds: ['throw', 'savepoint'], targets: [targets[2]] });
    expect(faults.map((f) => f.kind)).toEqual(['savepoint', 'savepoint', 'savepoint']);
  });
});
