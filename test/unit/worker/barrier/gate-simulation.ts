/**
 * A single-threaded model of an input gate for randomized barrier tests: each channel is a
 * script of events; the gate repeatedly delivers the next event of a channel chosen by
 * `choose` among the channels that are not blocked and have events left, exactly as a real gate
 * may interleave them. Checks the exactly-once alignment invariant on every trigger.
 */

import type { BarrierHandler } from '../../../../src/worker/barrier/barrier-handler.js';
import { barrier, type RecordingActions } from './recording-actions.js';

export type ScriptEvent =
  | { readonly kind: 'records' }
  | { readonly kind: 'barrier'; readonly checkpointId: number }
  | { readonly kind: 'cancel'; readonly checkpointId: number }
  | { readonly kind: 'end' };

export interface SimulationResult {
  /** Checkpoints triggered, in order. */
  readonly triggered: number[];
  /** For each trigger: did every channel deliver its barrier or end before it? */
  readonly violations: string[];
  /** True when events were left but every channel that had some was blocked. */
  readonly deadlocked: boolean;
}

/**
 * Runs `scripts` through `handler`. `choose(n)` picks an index in [0, n).
 * A record delivered after channel c's barrier k, before checkpoint k triggered or was
 * aborted, is a violation when `aligned` (it would leak post-barrier data into snapshot k).
 */
export function simulateGate(
  handler: BarrierHandler,
  actions: RecordingActions,
  scripts: readonly (readonly ScriptEvent[])[],
  choose: (n: number) => number,
  aligned: boolean,
): SimulationResult {
  const position = scripts.map(() => 0);
  /** Per channel: ids of the barriers and cancel markers delivered, and whether it ended. */
  const delivered = scripts.map(() => new Set<number>());
  const ended = scripts.map(() => false);
  /** Checkpoint ids of records' preceding barriers, per delivered record ("after barrier k"). */
  const afterBarrierProcessed = new Set<number>();
  const triggered: number[] = [];
  const violations: string[] = [];

  actions.onTrigger = (b) => {
    const k = b.checkpointId;
    triggered.push(k);
    scripts.forEach((_s, c) => {
      if (!ended[c] && !delivered[c].has(k)) violations.push(`trigger ${k} before channel ${c} delivered it`);
    });
    if (aligned && afterBarrierProcessed.has(k))
      violations.push(`a record after barrier ${k} was processed before trigger ${k}`);
  };

  for (;;) {
    const ready = scripts
      .map((_s, c) => c)
      .filter((c) => position[c] < scripts[c].length && !actions.blocked.has(c));
    if (ready.length === 0) {
      const left = scripts.some((s, c) => position[c] < s.length);
      return { triggered, violations, deadlocked: left };
    }
    const c = ready[choose(ready.length)];
    const event = scripts[c][position[c]++];
    switch (event.kind) {
      case 'records': {
        // Records after the last barrier this channel delivered, for checkpoints still open.
        for (const k of delivered[c]) if (!isSettled(actions, k)) afterBarrierProcessed.add(k);
        break;
      }
      case 'barrier':
        delivered[c].add(event.checkpointId);
        handler.onBarrier(c, barrier(event.checkpointId));
        break;
      case 'cancel':
        delivered[c].add(event.checkpointId);
        handler.onCancelMarker(c, event.checkpointId);
        break;
      case 'end':
        ended[c] = true;
        handler.onEndOfPartition(c);
        break;
    }
  }
}

function isSettled(actions: RecordingActions, k: number): boolean {
  return (
    actions.aborted.some((a) => a.checkpointId === k) ||
    actions.triggered.some((t) => t.barrier.checkpointId === k)
  );
}

/** mulberry32: a tiny seeded PRNG, for interleavings. */
export function seededChooser(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return Math.floor(r * n);
  };
}
