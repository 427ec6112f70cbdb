/**
 * Aligned checkpoints with an alignment timeout: scripted sequences (when the switch happens,
 * barriers after the switch, cancellation, a checkpoint subsumed after its switch, unaligned
 * barriers from upstream, savepoints), and over seeded random interleavings with random clock
 * steps the exactly-once invariant of both halves: for every checkpoint that completed at this
 * task, the records processed before its trigger plus those recorded as its channel state are
 * exactly the records before its barrier on every channel, each once.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckpointBarrier } from '../../../../src/channels/frame.js';
import {
  alignmentDeadline,
  initialTimeoutAlignmentState,
  timeoutOnBarrier,
  timeoutOnTimer,
} from '../../../../src/worker/barrier/alignment-timeout-state.js';
import { AlternatingBarrierHandler } from '../../../../src/worker/barrier/alternating-barrier-handler.js';
import { createBarrierHandler } from '../../../../src/worker/barrier/create-barrier-handler.js';
import { barrier, ManualClock, UnalignedActions } from './recording-actions.js';

const TIMEOUT = 100;

function handler(channels: number, alignmentTimeoutMs = TIMEOUT) {
  const actions = new UnalignedActions();
  const clock = new ManualClock();
  return {
    actions,
    clock,
    h: new AlternatingBarrierHandler({ channelCount: channels, actions, clock, alignmentTimeoutMs }),
  };
}

const unalignedBarrier = (id: number): CheckpointBarrier => ({ ...barrier(id), unaligned: true });
const savepointBarrier = (id: number): CheckpointBarrier => ({ ...barrier(id), checkpointType: 'savepoint' });

describe('AlternatingBarrierHandler: scripted', () => {
  it('after the switch, pulls the barriers the checkpoint still waits for out of band; the pulled ones complete it', () => {
    const { actions, clock, h } = handler(3);
    clock.nowMs = 1000;
    expect(h.barriersToPull()).toBeNull(); // nothing aligning
    h.onBarrier(0, barrier(1, 990));
    expect(h.barriersToPull()).toBeNull(); // aligning in band, not timed out: barriers stay in band
    clock.nowMs = 1100;
    h.onAlignmentTimer();
    expect(actions.take()).toEqual(['block 0', 'trigger 1', 'start 1 [1,2]', 'unblock 0']);
    const pull = h.barriersToPull()!;
    expect(pull.channels).toEqual([1, 2]);
    expect(pull.match(barrier(1))).toBe(true);
    expect(pull.match(barrier(2))).toBe(false);
    // A pulled barrier arrives marked unaligned: it stops that channel's recording like any other.
    h.onBarrier(1, unalignedBarrier(1));
    expect(actions.take()).toEqual(['stop 1 1']);
    expect(h.barriersToPull()!.channels).toEqual([2]);
    h.onBarrier(2, unalignedBarrier(1));
    expect(actions.take()).toEqual(['stop 1 2', 'finish 1']);
    expect(h.barriersToPull()).toBeNull();
  });

  it('aligns until the timeout, then triggers unaligned, records the open channels and unblocks', () => {
    const { actions, clock, h } = handler(3);
    clock.nowMs = 1000;
    h.onBarrier(0, barrier(1, 990));
    expect(actions.take()).toEqual(['block 0']);
    expect(h.msUntilAlignmentTimeout()).toBe(TIMEOUT);
    clock.nowMs = 1050;
    h.onBarrier(1, barrier(1));
    expect(actions.take()).toEqual(['block 1']);
    clock.nowMs = 1099;
    h.onAlignmentTimer(); // not yet
    expect(actions.take()).toEqual([]);
    expect(h.msUntilAlignmentTimeout()).toBe(1);
    clock.nowMs = 1100;
    h.onAlignmentTimer();
    // Snapshot first, then record the open channel, then let the blocked ones flow.
    expect(actions.take()).toEqual(['trigger 1', 'start 1 [2]', 'unblock 0', 'unblock 1']);
    expect(actions.triggered[0].barrier).toEqual({ ...barrier(1, 990), unaligned: true });
    expect(actions.triggered[0].metrics).toEqual({
      alignmentDurationMs: 100,
      checkpointStartDelayMs: 10,
      switchedToUnaligned: true,
    });
    expect(h.blockedChannels()).toEqual([]);
    expect(h.msUntilAlignmentTimeout()).toBe(Infinity);
    expect(h.pendingCheckpoints()).toEqual([
      { checkpointId: 1, firstBarrierAtMs: 1000, channelsReceived: [0, 1] },
    ]);
    h.onAlignmentTimer(); // nothing aligning
    expect(actions.take()).toEqual([]);
    // The late barrier completes the channel state; the next checkpoint starts aligned again.
    h.onBarrier(2, barrier(1));
    expect(actions.take()).toEqual(['stop 1 2', 'finish 1']);
    expect(h.state.state).toBe('waiting-for-first-barrier');
    h.onBarrier(2, barrier(2));
    expect(actions.take()).toEqual(['block 2']);
    h.onBarrier(0, barrier(2));
    h.onBarrier(1, barrier(2));
    expect(actions.take()).toEqual(['block 0', 'trigger 2', 'unblock 0', 'unblock 2']);
    expect(actions.triggered[1].metrics.switchedToUnaligned).toBeUndefined();
  });

  it('an alignment that completes before the timeout stays aligned; an event after the deadline switches', () => {
    const a = handler(2);
    a.h.onBarrier(0, barrier(1));
    a.clock.nowMs = 99;
    a.h.onBarrier(1, barrier(1));
    expect(a.actions.take()).toEqual(['block 0', 'trigger 1', 'unblock 0']);
    // The last barrier completes the alignment even when late: nothing left to record.
    a.h.onBarrier(1, barrier(2));
    a.clock.nowMs = 500;
    a.h.onBarrier(0, barrier(2));
    expect(a.actions.take()).toEqual(['block 1', 'trigger 2', 'unblock 1']);
    expect(a.actions.triggered[1].metrics.switchedToUnaligned).toBeUndefined();

    // An overdue alignment is switched by the next event, without waiting for a timer call.
    const b = handler(3);
    b.h.onBarrier(0, barrier(1));
    b.clock.nowMs = 150;
    b.h.onBarrier(1, barrier(1));
    expect(b.actions.take()).toEqual([
      'block 0',
      'block 1',
      'trigger 1',
      'start 1 [2]',
      'unblock 0',
      'unblock 1',
    ]);
    expect(b.actions.triggered[0].metrics.alignmentDurationMs).toBe(150);
  });

  it('end of partition: counts as aligned while aligning, and as the barrier once switched', () => {
    const a = handler(3);
    a.h.onBarrier(0, barrier(1));
    a.clock.nowMs = 200;
    a.h.onEndOfPartition(1); // overdue and channel 2 still open: switch, recording only channel 2
    expect(a.actions.take()).toEqual(['block 0', 'trigger 1', 'start 1 [2]', 'unblock 0']);
    a.h.onEndOfPartition(2);
    expect(a.actions.take()).toEqual(['stop 1 2', 'finish 1']);
    expect(a.h.latestCheckpointId).toBe(1);
  });

  it('cancel markers: abort while aligning (unblock) and while recording (channel state dropped)', () => {
    const a = handler(2);
    a.h.onBarrier(0, barrier(1));
    a.h.onCancelMarker(1, 1);
    expect(a.actions.take()).toEqual(['block 0', 'abort 1 declined upstream', 'unblock 0']);

    const b = handler(3);
    b.h.onBarrier(0, barrier(1));
    b.clock.nowMs = 100;
    b.h.onAlignmentTimer();
    b.actions.take();
    b.h.onCancelMarker(1, 1);
    expect(b.actions.take()).toEqual(['abort 1 declined upstream']);
    expect(b.actions.recording.size).toBe(0);
    expect(b.h.state.state).toBe('waiting-for-first-barrier');
    b.h.onBarrier(2, barrier(1)); // leftover of the aborted checkpoint
    b.h.onCancelMarker(2, 1);
    expect(b.actions.take()).toEqual([]);
    // A newer cancel marker while recording: the recording one is subsumed first.
    b.h.onBarrier(0, barrier(2));
    b.clock.nowMs = 300;
    b.h.onAlignmentTimer();
    b.actions.take();
    b.h.onCancelMarker(1, 3);
    expect(b.actions.take()).toEqual(['abort 2 subsumed this-task', 'abort 3 declined upstream']);
  });

  it('a newer barrier after the switch subsumes the recording checkpoint and aligns the newer one', () => {
    const { actions, clock, h } = handler(3);
    h.onBarrier(0, barrier(1));
    clock.nowMs = 100;
    h.onAlignmentTimer();
    expect(actions.take()).toEqual(['block 0', 'trigger 1', 'start 1 [1,2]', 'unblock 0']);
    h.onBarrier(1, barrier(1));
    expect(actions.take()).toEqual(['stop 1 1']);
    clock.nowMs = 120;
    h.onBarrier(0, barrier(2));
    expect(actions.take()).toEqual(['abort 1 subsumed this-task', 'block 0']);
    expect(actions.recording.size).toBe(0);
    expect(h.msUntilAlignmentTimeout()).toBe(100);
    h.onBarrier(2, barrier(1)); // leftover: ignored
    expect(actions.take()).toEqual([]);
    clock.nowMs = 220;
    h.onAlignmentTimer();
    expect(actions.take()).toEqual(['trigger 2', 'start 2 [1,2]', 'unblock 0']);
    h.onBarrier(1, barrier(2));
    h.onBarrier(2, barrier(2));
    expect(actions.take()).toEqual(['stop 2 1', 'stop 2 2', 'finish 2']);
  });

  it('an unaligned barrier from upstream switches at once; one input forwards it as it came', () => {
    const a = handler(3);
    a.h.onBarrier(0, unalignedBarrier(1));
    expect(a.actions.take()).toEqual(['block 0', 'trigger 1', 'start 1 [1,2]', 'unblock 0']);
    expect(a.actions.triggered[0].metrics.switchedToUnaligned).toBe(true);

    const b = handler(3);
    b.h.onBarrier(0, barrier(1));
    b.h.onBarrier(1, unalignedBarrier(1));
    expect(b.actions.take()).toEqual([
      'block 0',
      'block 1',
      'trigger 1',
      'start 1 [2]',
      'unblock 0',
      'unblock 1',
    ]);

    const c = handler(1);
    c.h.onBarrier(0, unalignedBarrier(4));
    expect(c.actions.take()).toEqual(['trigger 4']);
    expect(c.actions.triggered[0].barrier.unaligned).toBe(true);
  });

  it('savepoints never switch', () => {
    const { actions, clock, h } = handler(2);
    h.onBarrier(0, savepointBarrier(1));
    clock.nowMs = 10_000;
    h.onAlignmentTimer();
    expect(h.msUntilAlignmentTimeout()).toBe(Infinity);
    expect(actions.take()).toEqual(['block 0']);
    h.onBarrier(1, savepointBarrier(1));
    expect(actions.take()).toEqual(['trigger 1', 'unblock 0']);
  });

  it('timeout 0 switches at the first barrier that has to align', () => {
    const { actions, h } = handler(2, 0);
    h.onBarrier(1, barrier(1));
    expect(actions.take()).toEqual(['block 1', 'trigger 1', 'start 1 [0]', 'unblock 1']);
  });

  it('rejects a negative timeout; createBarrierHandler picks this handler for a timeout', () => {
    const actions = new UnalignedActions();
    const clock = new ManualClock();
    expect(
      () => new AlternatingBarrierHandler({ channelCount: 2, actions, clock, alignmentTimeoutMs: -1 }),
    ).toThrow(RangeError);
    expect(
      createBarrierHandler('exactly-once', { channelCount: 2, actions, clock, alignmentTimeoutMs: 5 }),
    ).toBeInstanceOf(AlternatingBarrierHandler);
    expect(createBarrierHandler('exactly-once', { channelCount: 2, actions, clock })).not.toBeInstanceOf(
      AlternatingBarrierHandler,
    );
  });

  it('the pure transitions do not mutate their input', () => {
    const s0 = initialTimeoutAlignmentState(2);
    const t1 = timeoutOnBarrier(s0, 0, barrier(1), 0, TIMEOUT);
    expect(s0).toEqual(initialTimeoutAlignmentState(2));
    expect(alignmentDeadline(t1.next, TIMEOUT)).toBe(TIMEOUT);
    const before = JSON.stringify(t1.next, (_k, v) => (v instanceof Set ? [...v] : v));
    const t2 = timeoutOnTimer(t1.next, TIMEOUT, TIMEOUT);
    expect(t2.next.state).toBe('recording');
    expect(JSON.stringify(t1.next, (_k, v) => (v instanceof Set ? [...v] : v))).toBe(before);
  });
});

type Ev = { kind: 'record'; id: number } | { kind: 'barrier'; id: number } | { kind: 'end' };

/** Channel scripts: records interleaved with barriers 1..k in order, optionally ending (maybe before k). */
const scriptsArb = fc
  .record({
    channels: fc.integer({ min: 1, max: 4 }),
    checkpoints: fc.integer({ min: 1, max: 4 }),
    runs: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 20, maxLength: 20 }),
    ends: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
    lasts: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 4, maxLength: 4 }),
    /** Per checkpoint: does its first channel's barrier come marked unaligned (an upstream switched)? */
    upstreamUnaligned: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
  })
  .map(({ channels, checkpoints, runs, ends, lasts, upstreamUnaligned }) => {
    let next = 0;
    let r = 0;
    const scripts: Ev[][] = [];
    for (let c = 0; c < channels; c++) {
      const s: Ev[] = [];
      for (let k = 1; k <= checkpoints + 1; k++) {
        const n = runs[r++ % runs.length];
        for (let i = 0; i < n; i++) s.push({ kind: 'record', id: next++ });
        if (k <= (ends[c] ? Math.min(lasts[c], checkpoints) : checkpoints))
          s.push({ kind: 'barrier', id: k });
      }
      if (ends[c]) s.push({ kind: 'end' });
      scripts.push(s);
    }
    return { scripts, upstreamUnaligned };
  });

describe('AlternatingBarrierHandler: random interleavings and clock steps', () => {
  it('every completed checkpoint is exact: snapshot + channel state = the records before its barrier', () => {
    let switchedCompleted = 0;
    let alignedCompleted = 0;
    fc.assert(
      fc.property(scriptsArb, fc.integer(), ({ scripts, upstreamUnaligned }, seed) => {
        const { actions, clock, h } = handler(scripts.length);
        let s = seed >>> 0 || 1;
        const choose = (n: number) => {
          s = (Math.imul(s, 1103515245) + 12345) >>> 0;
          return (s >>> 8) % n;
        };
        const pos = scripts.map(() => 0);
        const processed: number[] = [];
        const processedAtTrigger = new Map<number, Set<number>>();
        const recorded = new Map<number, number[]>();
        /** Checkpoints triggered without a switch: complete at their trigger. */
        const alignedTriggers: number[] = [];
        actions.onTrigger = (b) => processedAtTrigger.set(b.checkpointId, new Set(processed));
        let steps = 0;
        for (;;) {
          const ready = scripts
            .map((_, c) => c)
            .filter((c) => pos[c] < scripts[c].length && !actions.blocked.has(c));
          // Every channel with events left is blocked: only the timeout can move on.
          if (ready.length === 0) {
            if (scripts.every((sc, c) => pos[c] >= sc.length)) break;
            expect(h.msUntilAlignmentTimeout()).toBeLessThan(Infinity);
            clock.nowMs += h.msUntilAlignmentTimeout();
            h.onAlignmentTimer();
            expect(++steps).toBeLessThan(10_000);
            continue;
          }
          // Now and then the clock moves and the task checks the timeout.
          if (choose(4) === 0) {
            clock.nowMs += choose(3) * 40;
            h.onAlignmentTimer();
          }
          const c = ready[choose(ready.length)];
          const ev = scripts[c][pos[c]++];
          if (ev.kind === 'record') {
            for (const [id, chans] of actions.recording)
              if (chans.has(c)) (recorded.get(id) ?? recorded.set(id, []).get(id)!).push(ev.id);
            processed.push(ev.id);
          } else if (ev.kind === 'barrier') {
            const first = !scripts.some(
              (sc, o) => o !== c && sc.slice(0, pos[o]).some((e) => e.kind === 'barrier' && e.id === ev.id),
            );
            const b = first && upstreamUnaligned[ev.id - 1] ? unalignedBarrier(ev.id) : barrier(ev.id);
            const before = actions.triggered.length;
            h.onBarrier(c, b);
            if (
              actions.triggered.length > before &&
              !actions.recording.has(ev.id) &&
              !actions.finished.includes(ev.id)
            )
              alignedTriggers.push(ev.id);
          } else {
            const before = actions.triggered.length;
            h.onEndOfPartition(c);
            const t = actions.triggered.at(-1);
            if (actions.triggered.length > before && t && !actions.recording.has(t.barrier.checkpointId))
              alignedTriggers.push(t.barrier.checkpointId);
          }
        }
        expect(actions.blocked.size).toBe(0);
        const aborted = new Set(actions.aborted.map((a) => a.checkpointId));
        const completed = [...new Set([...alignedTriggers, ...actions.finished])].filter(
          (id) => !aborted.has(id),
        );
        switchedCompleted += completed.filter((id) => !alignedTriggers.includes(id)).length;
        alignedCompleted += completed.filter((id) => alignedTriggers.includes(id)).length;
        for (const id of completed) {
          const expected = new Set<number>();
          for (const script of scripts) {
            for (const ev of script) {
              if (ev.kind === 'barrier' && ev.id === id) break;
              if (ev.kind === 'record') expected.add(ev.id);
            }
          }
          const inSnapshot = processedAtTrigger.get(id)!;
          const inChannels = recorded.get(id) ?? [];
          for (const r of inChannels) expect(inSnapshot.has(r)).toBe(false);
          expect(new Set(inChannels).size).toBe(inChannels.length);
          expect(new Set([...inSnapshot, ...inChannels])).toEqual(expected);
        }
        // The newest checkpoint seen completes (every channel delivers its barrier or ends).
        const newest = Math.max(0, ...scripts.flat().map((e) => (e.kind === 'barrier' ? e.id : 0)));
        if (newest > 0) expect(completed).toContain(newest);
        for (const a of actions.aborted) expect(a.reason).toBe('subsumed');
        // A switched checkpoint's trigger says so.
        for (const t of actions.triggered)
          if (
            actions.finished.includes(t.barrier.checkpointId) &&
            !alignedTriggers.includes(t.barrier.checkpointId)
          )
            expect(t.metrics.switchedToUnaligned).toBe(true);
      }),
      { seed: 0x7140, numRuns: 500 },
    );
    // Both halves were exercised.
    expect(switchedCompleted).toBeGreaterThan(100);
    expect(alignedCompleted).toBeGreaterThan(100);
  });
});
