/** The final checkpoint's pure state machine: scripted sequences, then seeded random interleavings. */

import { describe, expect, it } from 'vitest';
import {
  FINAL_CHECKPOINT_ATTEMPTS,
  type FinalCheckpointEffect,
  type FinalCheckpointEvent,
  type FinalCheckpointState,
  finalCheckpointStep,
  initialFinalCheckpointState,
} from '../../../src/coordinator/final-checkpoint-state.js';
import { prng } from '../../fixtures/channels/stress-sequence.js';

const TASKS = ['0/0', '1/0', '2/0'];

/** Runs `events` from the initial state; returns the final state and every effect, in order. */
function run(
  events: readonly FinalCheckpointEvent[],
  from: FinalCheckpointState = initialFinalCheckpointState(),
): { state: FinalCheckpointState; effects: FinalCheckpointEffect[] } {
  let state = from;
  const effects: FinalCheckpointEffect[] = [];
  for (const e of events) {
    const t = finalCheckpointStep(state, e);
    state = t.next;
    effects.push(...t.effects);
  }
  return { state, effects };
}

const attached = (execution: number): FinalCheckpointEvent => ({ kind: 'attached', execution, tasks: TASKS });
const ended = (execution: number, task: string): FinalCheckpointEvent => ({
  kind: 'input-ended',
  execution,
  task,
});
const allEnded = (execution: number) => TASKS.map((t) => ended(execution, t));
const rejected = (execution: number, attempt: number): FinalCheckpointEvent => ({
  kind: 'rejected',
  execution,
  attempt,
  error: new Error(`final ${execution}.${attempt} declined`),
});

describe('final checkpoint state machine', () => {
  it('triggers once, when the last task of the attached execution ended; repeated ends change nothing', () => {
    const { effects, state } = run([attached(1), ended(1, '0/0'), ended(1, '1/0'), ended(1, '0/0')]);
    expect(effects).toEqual([]);
    const last = run([ended(1, '2/0'), ended(1, '2/0'), ended(1, '1/0')], state);
    expect(last.effects).toEqual([{ kind: 'trigger', execution: 1, attempt: 1 }]);
    expect(last.state.phase).toBe('pending');
    const done = run([{ kind: 'completed', execution: 1, attempt: 1 }, ...allEnded(1)], last.state);
    expect(done.effects).toEqual([]);
    expect(done.state.phase).toBe('completed');
  });

  it('does not mutate the state it is given', () => {
    const s = run([attached(1), ended(1, '0/0')]).state;
    const before = { ...s, tasks: [...s.tasks], inputEnded: [...s.inputEnded] };
    finalCheckpointStep(s, ended(1, '1/0'));
    finalCheckpointStep(s, attached(2));
    expect({ ...s, tasks: [...s.tasks], inputEnded: [...s.inputEnded] }).toEqual(before);
  });

  it("after a restart: the failed attempt's pending final checkpoint, its rejection and its tasks' late ends are stale; the restored attempt triggers on its own ends", () => {
    const failed = run([attached(1), ...allEnded(1), { kind: 'detached' }]);
    expect(failed.effects).toEqual([{ kind: 'trigger', execution: 1, attempt: 1 }]);
    // Failover aborted it: its rejection arrives after the detach, or even after the next attach.
    const restored = run([rejected(1, 1), attached(2), rejected(1, 1), ended(1, '2/0')], failed.state);
    expect(restored.effects).toEqual([]);
    expect(restored.state).toMatchObject({ execution: 2, phase: 'waiting', attempts: 0 });
    expect(restored.state.inputEnded.size).toBe(0);
    // Its own ends, in another order than the first attempt's, trigger its final checkpoint.
    const own = run([ended(2, '2/0'), ended(1, '0/0'), ended(2, '0/0'), ended(2, '1/0')], restored.state);
    expect(own.effects).toEqual([{ kind: 'trigger', execution: 2, attempt: 1 }]);
  });

  it('an end of input reported before its execution attached is dropped: attach must come first (JobClient attaches in the step that constructs the execution)', () => {
    const early = run([
      attached(1),
      { kind: 'detached' },
      ended(2, '0/0'),
      attached(2),
      ended(2, '1/0'),
      ended(2, '2/0'),
    ]);
    expect(early.effects).toEqual([]);
    expect([...early.state.inputEnded]).toEqual(['1/0', '2/0']);
  });

  it('retries a rejected final checkpoint (warning each time) and fails the execution after the last attempt; stale rejections are ignored', () => {
    let r = run([attached(1), ...allEnded(1)]);
    for (let attempt = 1; attempt < FINAL_CHECKPOINT_ATTEMPTS; attempt++) {
      const stale = run([rejected(1, attempt - 1), rejected(0, attempt)], r.state);
      expect(stale.effects).toEqual([]);
      r = run([rejected(1, attempt)], r.state);
      expect(r.effects.map((e) => e.kind)).toEqual(['warn', 'trigger']);
      expect(r.effects[1]).toEqual({ kind: 'trigger', execution: 1, attempt: attempt + 1 });
    }
    const last = run([rejected(1, FINAL_CHECKPOINT_ATTEMPTS)], r.state);
    expect(last.effects).toEqual([
      { kind: 'fail-execution', error: new Error(`final 1.${FINAL_CHECKPOINT_ATTEMPTS} declined`) },
    ]);
    expect(last.state.phase).toBe('waiting');
  });

  it('stop-with-savepoint holds it back; a refused savepoint triggers it unless one is pending or completed; the hold survives a restart', () => {
    const held = run([attached(1), { kind: 'savepoint-started' }, ...allEnded(1)]);
    expect(held.effects).toEqual([]);
    expect(run([{ kind: 'savepoint-failed' }], held.state).effects).toEqual([
      { kind: 'trigger', execution: 1, attempt: 1 },
    ]);
    // Refused while the final checkpoint is under way, or after it completed: no second one.
    const pending = run([
      attached(1),
      ...allEnded(1),
      { kind: 'savepoint-started' },
      { kind: 'savepoint-failed' },
    ]);
    expect(pending.effects).toEqual([{ kind: 'trigger', execution: 1, attempt: 1 }]);
    const completed = run(
      [
        { kind: 'completed', execution: 1, attempt: 1 },
        { kind: 'savepoint-started' },
        { kind: 'savepoint-failed' },
      ],
      pending.state,
    );
    expect(completed.effects).toEqual([]);
    // A rejection while stopping is warned about but not retried until the savepoint is refused.
    const rejectedWhileStopping = run([{ kind: 'savepoint-started' }, rejected(1, 1)], pending.state);
    expect(rejectedWhileStopping.effects.map((e) => e.kind)).toEqual(['warn']);
    expect(run([{ kind: 'savepoint-failed' }], rejectedWhileStopping.state).effects).toEqual([
      { kind: 'trigger', execution: 1, attempt: 2 },
    ]);
    const restarted = run(
      [{ kind: 'detached' }, attached(2), ...allEnded(2)],
      run([{ kind: 'savepoint-started' }], pending.state).state,
    );
    expect(restarted.effects).toEqual([]);
  });

  it('throws on an end of input from a task the attached execution does not have, before any effect', () => {
    const s = run([attached(1), ended(1, '0/0')]).state;
    expect(() => finalCheckpointStep(s, ended(1, '9/9'))).toThrow(/task 9\/9 .* not a task of execution 1/);
  });

  it('seeded random interleavings of two attempts: triggers only for the attached execution, once all its tasks ended, one at a time, at most the attempt limit', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const random = prng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
      const shuffled = <T>(xs: readonly T[]): T[] => {
        const out = [...xs];
        for (let i = out.length - 1; i > 0; i--) {
          const j = Math.floor(random() * (i + 1));
          [out[i], out[j]] = [out[j], out[i]];
        }
        return out;
      };
      let state = initialFinalCheckpointState();
      // Outcomes the coordinator still owes, by the trigger they answer.
      let owed: { execution: number; attempt: number }[] = [];
      const triggers: { execution: number; attempt: number }[] = [];
      let failed = 0;
      let ownEnded = new Set<string>();
      const apply = (e: FinalCheckpointEvent) => {
        const before = state;
        const t = finalCheckpointStep(state, e);
        state = t.next;
        for (const effect of t.effects) {
          if (effect.kind === 'trigger') {
            expect(effect.execution, `seed ${seed}`).toBe(before.execution);
            // Every task of this execution reported (a late end of the previous one does not count).
            expect(ownEnded.size, `seed ${seed}`).toBe(TASKS.length);
            expect(
              owed.filter((o) => o.execution === effect.execution),
              `seed ${seed}: one at a time`,
            ).toEqual([]);
            triggers.push(effect);
            owed.push(effect);
          }
          if (effect.kind === 'fail-execution') failed++;
        }
      };
      for (const execution of [1, 2]) {
        apply(attached(execution));
        ownEnded = new Set();
        const endOwn = (task: string) => {
          ownEnded.add(task);
          apply(ended(execution, task));
        };
        // This attempt's ends, late ends of the previous attempt, and outcomes of owed triggers.
        const pendingEnds = shuffled(TASKS);
        const steps = pendingEnds.length + 6;
        for (let i = 0; i < steps; i++) {
          const r = random();
          if (r < 0.5 && pendingEnds.length > 0) endOwn(pendingEnds.pop()!);
          else if (r < 0.6 && execution > 1) apply(ended(execution - 1, pick(TASKS)));
          else if (owed.length > 0) {
            const o = pick(owed);
            owed = owed.filter((x) => x !== o);
            apply(
              random() < 0.7
                ? rejected(o.execution, o.attempt)
                : { kind: 'completed', execution: o.execution, attempt: o.attempt },
            );
          }
        }
        while (pendingEnds.length > 0) endOwn(pendingEnds.pop()!);
        const mine = triggers.filter((t) => t.execution === execution);
        expect(mine.length, `seed ${seed}`).toBeGreaterThanOrEqual(1);
        expect(mine.length, `seed ${seed}`).toBeLessThanOrEqual(FINAL_CHECKPOINT_ATTEMPTS);
        expect(
          mine.map((t) => t.attempt),
          `seed ${seed}`,
        ).toEqual(mine.map((_, i) => i + 1));
        if (execution === 1) apply({ kind: 'detached' });
      }
      // Every outcome of the first attempt arrives after the second attached: none counts.
      const outcomesOfFirst = owed.filter((o) => o.execution === 1);
      const triggersBefore = triggers.length;
      const failedBefore = failed;
      for (const o of outcomesOfFirst) apply(rejected(o.execution, o.attempt));
      expect(triggers.length, `seed ${seed}`).toBe(triggersBefore);
      expect(failed, `seed ${seed}`).toBe(failedBefore);
    }
  });
});
