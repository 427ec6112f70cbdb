/**
 * Direct checkpoint triggers (FLIP-147) at a gate task: after end of input the task snapshots its
 * final state without forwarding a barrier (its consumers count the ended channel as aligned); a
 * non-final trigger leaves it alive, only the final one's completion lets it exit. While input
 * still runs, a direct trigger cannot be served by a non-source task and is declined.
 */
import { describe, expect, it } from 'vitest';
import { barrier, END, kindOf, records, taskHarness } from './task-harness.js';

describe('StreamTask direct triggers', () => {
  it('after end of input: a non-final trigger is acknowledged and the task stays; the final one ends it', async () => {
    const h = taskHarness({ operators: ['a', 'b'] });
    let exited = false;
    const run = h.task.run().then((m) => {
      exited = true;
      return m;
    });
    h.gate.push(0, records([1, 2]), END);
    await h.until(kindOf('input-ended'));
    expect(h.operators.every((op) => op.finished)).toBe(true);
    expect(h.outputs[0].control).toEqual([{ kind: 'end-of-partition' }]);

    h.task.control.triggerCheckpoint(3, 0, 'checkpoint', false);
    const ack3 = await h.until(kindOf('acknowledge', 3));
    expect(ack3.kind === 'acknowledge' && ack3.metrics.alignmentDurationMs).toBe(0);
    expect(h.storage.writes.filter((w) => w.checkpointId === 3).map((w) => w.operatorState)).toEqual([
      [2],
      [2],
    ]);
    h.task.control.notifyCheckpointComplete(3);

    // Still serving commands after the non-final checkpoint completed: the next trigger is taken.
    h.task.control.triggerCheckpoint(4, 0, 'checkpoint', true);
    await h.until(kindOf('acknowledge', 4));
    expect(exited).toBe(false);
    expect(h.operators[0].completed).toEqual([3]);
    h.task.control.notifyCheckpointComplete(4);
    await run;
    expect(h.operators[0].completed).toEqual([3, 4]);
    // No barrier went out after the end: only EndOfPartition.
    expect(h.outputs[0].control).toEqual([{ kind: 'end-of-partition' }]);
    expect(h.events.map((e) => e.kind)).toEqual(['input-ended', 'acknowledge', 'acknowledge', 'finished']);
  });

  it('after end of input: ignores a trigger for a checkpoint already taken through its barrier', async () => {
    const h = taskHarness();
    const run = h.task.run();
    h.gate.push(0, records([1]), barrier(5), END);
    await h.until(kindOf('input-ended'));
    await h.until(kindOf('acknowledge', 5));
    h.task.control.triggerCheckpoint(5, 0, 'checkpoint', false);
    h.task.control.triggerCheckpoint(6, 0, 'checkpoint', true);
    await h.until(kindOf('acknowledge', 6));
    h.task.control.notifyCheckpointComplete(6);
    await run;
    expect(h.events.flatMap((e) => (e.kind === 'acknowledge' ? [e.checkpointId] : []))).toEqual([5, 6]);
  });

  it('while input runs: a direct trigger is declined by a non-source task', async () => {
    const h = taskHarness();
    const run = h.task.run();
    h.gate.push(0, records([1]));
    h.task.control.triggerCheckpoint(2, 0, 'checkpoint', false);
    const decline = await h.until(kindOf('decline', 2));
    expect(decline).toMatchObject({ reason: 'declined' });
    expect(h.operators[0].snapshots).toEqual([]);
    h.task.control.cancel();
    await expect(run).rejects.toThrow('task cancelled');
  });
});
