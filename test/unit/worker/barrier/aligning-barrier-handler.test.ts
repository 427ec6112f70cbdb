import { describe, expect, it } from 'vitest';
import { BarrierProtocolError } from '../../../../src/errors.js';
import { AligningBarrierHandler } from '../../../../src/worker/barrier/aligning-barrier-handler.js';
import { barrier, ManualClock, RecordingActions } from './recording-actions.js';

function setup(channelCount: number) {
  const actions = new RecordingActions();
  const clock = new ManualClock(1000);
  const handler = new AligningBarrierHandler({ channelCount, actions, clock });
  return { actions, clock, handler };
}

describe('AligningBarrierHandler: scripted sequences', () => {
  it('blocks each channel at its barrier and triggers once every channel delivered it', () => {
    const { actions, clock, handler } = setup(3);
    handler.onBarrier(0, barrier(1, 990));
    expect(actions.take()).toEqual(['block 0']);
    expect(handler.blockedChannels()).toEqual([0]);
    expect(handler.pendingCheckpoints()).toEqual([
      { checkpointId: 1, firstBarrierAtMs: 1000, channelsReceived: [0] },
    ]);

    clock.nowMs = 1004;
    handler.onBarrier(2, barrier(1, 990));
    expect(actions.take()).toEqual(['block 2']);
    expect([...actions.blocked].sort()).toEqual([0, 2]);

    clock.nowMs = 1025;
    handler.onBarrier(1, barrier(1, 990));
    expect(actions.take()).toEqual(['trigger 1', 'unblock 0', 'unblock 2']);
    expect(actions.blocked.size).toBe(0);
    expect(actions.triggered[0].metrics).toEqual({ alignmentDurationMs: 25, checkpointStartDelayMs: 10 });
    expect(handler.pendingCheckpoints()).toEqual([]);
    expect(handler.state.state).toBe('waiting-for-first-barrier');
    expect(handler.latestCheckpointId).toBe(1);
  });

  it('runs consecutive checkpoints', () => {
    const { actions, handler } = setup(2);
    handler.onBarrier(1, barrier(1));
    handler.onBarrier(0, barrier(1));
    handler.onBarrier(0, barrier(2));
    handler.onBarrier(1, barrier(2));
    expect(actions.take()).toEqual([
      'block 1',
      'trigger 1',
      'unblock 1',
      'block 0',
      'trigger 2',
      'unblock 0',
    ]);
  });

  it('never blocks a task with one input', () => {
    const { actions, handler } = setup(1);
    handler.onBarrier(0, barrier(1));
    handler.onBarrier(0, barrier(2));
    expect(actions.take()).toEqual(['trigger 1', 'trigger 2']);
    expect(actions.triggered.map((t) => t.metrics.alignmentDurationMs)).toEqual([0, 0]);
  });

  it('a newer barrier mid-alignment subsumes the older checkpoint and starts aligning the newer one', () => {
    const { actions, handler } = setup(3);
    handler.onBarrier(0, barrier(1));
    handler.onBarrier(1, barrier(1));
    actions.take();
    handler.onBarrier(2, barrier(2));
    expect(actions.take()).toEqual(['abort 1 subsumed this-task', 'unblock 0', 'unblock 1', 'block 2']);
    expect(handler.pendingCheckpoints().map((p) => p.checkpointId)).toEqual([2]);
    // The stale barrier 1 on channel 2 never comes (channel 2 skipped it); 2 completes normally.
    handler.onBarrier(0, barrier(2));
    handler.onBarrier(1, barrier(2));
    expect(actions.take()).toEqual(['block 0', 'trigger 2', 'unblock 0', 'unblock 2']);
  });

  it('ignores barriers of checkpoints older than the latest one seen', () => {
    const { actions, handler } = setup(2);
    handler.onBarrier(0, barrier(2));
    handler.onBarrier(1, barrier(1)); // older than the one aligning: ignored, channel stays open
    expect(actions.take()).toEqual(['block 0']);
    handler.onBarrier(1, barrier(2));
    expect(actions.take()).toEqual(['trigger 2', 'unblock 0']);
    handler.onBarrier(0, barrier(3));
    handler.onCancelMarker(1, 3);
    actions.take();
    // Barrier 3 on channel 1 after checkpoint 3 was aborted: a leftover, ignored.
    handler.onBarrier(1, barrier(3));
    expect(actions.take()).toEqual([]);
    expect(handler.state.state).toBe('waiting-for-first-barrier');
  });

  it('a cancel marker for the checkpoint being aligned aborts it and unblocks', () => {
    const { actions, handler } = setup(3);
    handler.onBarrier(0, barrier(1));
    handler.onBarrier(2, barrier(1));
    actions.take();
    handler.onCancelMarker(1, 1);
    expect(actions.take()).toEqual(['abort 1 declined upstream', 'unblock 0', 'unblock 2']);
    expect(actions.blocked.size).toBe(0);
    // Other upstreams' markers for the same checkpoint are expected and ignored.
    handler.onCancelMarker(0, 1);
    expect(actions.take()).toEqual([]);
  });

  it('a cancel marker before any barrier aborts (and forwards) that checkpoint; its barriers are then ignored', () => {
    const { actions, handler } = setup(2);
    handler.onCancelMarker(1, 4);
    expect(actions.take()).toEqual(['abort 4 declined upstream']);
    handler.onBarrier(0, barrier(4));
    expect(actions.take()).toEqual([]);
    expect(actions.blocked.size).toBe(0);
    handler.onBarrier(0, barrier(5));
    handler.onBarrier(1, barrier(5));
    expect(actions.take()).toEqual(['block 0', 'trigger 5', 'unblock 0']);
  });

  it('a cancel marker for a newer checkpoint subsumes the one being aligned', () => {
    const { actions, handler } = setup(3);
    handler.onBarrier(0, barrier(1));
    actions.take();
    handler.onCancelMarker(1, 2);
    expect(actions.take()).toEqual(['abort 1 subsumed this-task', 'unblock 0', 'abort 2 declined upstream']);
    expect(handler.latestCheckpointId).toBe(2);
  });

  it('end of partition during alignment counts as aligned (FLIP-147): the last missing channel ending triggers', () => {
    const { actions, handler } = setup(3);
    handler.onBarrier(0, barrier(1));
    handler.onBarrier(1, barrier(1));
    actions.take();
    handler.onEndOfPartition(2);
    expect(actions.take()).toEqual(['trigger 1', 'unblock 0', 'unblock 1']);
    // The ended channel no longer counts: checkpoint 2 needs only channels 0 and 1.
    handler.onBarrier(0, barrier(2));
    handler.onBarrier(1, barrier(2));
    expect(actions.take()).toEqual(['block 0', 'trigger 2', 'unblock 0']);
  });

  it('end of partition during alignment keeps collecting while another live channel still owes the barrier', () => {
    const { actions, handler } = setup(3);
    handler.onBarrier(0, barrier(1));
    actions.take();
    handler.onEndOfPartition(2);
    expect(actions.take()).toEqual([]);
    expect(handler.blockedChannels()).toEqual([0]);
    expect(handler.pendingCheckpoints().map((p) => p.checkpointId)).toEqual([1]);
    handler.onBarrier(1, barrier(1));
    expect(actions.take()).toEqual(['trigger 1', 'unblock 0']);
  });

  it('end of partition on a channel blocked for alignment is a protocol error, thrown before any effect', () => {
    const { actions, handler } = setup(2);
    handler.onBarrier(0, barrier(1));
    actions.take();
    expect(() => handler.onEndOfPartition(0)).toThrow(BarrierProtocolError);
    expect(actions.take()).toEqual([]);
    expect(handler.blockedChannels()).toEqual([0]);
  });

  it('end of partition while waiting aborts nothing; with one live channel left, barriers trigger at once', () => {
    const { actions, handler } = setup(2);
    handler.onEndOfPartition(0);
    expect(actions.take()).toEqual([]);
    handler.onBarrier(1, barrier(1));
    expect(actions.take()).toEqual(['trigger 1']);
  });

  it('keeps the barrier that arrived first (with its timestamp) as the one to forward', () => {
    const { actions, handler } = setup(2);
    handler.onBarrier(1, { ...barrier(1, 5), checkpointType: 'savepoint' });
    handler.onBarrier(0, barrier(1, 5));
    expect(actions.triggered[0].barrier.checkpointType).toBe('savepoint');
  });
});

describe('AligningBarrierHandler: protocol errors', () => {
  it('throws BarrierProtocolError for a second barrier of the same id on one channel, before acting', () => {
    const { actions, handler } = setup(2);
    handler.onBarrier(0, barrier(1));
    actions.take();
    expect(() => handler.onBarrier(0, barrier(1))).toThrow(BarrierProtocolError);
    expect(() => handler.onBarrier(0, barrier(1))).toThrow(/input channel 0: barrier 1 arrived twice/);
    expect(actions.take()).toEqual([]);
    expect(handler.blockedChannels()).toEqual([0]);
  });

  it('throws for a duplicate barrier even after its checkpoint completed', () => {
    const { handler } = setup(2);
    handler.onBarrier(0, barrier(1));
    handler.onBarrier(1, barrier(1));
    expect(() => handler.onBarrier(1, barrier(1))).toThrow(BarrierProtocolError);
  });

  it('throws for barriers out of id order on one channel', () => {
    const { handler } = setup(1);
    handler.onBarrier(0, barrier(3));
    expect(() => handler.onBarrier(0, barrier(2))).toThrow(/barrier 2 arrived after barrier 3/);
  });

  it('throws for anything after end of partition, and RangeError for a bad channel index', () => {
    const { handler } = setup(2);
    handler.onEndOfPartition(1);
    expect(() => handler.onBarrier(1, barrier(1))).toThrow(BarrierProtocolError);
    expect(() => handler.onCancelMarker(1, 1)).toThrow(BarrierProtocolError);
    expect(() => handler.onEndOfPartition(1)).toThrow(/second end of partition/);
    expect(() => handler.onBarrier(2, barrier(1))).toThrow(RangeError);
    expect(() => handler.onEndOfPartition(-1)).toThrow(RangeError);
  });

  it('rejects a gate without channels', () => {
    expect(() => setup(0)).toThrow(RangeError);
  });
});
