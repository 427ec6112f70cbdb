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

  it('with ends of partition: every checkpoint seen is settled exactly once, the newest triggers, none aborts for the end', () => {
    fc.assert(
      fc.property(endingScripts, fc.integer(), (g, seed) => {
        const { actions, handler, result } = run(g, seed);
        expect(result.violations).toEqual([]);
        const settled = [...result.triggered, ...actions.aborted.map((a) => a.checkpointId)].sort(
          (a, b) => a - b,
        );
        const seen = barrierSomewhere(g);
        expect(settled).toEqual(seen);
        // An ended channel counts as delivered (FLIP-147): only a newer checkpoint settling
        // first (tracking never blocks) can abort one.
        for (const a of actions.aborted) expect(a.reason).toBe('subsumed');
        if (seen.length > 0) expect(result.triggered.at(-1)).toBe(seen.at(-1));
        expect([...result.triggered].sort((a, b) => a - b)).toEqual(result.triggered);
        expect(handler.pendingCheckpoints()).toEqual([]);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
