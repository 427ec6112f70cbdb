/**
 * A checkpoint whose asynchronous part fails halfway (the second of three operators cannot be
 * written) is declined, every operator's keyed snapshot is released exactly once (the written one,
 * the failed one and the one never reached: copy-on-write keeps preserving a view until it is
 * released), nothing is acknowledged, and the task runs on and takes the next checkpoint.
 */
import { describe, expect, it } from 'vitest';
import { barrier, kindOf, records, taskHarness } from './task-harness.js';

describe('StreamTask: a failed asynchronous snapshot part', () => {
  it('declines when a storage write fails halfway, releases every snapshot once, and runs on', async () => {
    const h = taskHarness({ operators: ['a', 'b', 'c'] });
    const run = h.task.run();
    h.storage.failFor.add('b');
    h.gate.push(0, records([1, 2]), barrier(1));
    const decline = await h.until(kindOf('decline', 1));
    expect(decline).toMatchObject({ reason: 'async-snapshot-failed', message: 'disk full writing b' });
    expect(h.operators.map((op) => op.snapshots.map((s) => s.releases))).toEqual([[1], [1], [1]]);
    expect(h.storage.writes.map((w) => w.uid)).toEqual(['a']);
    // The barrier was forwarded in the synchronous part, before the failure.
    expect(h.outputs[0].control).toEqual([expect.objectContaining({ kind: 'barrier', checkpointId: 1 })]);

    // The job runs on: the next checkpoint is acknowledged with all three operators.
    h.storage.failFor.clear();
    h.gate.push(0, records([3]), barrier(2));
    const ack = await h.until(kindOf('acknowledge', 2));
    expect(ack.kind === 'acknowledge' && ack.state.operators.map((o) => o.operatorUid)).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(h.operators.map((op) => op.snapshots.map((s) => s.releases))).toEqual([
      [1, 1],
      [1, 1],
      [1, 1],
    ]);
    expect(h.events.filter(kindOf('acknowledge', 1))).toEqual([]);
    h.task.control.cancel();
    await expect(run).rejects.toThrow('task cancelled');
  });

  it('declines when serializing the second snapshot fails, releasing all three', async () => {
    const h = taskHarness({ operators: ['a', 'b', 'c'] });
    const run = h.task.run();
    h.operators[1].failSerialize = true;
    h.gate.push(0, barrier(1));
    const decline = await h.until(kindOf('decline', 1));
    expect(decline).toMatchObject({ reason: 'async-snapshot-failed', message: 'serializing b failed' });
    expect(h.operators.map((op) => op.snapshots.map((s) => s.releases))).toEqual([[1], [1], [1]]);
    expect(h.storage.writes.map((w) => w.uid)).toEqual(['a']);
    h.task.control.cancel();
    await expect(run).rejects.toThrow('task cancelled');
  });
});
