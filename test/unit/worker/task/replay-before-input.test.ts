/**
 * Restored channel state (in-flight records of an unaligned checkpoint) reaches the head before
 * anything the inputs deliver, in order, on its input, with each envelope's timestamp as the
 * element timestamp; new input follows.
 */
import { describe, expect, it } from 'vitest';
import { END, kindOf, records, taskHarness } from './task-harness.js';

describe('StreamTask replay of restored channel state', () => {
  it('processes replayed records before new input', async () => {
    const h = taskHarness({
      channels: 2,
      timestampedChannels: [true, false],
      replay: [
        {
          inputIndex: 0,
          timestamped: true,
          records: [
            [10, 'r1'],
            [null, 'r2'],
          ],
        },
        { inputIndex: 0, timestamped: false, records: ['r3'] },
      ],
    });
    // The inputs already hold records when the task starts.
    h.gate.push(0, records([[20, 'n1']], [7]), END);
    h.gate.push(1, records(['n2'], [8]), END);
    const run = h.task.run();
    await h.until(kindOf('input-ended'));
    expect(h.operators[0].received).toEqual([
      { value: 'r1', input: 0, keyGroup: -1, timestamp: 10 },
      { value: 'r2', input: 0, keyGroup: -1, timestamp: undefined },
      { value: 'r3', input: 0, keyGroup: undefined, timestamp: undefined },
      { value: 'n1', input: 0, keyGroup: 7, timestamp: 20 },
      { value: 'n2', input: 0, keyGroup: 8, timestamp: undefined },
    ]);
    h.task.control.cancel();
    await expect(run).rejects.toThrow('task cancelled');
  });
});
