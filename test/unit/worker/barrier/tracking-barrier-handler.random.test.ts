/** Randomized tracking (at-least-once): same model gate as the aligning tests; nothing ever blocks. */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TrackingBarrierHandler } from '../../../../src/worker/barrier/tracking-barrier-handler.js';
import {
  allBarrierScripts,
  barrierOrCancelScripts,
  barrierSomewhere,
  cancelledSomewhere,
  endingScripts,
  everywhereBarriers,
  type GeneratedScripts,
} from './barrier-scripts.js';
import { seededChooser, simulateGate } from './gate-simulation.js';
import { ManualClock, RecordingActions } from './recording-actions.js';

const SEED = 0x7ac4;
const RUNS = 400;

function run(g: GeneratedScripts, interleavingSeed: number) {
  const actions = new RecordingActions();
  const handler = new TrackingBarrierHandler({
    channelCount: g.scripts.length,
    actions,
    clock: new ManualClock(),
  });
  const result = simulateGate(handler, actions, g.scripts, seededChooser(interleavingSeed), false);
  expect(actions.log.filter((l) => l.startsWith('block'))).toEqual([]);
  return { actions, handler, result };
}

describe('TrackingBarrierHandler: random interleavings', () => {
  it('barriers on every channel: each checkpoint triggers exactly once, in order, after all channels delivered it', () => {
    fc.assert(
      fc.property(allBarrierScripts, fc.integer(), (g, seed) => {
        const { actions, handler, result } = run(g, seed);
        expect(result.violations).toEqual([]);
        expect(result.triggered).toEqual(Array.from({ length: g.checkpoints }, (_, i) => i + 1));
        expect(actions.aborted).toEqual([]);
        expect(handler.pendingCheckpoints()).toEqual([]);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('with cancel markers: exactly the all-barrier checkpoints trigger; each cancelled one aborts once', () => {
    fc.assert(
      fc.property(barrierOrCancelScripts, fc.integer(), (g, seed) => {
        const { actions, handler, result } = run(g, seed);
        expect(result.violations).toEqual([]);
        expect(result.triggered).toEqual(everywhereBarriers(g));
        expect(actions.aborted.map((a) => a.checkpointId).sort((a, b) => a - b)).toEqual(
          cancelledSomewhere(g),
        );
        for (const a of actions.aborted) expect(['declined', 'subsumed']).toContain(a.reason);
        expect(handler.pendingCheckpoints()).toEqual([]);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('with ends of partition: every checkpoint seen is settled exactly once; all-channel ones trigger', () => {
    fc.assert(
      fc.property(endingScripts, fc.integer(), (g, seed) => {
        const { actions, handler, result } = run(g, seed);
        expect(result.violations).toEqual([]);
        const settled = [...result.triggered, ...actions.aborted.map((a) => a.checkpointId)].sort(
          (a, b) => a - b,
        );
        expect(settled).toEqual(barrierSomewhere(g));
        for (const a of actions.aborted) expect(a.reason).toBe('end-of-input');
        for (const id of everywhereBarriers(g)) expect(result.triggered).toContain(id);
        expect([...result.triggered].sort((a, b) => a - b)).toEqual(result.triggered);
        expect(handler.pendingCheckpoints()).toEqual([]);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
