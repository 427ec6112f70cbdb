import { describe, expect, it } from 'vitest';
import { attributeFailure, type ObservedFailure } from '../../../src/coordinator/failure-attribution.js';
import { TaskFailureError } from '../../../src/errors.js';

const failure = (
  task: string,
  operator: string | undefined,
  origin: ObservedFailure['origin'],
  consequence = false,
): ObservedFailure => ({
  error: new TaskFailureError(task, operator, `${task} failed`, undefined),
  origin,
  consequence,
});

describe('attributeFailure', () => {
  it('prefers user code over a consequence that arrived first', () => {
    const closed = failure('source (1/2)', 'numbers', 'task', true);
    const user = failure('map (2/2)', 'map', 'task');
    const primary = attributeFailure([closed, user]);
    expect(primary).toBe(user.error);
    expect(primary.suppressed).toEqual([closed.error]);
  });

  it('prefers a task failure over the checkpoint coordinator giving up', () => {
    const coordinator = failure('checkpoint coordinator', undefined, 'external');
    const died = failure('map (1/1)', undefined, 'task');
    expect(attributeFailure([coordinator, died])).toBe(died.error);
  });

  it('prefers an external failure over consequences, and a worker error over both', () => {
    const cancelled = failure('a (1/1)', undefined, 'task', true);
    const coordinator = failure('checkpoint coordinator', undefined, 'external');
    expect(attributeFailure([cancelled, coordinator])).toBe(coordinator.error);
    const worker = failure('unknown task', undefined, 'worker');
    expect(attributeFailure([cancelled, coordinator, worker])).toBe(worker.error);
  });

  it('keeps arrival order among equals and reports a lone consequence', () => {
    const first = failure('a (1/2)', 'a', 'task');
    const second = failure('a (2/2)', 'a', 'task');
    expect(attributeFailure([first, second])).toBe(first.error);
    const lone = failure('b (1/1)', 'b', 'task', true);
    expect(attributeFailure([lone])).toBe(lone.error);
  });

  it('needs a failure', () => {
    expect(() => attributeFailure([])).toThrow(RangeError);
  });
});
