/**
 * Unaligned checkpoints at a two-channel task: the first barrier triggers the snapshot and is
 * forwarded at once; records that arrive on the other channel before its barrier are the
 * checkpoint's channel state, written as a `channel-state` chunk under the head operator only,
 * and the acknowledgement waits for that barrier. A checkpoint cancelled while its channel state
 * is still recording ends silently at this task (the upstream task declined it), forwarding the
 * cancel marker and releasing every operator's snapshot once.
 */
import { describe, expect, it } from 'vitest';
import { CHANNEL_STATE_CHUNK } from '../../../../src/protocol/snapshot-chunks.js';
import { barrier, kindOf, records, taskHarness, UNALIGNED } from './task-harness.js';

describe('StreamTask with unaligned checkpoints', () => {
  it('acknowledges with the in-flight records as channel state once every barrier arrived', async () => {
    const h = taskHarness({ operators: ['a', 'b'], channels: 2, checkpointing: UNALIGNED });
    const run = h.task.run();
    h.gate.push(0, barrier(1, true));
    h.gate.push(1, records(['in-flight']));
    // Delivered in this order by the round-robin gate: barrier (ch0), then the record (ch1).
    const waitForRecord = new Promise<void>((resolve) => {
      h.operators[0].onRecord = resolve;
    });
    await waitForRecord;
    expect(h.outputs[0].control).toEqual([expect.objectContaining({ kind: 'barrier', checkpointId: 1 })]);
    expect(h.events.filter(kindOf('acknowledge', 1))).toEqual([]);

    h.gate.push(1, barrier(1, true));
    await h.until(kindOf('acknowledge', 1));
    expect(h.storage.writes.map((w) => [w.uid, w.chunks])).toEqual([
      ['a', ['kg-a', CHANNEL_STATE_CHUNK]],
      ['b', ['kg-b']],
    ]);
    expect(h.operators.map((op) => op.snapshots.map((s) => s.releases))).toEqual([[1], [1]]);
    h.task.control.cancel();
    await expect(run).rejects.toThrow('task cancelled');
  });

  it('ends a checkpoint cancelled while recording silently, releasing every snapshot', async () => {
    const h = taskHarness({ operators: ['a', 'b'], channels: 2, checkpointing: UNALIGNED });
    const run = h.task.run();
    h.gate.push(0, barrier(1, true));
    h.gate.push(1, records(['in-flight']), { kind: 'cancel-checkpoint', checkpointId: 1 });
    await h.outputs[0].written((f) => f.kind === 'cancel-checkpoint');
    // The next checkpoint completes normally: by then checkpoint 1's async part has ended.
    h.gate.push(0, barrier(2, true));
    h.gate.push(1, barrier(2, true));
    await h.until(kindOf('acknowledge', 2));
    expect(h.events.filter((e) => 'checkpointId' in e && e.checkpointId === 1)).toEqual([]);
    expect(h.outputs[0].control.map((f) => [f.kind, 'checkpointId' in f ? f.checkpointId : null])).toEqual([
      ['barrier', 1],
      ['cancel-checkpoint', 1],
      ['barrier', 2],
    ]);
    expect(h.operators.map((op) => op.snapshots.map((s) => s.releases))).toEqual([
      [1, 1],
      [1, 1],
    ]);
    expect(h.storage.writes.map((w) => w.checkpointId)).toEqual([2, 2]);
    h.task.control.cancel();
    await expect(run).rejects.toThrow('task cancelled');
  });
});
