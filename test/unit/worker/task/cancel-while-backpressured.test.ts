/**
 * A task blocked on a full output (its consumer stopped reading) still sees a cancel: the cancel
 * interrupts the output wait, the task throws TaskCancelledError, and closes its operators and
 * gate. Other commands wait for the loop: a checkpoint completion sent while blocked is not served.
 */
import { describe, expect, it } from 'vitest';
import { TaskCancelledError } from '../../../../src/worker/stream-task.js';
import { records, taskHarness } from './task-harness.js';

describe('StreamTask under backpressure', () => {
  it('is cancelled while waiting for output capacity', async () => {
    const h = taskHarness({ operators: ['a', 'b'], outputs: 2 });
    // The second output fills up with the first record.
    h.operators[1].onRecord = () => {
      h.outputs[1].backlogged = true;
    };
    const run = h.task.run();
    h.gate.push(0, records([1, 2, 3]), records([4]));
    await h.outputs[1].waiting;
    expect(h.operators[0].received.map((r) => r.value)).toEqual([1, 2, 3]);
    expect(h.gate.pending(0)).toBe(1); // blocked: the next frame is not read

    h.task.control.notifyCheckpointComplete(9);
    h.task.control.cancel();
    await expect(run).rejects.toBeInstanceOf(TaskCancelledError);
    expect(h.task.cancelled).toBe(true);
    expect(h.operators[0].completed).toEqual([]);
    expect(h.operators.every((op) => op.closed)).toBe(true);
    expect(h.gate.closed).toBe(true);
    expect(h.events.map((e) => e.kind)).toEqual([]);
  });

  it('goes on once the output has capacity again', async () => {
    const h = taskHarness({ operators: ['a'] });
    h.operators[0].onRecord = () => {
      h.outputs[0].backlogged = true;
    };
    const run = h.task.run();
    h.gate.push(0, records([1]), records([2]));
    await h.outputs[0].waiting;
    expect(h.operators[0].received.map((r) => r.value)).toEqual([1]);
    h.operators[0].onRecord = null;
    h.outputs[0].release();
    h.gate.push(0, { kind: 'end-of-partition' });
    await h.until((e) => e.kind === 'input-ended');
    expect(h.operators[0].received.map((r) => r.value)).toEqual([1, 2]);
    h.task.control.cancel();
    await expect(run).rejects.toBeInstanceOf(TaskCancelledError);
  });
});
