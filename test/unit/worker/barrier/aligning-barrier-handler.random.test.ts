/**
 * Randomized alignment: random channel counts, checkpoint counts, record runs, cancel markers
 * and ends of partition, delivered in a random (seeded) interleaving by a model gate that never
 * reads a blocked channel.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AligningBarrierHandler } from '../../../../src/worker/barrier/aligning-barrier-handler.js';
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

const SEED = 0x5eed;
const RUNS = 400;

function run(g: GeneratedScripts, interleavingSeed: number) {
  const actions = new RecordingActions();
  const handler = new AligningBarrierHandler({
    channelCount: g.scripts.length,
    actions,
    clock: new ManualClock(),
  });
  const result = simulateGate(handler, actions, g.scripts, seededChooser(interleavingSeed), true);
  return { actions, handler, result };
}

describe('AligningBarrierHandler: random interleavings', () => {
  it('barriers on every channel: each checkpoint triggers exactly once, in order, after all channels delivered it', () => {
    fc.assert(
      fc.property(allBarrierScripts, fc.integer(), (g, seed) => {
        const { actions, handler, result } = run(g, seed);
        expect(result.deadlocked).toBe(false);
        expect(result.violations).toEqual([]);
        expect(result.triggered).toEqual(Array.from({ length: g.checkpoints }, (_, i) => i + 1));
        expect(actions.aborted).toEqual([]);
        expect(actions.blocked.size).toBe(0);
        expect(handler.pendingCheckpoints()).toEqual([]);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('with cancel markers: exactly the all-barrier checkpoints trigger; each cancelled one aborts once', () => {
    fc.assert(
      fc.property(barrierOrCancelScripts, fc.integer(), (g, seed) => {
        const { actions, result } = run(g, seed);
        expect(result.deadlocked).toBe(false);
        expect(result.violations).toEqual([]);
        expect(result.triggered).toEqual(everywhereBarriers(g));
        const abortedIds = actions.aborted.map((a) => a.checkpointId);
        expect(abortedIds).toEqual(cancelledSomewhere(g)); // once each, ascending
        for (const a of actions.aborted) expect(a).toMatchObject({ reason: 'declined', origin: 'upstream' });
        expect(actions.blocked.size).toBe(0);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('with ends of partition: an ended channel counts as aligned, so every checkpoint seen triggers, in order, none aborts', () => {
    fc.assert(
      fc.property(endingScripts, fc.integer(), (g, seed) => {
        const { actions, result } = run(g, seed);
        expect(result.deadlocked).toBe(false);
        expect(result.violations).toEqual([]);
        // Channel c carries barriers 1..e_c: a channel delivering k+1 already delivered (and is
        // blocked at) k, so nothing subsumes k; a channel without k ends before it.
        expect(result.triggered).toEqual(barrierSomewhere(g));
        expect(actions.aborted).toEqual([]);
        expect(actions.blocked.size).toBe(0);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
