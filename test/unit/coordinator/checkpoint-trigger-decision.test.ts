import { describe, expect, it } from 'vitest';
import { decideTrigger, type TriggerFacts } from '../../../src/coordinator/checkpoint-trigger-decision.js';

const base: TriggerFacts = {
  kind: 'periodic',
  nowMs: 1000,
  jobRunning: true,
  sourcesFinished: false,
  pendingCount: 0,
  lastTriggerMs: 900,
  lastCompletionMs: 950,
  intervalMs: 100,
  minPauseMs: 0,
  maxConcurrent: 1,
};

describe('decideTrigger', () => {
  it('triggers when the interval since the last trigger has passed', () => {
    expect(decideTrigger(base)).toEqual({ kind: 'trigger' });
    expect(decideTrigger({ ...base, nowMs: 999 })).toEqual({
      kind: 'wait',
      untilMs: 1000,
      reason: 'interval',
    });
    expect(decideTrigger({ ...base, lastTriggerMs: undefined, lastCompletionMs: undefined })).toEqual({
      kind: 'trigger',
    });
  });

  it('suspended periodic checkpoints wait for good; forced ones still trigger', () => {
    expect(decideTrigger({ ...base, periodicSuspended: true })).toEqual({
      kind: 'wait',
      untilMs: Infinity,
      reason: 'periodic-suspended',
    });
    expect(decideTrigger({ ...base, kind: 'savepoint', periodicSuspended: true })).toEqual({
      kind: 'trigger',
    });
    expect(decideTrigger({ ...base, kind: 'final', periodicSuspended: true })).toEqual({ kind: 'trigger' });
  });

  it('waits for an event when the job is not running or the sources finished', () => {
    expect(decideTrigger({ ...base, jobRunning: false })).toEqual({
      kind: 'wait',
      untilMs: Infinity,
      reason: 'job-not-running',
    });
    expect(decideTrigger({ ...base, kind: 'savepoint', jobRunning: false })).toMatchObject({
      reason: 'job-not-running',
    });
    expect(decideTrigger({ ...base, sourcesFinished: true })).toMatchObject({
      untilMs: Infinity,
      reason: 'sources-finished',
    });
    expect(decideTrigger({ ...base, kind: 'manual', sourcesFinished: true })).toMatchObject({
      reason: 'sources-finished',
    });
    expect(decideTrigger({ ...base, kind: 'final', sourcesFinished: true })).toEqual({ kind: 'trigger' });
  });

  it('maxConcurrent: waits for a pending checkpoint to end', () => {
    expect(decideTrigger({ ...base, pendingCount: 1 })).toEqual({
      kind: 'wait',
      untilMs: Infinity,
      reason: 'max-concurrent',
    });
    expect(decideTrigger({ ...base, pendingCount: 1, maxConcurrent: 2 })).toEqual({ kind: 'trigger' });
  });

  it('minPause: waits minPause after the last completion, and implies one checkpoint at a time', () => {
    expect(decideTrigger({ ...base, minPauseMs: 80 })).toEqual({
      kind: 'wait',
      untilMs: 1030,
      reason: 'min-pause',
    });
    expect(decideTrigger({ ...base, minPauseMs: 80, nowMs: 1030 })).toEqual({ kind: 'trigger' });
    expect(decideTrigger({ ...base, minPauseMs: 10, nowMs: 1030, lastCompletionMs: 500 })).toEqual({
      kind: 'trigger',
    });
    expect(decideTrigger({ ...base, minPauseMs: 10, maxConcurrent: 5, pendingCount: 1 })).toMatchObject({
      reason: 'max-concurrent',
    });
    // The later of the two constraints wins.
    expect(decideTrigger({ ...base, nowMs: 950, minPauseMs: 20 })).toEqual({
      kind: 'wait',
      untilMs: 1000,
      reason: 'interval',
    });
  });

  it('forced kinds ignore interval, minPause and maxConcurrent', () => {
    const busy = { ...base, nowMs: 901, pendingCount: 3, minPauseMs: 500 };
    expect(decideTrigger(busy)).toMatchObject({ kind: 'wait' });
    for (const kind of ['manual', 'savepoint', 'final'] as const) {
      expect(decideTrigger({ ...busy, kind })).toEqual({ kind: 'trigger' });
    }
  });
});
