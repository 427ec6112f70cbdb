import { describe, expect, it } from 'vitest';
import { BarrierProtocolError } from '../../../../src/errors.js';
import { TrackingBarrierHandler } from '../../../../src/worker/barrier/tracking-barrier-handler.js';
import { barrier, ManualClock, RecordingActions } from './recording-actions.js';

function setup(channelCount: number) {
  const actions = new RecordingActions();
  const clock = new ManualClock(100);
  const handler = new TrackingBarrierHandler({ channelCount, actions, clock });
  return { actions, clock, handler };
}

describe('TrackingBarrierHandler: scripted sequences', () => {
  it('never blocks; triggers when the last channel delivered the barrier', () => {
    const { actions, clock, handler } = setup(3);
    handler.onBarrier(0, barrier(1, 90));
    clock.nowMs = 130;
    handler.onBarrier(2, barrier(1, 90));
    expect(actions.take()).toEqual([]);
    expect(handler.pendingCheckpoints()).toEqual([
      { checkpointId: 1, firstBarrierAtMs: 100, channelsReceived: [0, 2] },
    ]);
    handler.onBarrier(1, barrier(1, 90));
    expect(actions.take()).toEqual(['trigger 1']);
    expect(actions.triggered[0].metrics).toEqual({ alignmentDurationMs: 0, checkpointStartDelayMs: 10 });
    expect(handler.blockedChannels()).toEqual([]);
  });

  it('tracks several checkpoints at once, triggering each in order', () => {
    const { actions, handler } = setup(2);
    handler.onBarrier(0, barrier(1));
    handler.onBarrier(0, barrier(2));
    handler.onBarrier(0, barrier(3));
    expect(handler.pendingCheckpoints().map((p) => p.checkpointId)).toEqual([1, 2, 3]);
    handler.onBarrier(1, barrier(1));
    handler.onBarrier(1, barrier(2));
    expect(actions.take()).toEqual(['trigger 1', 'trigger 2']);
    expect(handler.latestCheckpointId).toBe(3);
  });

  it('a newer checkpoint completing aborts older pending ones as subsumed', () => {
    const { actions, handler } = setup(2);
    handler.onBarrier(0, barrier(1));
    handler.onBarrier(0, barrier(2));
    handler.onBarrier(1, barrier(2)); // channel 1 skipped 1: it can never complete
    expect(actions.take()).toEqual(['abort 1 subsumed this-task', 'trigger 2']);
    handler.onBarrier(1, barrier(3));
    handler.onBarrier(0, barrier(3));
    expect(actions.take()).toEqual(['trigger 3']);
  });

  it('a cancel marker aborts its checkpoint once; its late barriers are swallowed', () => {
    const { actions, handler } = setup(3);
    handler.onBarrier(0, barrier(1));
    handler.onCancelMarker(1, 1);
    expect(actions.take()).toEqual(['abort 1 declined upstream']);
    expect(handler.pendingCheckpoints()).toEqual([]);
    handler.onBarrier(2, barrier(1));
    expect(actions.take()).toEqual([]);
    // Every channel has had its say about 1: it is settled, and later markers for it are ignored.
    expect(handler.state.pending).toEqual([]);
    expect(handler.state.latestCheckpointId).toBe(1);
  });

  it('a cancel marker keeps older checkpoints its channel delivered, aborts those it skipped', () => {
    const { actions, handler } = setup(2);
    handler.onBarrier(0, barrier(1));
    handler.onBarrier(0, barrier(2));
    handler.onCancelMarker(0, 3); // channel 0 delivered 1 and 2: both can still complete
    expect(actions.take()).toEqual(['abort 3 declined upstream']);
    handler.onBarrier(1, barrier(1));
    expect(actions.take()).toEqual(['trigger 1']);
    handler.onCancelMarker(1, 4); // channel 1 skipped 2: it can no longer complete
    expect(actions.take()).toEqual(['abort 2 subsumed this-task', 'abort 4 declined upstream']);
    expect(handler.pendingCheckpoints()).toEqual([]);
  });

  it('end of partition: the ended channel stops counting for pending checkpoints too (FLIP-147), none aborts', () => {
    const { actions, handler } = setup(3);
    handler.onBarrier(0, barrier(1));
    handler.onBarrier(1, barrier(1));
    handler.onBarrier(1, barrier(2));
    handler.onEndOfPartition(0); // channel 0 delivered 1, not 2: both still wait for channel 2
    expect(actions.take()).toEqual([]);
    handler.onBarrier(2, barrier(1));
    expect(actions.take()).toEqual(['trigger 1']);
    handler.onBarrier(2, barrier(2));
    expect(actions.take()).toEqual(['trigger 2']);
    handler.onBarrier(1, barrier(3));
    handler.onBarrier(2, barrier(3));
    expect(actions.take()).toEqual(['trigger 3']);
  });

  it('end of the last channel that owed a barrier settles the pending checkpoint', () => {
    const { actions, handler } = setup(2);
    handler.onBarrier(0, barrier(1));
    expect(actions.take()).toEqual([]);
    handler.onEndOfPartition(1);
    expect(actions.take()).toEqual(['trigger 1']);
    expect(handler.pendingCheckpoints()).toEqual([]);
  });

  it('triggers at once with one live input', () => {
    const { actions, handler } = setup(2);
    handler.onEndOfPartition(1);
    handler.onBarrier(0, barrier(1));
    expect(actions.take()).toEqual(['trigger 1']);
  });

  it('throws BarrierProtocolError for a second barrier of the same id on one channel', () => {
    const { actions, handler } = setup(2);
    handler.onBarrier(0, barrier(1));
    expect(() => handler.onBarrier(0, barrier(1))).toThrow(BarrierProtocolError);
    expect(() => handler.onBarrier(0, barrier(1))).toThrow(/barrier 1 arrived twice/);
    expect(actions.take()).toEqual([]);
  });
});
