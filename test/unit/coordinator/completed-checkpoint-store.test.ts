import { describe, expect, it } from 'vitest';
import type { CompletedCheckpoint } from '../../../src/coordinator/completed-checkpoint.js';
import { CompletedCheckpointStore } from '../../../src/coordinator/completed-checkpoint-store.js';
import { InvalidOptionError } from '../../../src/errors.js';

function checkpoint(checkpointId: number): CompletedCheckpoint {
  return {
    checkpointId,
    kind: 'periodic',
    timestamp: checkpointId,
    completionTimestamp: checkpointId,
    taskStates: {},
    stats: {
      endToEndDurationMs: 0,
      maxAlignmentDurationMs: 0,
      switchedToUnaligned: false,
      maxCheckpointStartDelayMs: 0,
      syncDurationMs: { max: 0, sum: 0 },
      asyncDurationMs: { max: 0, sum: 0 },
      stateSizeBytes: 0,
      acknowledgedTasks: 0,
      tasks: [],
    },
  };
}

function store(retain?: number, failDiscardOf?: number) {
  const discarded: number[] = [];
  const discardErrors: [number, unknown][] = [];
  const s = new CompletedCheckpointStore({
    retain,
    discard: async (c) => {
      if (c.checkpointId === failDiscardOf) throw new Error('rm failed');
      discarded.push(c.checkpointId);
    },
    onDiscardError: (c, e) => discardErrors.push([c.checkpointId, e]),
  });
  return { s, discarded, discardErrors };
}

describe('CompletedCheckpointStore', () => {
  it('keeps the newest 3 by default and discards the subsumed ones', async () => {
    const { s, discarded } = store();
    expect(s.latest()).toBeUndefined();
    for (const id of [1, 2, 3]) expect(s.add(checkpoint(id))).toEqual([]);
    expect(s.add(checkpoint(4)).map((c) => c.checkpointId)).toEqual([1]);
    expect(s.all().map((c) => c.checkpointId)).toEqual([2, 3, 4]);
    expect(s.latest()?.checkpointId).toBe(4);
    await s.whenDiscarded();
    expect(discarded).toEqual([1]);
  });

  it('orders by id, so a late older checkpoint beyond retention is subsumed itself', async () => {
    const { s, discarded } = store(1);
    s.add(checkpoint(5));
    expect(s.add(checkpoint(4)).map((c) => c.checkpointId)).toEqual([4]);
    expect(s.latest()?.checkpointId).toBe(5);
    await s.whenDiscarded();
    expect(discarded).toEqual([4]);
  });

  it('reports a failed discard instead of throwing', async () => {
    const { s, discardErrors } = store(1, 1);
    s.add(checkpoint(1));
    s.add(checkpoint(2));
    await s.whenDiscarded();
    expect(discardErrors).toHaveLength(1);
    expect(discardErrors[0][0]).toBe(1);
    expect(s.size).toBe(1);
  });

  it('rejects duplicates and a bad retain', () => {
    const { s } = store();
    s.add(checkpoint(1));
    expect(() => s.add(checkpoint(1))).toThrow(RangeError);
    expect(() => store(0)).toThrow(InvalidOptionError);
    expect(() => store(2.5)).toThrow(/checkpointing.retain: must be an integer >= 1, got 2.5/);
  });
});
