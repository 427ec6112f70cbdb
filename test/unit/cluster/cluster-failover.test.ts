import { describe, expect, it } from 'vitest';
import { catchUpRestarts, decideMemberFailure } from '../../../src/cluster/cluster-failover.js';
import { createRestartStrategy } from '../../../src/coordinator/restart-strategy.js';

describe('decideMemberFailure (a member’s own failure, at the coordinator)', () => {
  it('restarts as the strategy grants, then fails the job with restarts-exhausted', () => {
    const s = createRestartStrategy({ type: 'fixed-delay', attempts: 2, delay: 7 });
    expect(decideMemberFailure('task', s, 0)).toEqual({ kind: 'restart', delayMs: 7, attempt: 1 });
    expect(decideMemberFailure('task', s, 1)).toEqual({ kind: 'restart', delayMs: 7, attempt: 2 });
    expect(decideMemberFailure('task', s, 2)).toEqual({ kind: 'fail-job', reason: 'restarts-exhausted' });
  });

  it('a fatal failure is never restarted and uses up no attempt', () => {
    const s = createRestartStrategy({ type: 'fixed-delay', attempts: 1, delay: 0 });
    expect(decideMemberFailure('fatal', s, 0)).toEqual({ kind: 'fail-job', reason: 'fatal-error' });
    expect(s.restarts).toBe(0);
    expect(decideMemberFailure('task', createRestartStrategy({ type: 'none' }), 0)).toEqual({
      kind: 'fail-job',
      reason: 'restarts-exhausted',
    });
  });

  it('a new coordinator catches up on the restarts granted before (assignment.taskRestarts)', () => {
    const s = createRestartStrategy({ type: 'fixed-delay', attempts: 2, delay: 0 });
    catchUpRestarts(s, 2, 0);
    expect(s.restarts).toBe(2);
    expect(decideMemberFailure('task', s, 0)).toEqual({ kind: 'fail-job', reason: 'restarts-exhausted' });
    const none = createRestartStrategy({ type: 'none' });
    catchUpRestarts(none, 3, 0); // gives up at once, no endless loop
    expect(none.restarts).toBe(0);
  });
});
