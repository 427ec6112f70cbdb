/** The pure alignment transitions, without a handler: same input, same output, input untouched. */

import { describe, expect, it } from 'vitest';
import {
  alignmentOnBarrier,
  alignmentOnCancelMarker,
  alignmentOnEndOfPartition,
  initialAlignmentState,
} from '../../../../src/worker/barrier/alignment-state.js';
import { barrier } from './recording-actions.js';

describe('alignment state machine', () => {
  it('is deterministic and does not mutate the state it is given', () => {
    const s0 = initialAlignmentState(2);
    const snapshot = JSON.stringify({ ...s0, ended: [...s0.channels.ended] });
    const a = alignmentOnBarrier(s0, 0, barrier(1), 5);
    const b = alignmentOnBarrier(s0, 0, barrier(1), 5);
    expect(a).toEqual(b);
    expect(JSON.stringify({ ...s0, ended: [...s0.channels.ended] })).toBe(snapshot);
    expect(s0.channels.lastBarrierId).toEqual([-1, -1]);
    expect(a.next).toMatchObject({ state: 'collecting-barriers', startTimeMs: 5, latestCheckpointId: 1 });
    expect(a.effects).toEqual([{ kind: 'block-channel', channelIndex: 0 }]);
  });

  it('returns to waiting-for-first-barrier after a trigger, an abort by cancel, and the ends of the channels that owed the barrier', () => {
    const collecting = alignmentOnBarrier(initialAlignmentState(3), 1, barrier(7), 0).next;
    expect(alignmentOnBarrier(collecting, 0, barrier(7), 1).next.state).toBe('collecting-barriers');
    const triggered = alignmentOnBarrier(
      alignmentOnBarrier(collecting, 0, barrier(7), 1).next,
      2,
      barrier(7),
      2,
    );
    expect(triggered.next.state).toBe('waiting-for-first-barrier');
    expect(triggered.effects.map((e) => e.kind)).toEqual([
      'trigger-checkpoint',
      'unblock-channel',
      'unblock-channel',
    ]);
    expect(alignmentOnCancelMarker(collecting, 0, 7).next.state).toBe('waiting-for-first-barrier');
    // Channel 1 delivered barrier 7; channel 0 ends (counts as aligned), channel 2 still owes it.
    const oneEnded = alignmentOnEndOfPartition(collecting, 0, 3);
    expect(oneEnded.next).toMatchObject({ state: 'collecting-barriers', latestCheckpointId: 7 });
    expect(oneEnded.effects).toEqual([]);
    expect(oneEnded.next.channels.ended.has(0)).toBe(true);
    const bothEnded = alignmentOnEndOfPartition(oneEnded.next, 2, 4);
    expect(bothEnded.next).toMatchObject({ state: 'waiting-for-first-barrier', latestCheckpointId: 7 });
    expect(bothEnded.effects).toEqual([
      {
        kind: 'trigger-checkpoint',
        barrier: barrier(7),
        metrics: { alignmentDurationMs: 4, checkpointStartDelayMs: 0 },
      },
      { kind: 'unblock-channel', channelIndex: 1 },
    ]);
  });
});
