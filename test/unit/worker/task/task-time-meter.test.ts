import { describe, expect, it } from 'vitest';
import { TaskTimeMeter } from '../../../../src/worker/task-time-meter.js';

describe('TaskTimeMeter', () => {
  it('adds each park to its kind and counts the park under way when read', () => {
    let now = 100;
    const m = new TaskTimeMeter(() => now);
    expect(m.read()).toEqual({ idleMs: 0, backpressuredMs: 0 });
    m.park('idle');
    now = 130;
    expect(m.read()).toEqual({ idleMs: 30, backpressuredMs: 0 }); // read mid-park
    m.unpark();
    now = 200; // busy time counts nowhere
    m.park('backpressured');
    now = 210;
    m.unpark();
    m.unpark(); // no park under way: nothing changes
    expect(m.read()).toEqual({ idleMs: 30, backpressuredMs: 10 });
  });

  it('a new park ends the one under way (parks never nest)', () => {
    let now = 0;
    const m = new TaskTimeMeter(() => now);
    m.park('idle');
    now = 5;
    m.park('backpressured');
    now = 12;
    m.unpark();
    expect(m.read()).toEqual({ idleMs: 5, backpressuredMs: 7 });
  });
});
