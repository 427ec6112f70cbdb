/** fast-check generators of per-channel event scripts for the randomized barrier tests. */

import fc from 'fast-check';
import type { ScriptEvent } from './gate-simulation.js';

const records = fc
  .integer({ min: 0, max: 2 })
  .map((n) => Array.from({ length: n }, (): ScriptEvent => ({ kind: 'records' })));

export interface GeneratedScripts {
  readonly checkpoints: number;
  readonly scripts: ScriptEvent[][];
}

/**
 * `channels` x `checkpoints` scripts: records, then for each checkpoint k (1..K) the event
 * `eventOf(channel, k)` (a barrier, a cancel marker, or end-of-script), then records.
 */
function scripts(mark: fc.Arbitrary<'barrier' | 'cancel'>, withEnd: boolean): fc.Arbitrary<GeneratedScripts> {
  return fc
    .record({ channels: fc.integer({ min: 1, max: 6 }), checkpoints: fc.integer({ min: 1, max: 5 }) })
    .chain(({ channels, checkpoints }) =>
      fc.record({
        checkpoints: fc.constant(checkpoints),
        scripts: fc.array(
          fc
            .record({
              segments: fc.array(fc.tuple(records, mark), { minLength: checkpoints, maxLength: checkpoints }),
              tail: records,
              endAfter: withEnd ? fc.integer({ min: 0, max: checkpoints }) : fc.constant(checkpoints),
            })
            .map(({ segments, tail, endAfter }) => {
              const events: ScriptEvent[] = [];
              segments.slice(0, endAfter).forEach(([rs, m], i) => {
                events.push(...rs, { kind: m, checkpointId: i + 1 });
              });
              events.push(...tail);
              if (withEnd) events.push({ kind: 'end' });
              return events;
            }),
          { minLength: channels, maxLength: channels },
        ),
      }),
    );
}

/** Every channel carries a barrier for every checkpoint. */
export const allBarrierScripts = scripts(fc.constant('barrier'), false);
/** Each (channel, checkpoint) carries a barrier or, one time in four, a cancel marker. */
export const barrierOrCancelScripts = scripts(
  fc.integer({ min: 0, max: 3 }).map((n) => (n === 0 ? 'cancel' : 'barrier')),
  false,
);
/** Channel c carries barriers 1..e_c, then ends. */
export const endingScripts = scripts(fc.constant('barrier'), true);

/** Checkpoint ids every channel carries a barrier for. */
export function everywhereBarriers(g: GeneratedScripts): number[] {
  const ids: number[] = [];
  for (let k = 1; k <= g.checkpoints; k++) {
    if (g.scripts.every((s) => s.some((e) => e.kind === 'barrier' && e.checkpointId === k))) ids.push(k);
  }
  return ids;
}

/** Checkpoint ids some channel carries a cancel marker for. */
export function cancelledSomewhere(g: GeneratedScripts): number[] {
  const ids = new Set<number>();
  for (const s of g.scripts) for (const e of s) if (e.kind === 'cancel') ids.add(e.checkpointId);
  return [...ids].sort((a, b) => a - b);
}

/** Checkpoint ids at least one channel carries a barrier for. */
export function barrierSomewhere(g: GeneratedScripts): number[] {
  const ids = new Set<number>();
  for (const s of g.scripts) for (const e of s) if (e.kind === 'barrier') ids.add(e.checkpointId);
  return [...ids].sort((a, b) => a - b);
}
