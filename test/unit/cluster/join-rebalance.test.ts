import { describe, expect, it } from 'vitest';
import {
  decideRebalance,
  INITIAL_REBALANCE_STATE,
  type RebalanceFacts,
  type RebalanceState,
} from '../../../src/cluster/join-rebalance.js';

const DELAY = 1000;
const base: RebalanceFacts = {
  assigned: ['a', 'b'],
  live: ['a', 'b'],
  now: 10_000,
  deployedAt: 0,
  finishing: false,
  committing: false,
};

/** Feeds a scripted sequence of facts; returns each decision's kind (and why, for a wait). */
function run(steps: Partial<RebalanceFacts>[]): string[] {
  let state: RebalanceState = INITIAL_REBALANCE_STATE;
  return steps.map((s) => {
    const { next, decision } = decideRebalance(state, { ...base, ...s }, DELAY);
    state = next;
    return decision.kind === 'wait' ? `wait:${decision.why}` : decision.kind;
  });
}

describe('decideRebalance (an instance joining a running job)', () => {
  it('does nothing while every live member is assigned (a dead assigned member is the timeout path)', () => {
    expect(run([{}, { live: ['a'] }, { now: 20_000 }])).toEqual(['none', 'none', 'none']);
  });

  it('restarts once the window since the first joiner passed; joiners within it share the restart', () => {
    let state: RebalanceState = INITIAL_REBALANCE_STATE;
    const at = (now: number, live: string[]) => {
      const r = decideRebalance(state, { ...base, now, live }, DELAY);
      state = r.next;
      return r.decision;
    };
    expect(at(10_000, ['a', 'b', 'c'])).toMatchObject({ kind: 'wait', why: 'window', joiners: ['c'] });
    // A second joiner inside the window does not extend it.
    expect(at(10_600, ['a', 'b', 'c', 'd'])).toMatchObject({ kind: 'wait', joiners: ['c', 'd'] });
    expect(at(10_999, ['a', 'b', 'c', 'd']).kind).toBe('wait');
    expect(at(11_000, ['a', 'b', 'c', 'd'])).toEqual({ kind: 'restart', joiners: ['c', 'd'] });
  });

  it('resets the window when the joiner disappears before it passed', () => {
    expect(
      run([
        { now: 10_000, live: ['a', 'b', 'c'] },
        { now: 10_500, live: ['a', 'b'] },
        { now: 11_000, live: ['a', 'b', 'c'] },
        { now: 11_500, live: ['a', 'b', 'c'] },
        { now: 12_000, live: ['a', 'b', 'c'] },
      ]),
    ).toEqual(['wait:window', 'none', 'wait:window', 'wait:window', 'restart']);
  });

  it('never rebalances a run sooner than the delay after its deployment', () => {
    expect(
      run([
        { now: 10_000, deployedAt: 9_500, live: ['a', 'b', 'c'] },
        { now: 11_000, deployedAt: 10_500, live: ['a', 'b', 'c'] },
        { now: 11_500, deployedAt: 10_500, live: ['a', 'b', 'c'] },
      ]),
    ).toEqual(['wait:window', 'wait:deploying', 'restart']);
  });

  it('waits while a checkpoint record is being committed, and never once the job is finishing', () => {
    expect(
      run([
        { now: 10_000, live: ['a', 'b', 'c'] },
        { now: 11_000, live: ['a', 'b', 'c'], committing: true },
        { now: 11_100, live: ['a', 'b', 'c'] },
      ]),
    ).toEqual(['wait:window', 'wait:committing', 'restart']);
    expect(
      run([
        { now: 10_000, live: ['a', 'b', 'c'] },
        { now: 20_000, live: ['a', 'b', 'c'], finishing: true },
        { now: 90_000, live: ['a', 'b', 'c'], finishing: true },
      ]),
    ).toEqual(['wait:window', 'wait:finishing', 'wait:finishing']);
  });

  it('with a delay of 0 restarts at the first sight of a joiner', () => {
    const r = decideRebalance(INITIAL_REBALANCE_STATE, { ...base, live: ['c', 'a', 'b'] }, 0);
    expect(r.decision).toEqual({ kind: 'restart', joiners: ['c'] });
  });
});
