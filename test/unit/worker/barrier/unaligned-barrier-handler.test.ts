/**
 * Unaligned exactly-once barrier handling: scripted sequences, and the Chandy-Lamport invariant
 * over seeded random interleavings — for every checkpoint whose channel state finished, the
 * records processed before its trigger plus the records recorded as its channel state are
 * exactly the records that precede its barrier on every channel, each once.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UnalignedBarrierHandler } from '../../../../src/worker/barrier/unaligned-barrier-handler.js';
import {
  initialUnalignedState,
  unalignedOnBarrier,
  unalignedOnCancelMarker,
  unalignedOnEndOfPartition,
} from '../../../../src/worker/barrier/unaligned-state.js';
import { barrier, ManualClock, UnalignedActions } from './recording-actions.js';

function handler(channels: number) {
  const actions = new UnalignedActions();
  const clock = new ManualClock();
  return { actions, clock, h: new UnalignedBarrierHandler({ channelCount: channels, actions, clock }) };
}

describe('UnalignedBarrierHandler: scripted', () => {
  it('triggers on the first barrier, records the other channels until their barriers, never blocks', () => {
    const { actions, clock, h } = handler(3);
    clock.nowMs = 10;
    h.onBarrier(1, barrier(1, 4));
    expect(actions.take()).toEqual(['trigger 1', 'start 1 [0,2]']);
    expect(actions.triggered[0].metrics).toEqual({ alignmentDurationMs: 0, checkpointStartDelayMs: 6 });
    expect(h.blockedChannels()).toEqual([]);
    expect(h.pendingCheckpoints()).toEqual([
      { checkpointId: 1, firstBarrierAtMs: 10, channelsReceived: [1] },
    ]);
    h.onBarrier(2, barrier(1));
    expect(actions.take()).toEqual(['stop 1 2']);
    h.onBarrier(0, barrier(1));
    expect(actions.take()).toEqual(['stop 1 0', 'finish 1']);
    expect(h.pendingCheckpoints()).toEqual([]);
    expect(actions.blocked.size).toBe(0);
  });

  it('a one-input task triggers and finishes at once', () => {
    const { actions, h } = handler(1);
    h.onBarrier(0, barrier(5));
    expect(actions.take()).toEqual(['trigger 5', 'start 5 []', 'finish 5']);
  });

  it('an ended channel is not recorded', () => {
    const { actions, h } = handler(3);
    h.onEndOfPartition(0);
    h.onBarrier(2, barrier(1));
    expect(actions.take()).toEqual(['trigger 1', 'start 1 [1]']);
  });

  it('a newer barrier subsumes the recording checkpoint', () => {
    const { actions, h } = handler(2);
    h.onBarrier(0, barrier(1));
    h.onBarrier(0, barrier(2));
    expect(actions.take()).toEqual([
      'trigger 1',
      'start 1 [1]',
      'abort 1 subsumed this-task',
      'trigger 2',
      'start 2 [1]',
    ]);
    // the leftover barrier 1 on channel 1 is ignored; barrier 2 finishes
    h.onBarrier(1, barrier(1));
    expect(actions.take()).toEqual([]);
    h.onBarrier(1, barrier(2));
    expect(actions.take()).toEqual(['stop 2 1', 'finish 2']);
  });

  it('cancel markers abort (upstream), newer ones subsume first', () => {
    const a = handler(2);
    a.h.onBarrier(0, barrier(1));
    a.actions.take();
    a.h.onCancelMarker(1, 1);
    expect(a.actions.take()).toEqual(['abort 1 declined upstream']);
    a.h.onCancelMarker(1, 3);
    expect(a.actions.take()).toEqual(['abort 3 declined upstream']);
    a.h.onBarrier(0, barrier(3)); // not newer than the latest seen: ignored
    expect(a.actions.take()).toEqual([]);

    const b = handler(2);
    b.h.onBarrier(0, barrier(1));
    b.actions.take();
    b.h.onCancelMarker(1, 2);
    expect(b.actions.take()).toEqual(['abort 1 subsumed this-task', 'abort 2 declined upstream']);
  });

  it('end of partition on a recording channel counts as its barrier (FLIP-147): stop recording it, finish on the last', () => {
    const c = handler(3);
    c.h.onBarrier(0, barrier(1));
    c.actions.take();
    c.h.onEndOfPartition(1);
    expect(c.actions.take()).toEqual(['stop 1 1']);
    c.h.onBarrier(2, barrier(1));
    expect(c.actions.take()).toEqual(['stop 1 2', 'finish 1']);

    const d = handler(2);
    d.h.onBarrier(0, barrier(1));
    d.actions.take();
    d.h.onEndOfPartition(0); // already delivered the barrier: nothing to stop
    expect(d.actions.take()).toEqual([]);
    d.h.onEndOfPartition(1);
    expect(d.actions.take()).toEqual(['stop 1 1', 'finish 1']);
  });

  it('the pure transitions do not mutate their input', () => {
    const s0 = initialUnalignedState(2);
    const t = unalignedOnBarrier(s0, 0, barrier(1), 0);
    expect(s0).toEqual(initialUnalignedState(2));
    expect(unalignedOnBarrier(s0, 0, barrier(1), 0)).toEqual(t);
    expect(unalignedOnCancelMarker(t.next, 1, 1).next.state).toBe('idle');
    expect(unalignedOnEndOfPartition(t.next, 1).next.state).toBe('idle');
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
    /** An ending channel carries barriers 1..lasts[c] only (its producer finished earlier). */
    lasts: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 4, maxLength: 4 }),
  })
  .map(({ channels, checkpoints, runs, ends, lasts }) => {
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
    return scripts;
  });

describe('UnalignedBarrierHandler: random interleavings', () => {
  it('snapshot + channel state = exactly the records before the barrier, for every finished checkpoint', () => {
    fc.assert(
      fc.property(scriptsArb, fc.integer(), (scripts, seed) => {
        const { actions, h } = handler(scripts.length);
        let s = seed >>> 0 || 1;
        const choose = (n: number) => {
          s = (Math.imul(s, 1103515245) + 12345) >>> 0;
          return (s >>> 8) % n;
        };
        const pos = scripts.map(() => 0);
        const processed: number[] = [];
        const processedAtTrigger = new Map<number, Set<number>>();
        const recorded = new Map<number, number[]>();
        actions.onTrigger = (b) => processedAtTrigger.set(b.checkpointId, new Set(processed));
        for (;;) {
          const ready = scripts.map((_, c) => c).filter((c) => pos[c] < scripts[c].length);
          if (ready.length === 0) break;
          const c = ready[choose(ready.length)];
          const ev = scripts[c][pos[c]++];
          if (ev.kind === 'record') {
            for (const [id, chans] of actions.recording)
              if (chans.has(c)) (recorded.get(id) ?? recorded.set(id, []).get(id)!).push(ev.id);
            processed.push(ev.id);
          } else if (ev.kind === 'barrier') h.onBarrier(c, barrier(ev.id));
          else h.onEndOfPartition(c);
        }
        expect(actions.blocked.size).toBe(0);
        for (const id of actions.finished) {
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
        // The newest checkpoint seen finishes: every channel delivers its barrier or ends (an
        // ended channel counts as delivered); nothing newer subsumes it.
        const newest = Math.max(0, ...scripts.flat().map((e) => (e.kind === 'barrier' ? e.id : 0)));
        if (newest > 0) expect(actions.finished.at(-1)).toBe(newest);
        for (const a of actions.aborted) expect(a.reason).toBe('subsumed');
      }),
      { seed: 0x5eed, numRuns: 400 },
    );
  });
});
