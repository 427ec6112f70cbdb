import { describe, expect, it } from 'vitest';
import { loadShares, SubtaskLoad, taskLoad } from '../../../src/dashboard/task-load.js';

describe('loadShares', () => {
  it('splits an interval into idle, backpressured and the busy rest', () => {
    expect(
      loadShares({ idleMs: 100, backpressuredMs: 0 }, { idleMs: 350, backpressuredMs: 250 }, 1000),
    ).toEqual({ busy: 0.5, idle: 0.25, backpressured: 0.25 });
  });
  it('clamps counters that moved further than the interval (sample jitter) and refuses an empty interval', () => {
    const s = loadShares({ idleMs: 0, backpressuredMs: 0 }, { idleMs: 900, backpressuredMs: 300 }, 1000)!;
    expect(s.idle).toBe(0.9);
    expect(s.backpressured).toBeCloseTo(0.1);
    expect(s.busy).toBeCloseTo(0);
    expect(loadShares({ idleMs: 0, backpressuredMs: 0 }, { idleMs: 1500, backpressuredMs: 0 }, 1000)).toEqual(
      {
        busy: 0,
        idle: 1,
        backpressured: 0,
      },
    );
    expect(loadShares({ idleMs: 0, backpressuredMs: 0 }, { idleMs: 1, backpressuredMs: 0 }, 0)).toBeNull();
  });
});

describe('SubtaskLoad', () => {
  it('has shares from the second sample on and totals that survive a restart', () => {
    const l = new SubtaskLoad(3);
    l.sample({ idleMs: 0, backpressuredMs: 0, outputFill: 0.5 }, 1000);
    expect(l.view().shares).toBeNull();
    l.sample({ idleMs: 800, backpressuredMs: 100, outputFill: 1 }, 2000);
    expect(l.view()).toMatchObject({
      subtask: 3,
      outputFill: 1,
      inputFill: null,
      idleSeconds: 0.8,
      backpressuredSeconds: 0.1,
    });
    expect(l.view().shares?.idle).toBeCloseTo(0.8);
    expect(l.view().shares?.busy).toBeCloseTo(0.1);
    l.foldAttempt();
    expect(l.view()).toMatchObject({ shares: null, idleSeconds: 0.8, backpressuredSeconds: 0.1 });
    l.sample({ idleMs: 200, backpressuredMs: 0, inputFill: 0.25 }, 3000);
    expect(l.view()).toMatchObject({ shares: null, idleSeconds: 1, inputFill: 0.25, outputFill: null });
  });
  it('a reading whose counters went down (a new attempt not folded yet) gives no shares', () => {
    const l = new SubtaskLoad(0);
    l.sample({ idleMs: 500, backpressuredMs: 0 }, 1000);
    l.sample({ idleMs: 10, backpressuredMs: 0 }, 2000);
    expect(l.view().shares).toBeNull();
    l.sample({ idleMs: 510, backpressuredMs: 0 }, 3000);
    expect(l.view().shares?.idle).toBeCloseTo(0.5);
  });
});

describe('taskLoad', () => {
  it('takes from each subtask what shows most: highest busy, backpressure and fill, lowest idle', () => {
    const view = (busy: number, idle: number, backpressured: number, fill: number | null) => ({
      subtask: 0,
      shares: { busy, idle, backpressured },
      outputFill: fill,
      inputFill: null,
      idleSeconds: 0,
      backpressuredSeconds: 0,
      remoteEdges: [],
    });
    expect(taskLoad([view(0.2, 0.8, 0, 0.1), view(0.3, 0.1, 0.6, 0.9)])).toEqual({
      shares: { busy: 0.3, idle: 0.1, backpressured: 0.6 },
      outputFill: 0.9,
      inputFill: null,
    });
    expect(taskLoad([])).toEqual({ shares: null, outputFill: null, inputFill: null });
  });
});
