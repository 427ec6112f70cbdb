import { describe, expect, it } from 'vitest';
import {
  type ClusterJobOutcome,
  type ClusterJobStop,
  initialRunControl,
  noteComplete,
  type RunControlFacts,
  reconcileRunControl,
} from '../../../src/cluster/run-control.js';

const facts: RunControlFacts = {
  self: 'b',
  run: 'r2',
  lineage: 'r1',
  coordinator: 'a',
  assignmentRun: 'r2',
  checkpoint: null,
  outcome: null,
  leaseHeld: false,
};
const outcome: ClusterJobOutcome = {
  kind: 'failed',
  lineage: 'r1',
  run: 'r2',
  message: 'job failed after 1 restart(s): instance a failed: boom',
  reason: 'restarts-exhausted',
  restarts: 1,
};

describe('reconcileRunControl (the coordinator’s committed records read back by a member)', () => {
  it('a complete read from the record is carried out once, only upward, and only for this run', () => {
    let s = initialRunControl;
    const step = (f: Partial<RunControlFacts>) => {
      const r = reconcileRunControl(s, { ...facts, ...f });
      s = r.next;
      return r.actions;
    };
    expect(step({ checkpoint: { run: 'r1', checkpointId: 4 } })).toEqual([]); // the restored run's
    expect(step({ checkpoint: { run: 'r2', checkpointId: 5 } })).toEqual([
      { kind: 'complete', checkpointId: 5 },
    ]);
    expect(step({ checkpoint: { run: 'r2', checkpointId: 5 } })).toEqual([]); // read again
    // The ctl message for 5 arrives late, then 6's message first and its record after.
    expect(noteComplete(s, 5).action).toBeNull();
    const m6 = noteComplete(s, 6);
    expect(m6.action).toEqual({ kind: 'complete', checkpointId: 6 });
    s = m6.next;
    expect(step({ checkpoint: { run: 'r2', checkpointId: 6 } })).toEqual([]);
    // A lost complete (7) is overtaken by 8's record: 8 commits everything up to it.
    expect(step({ checkpoint: { run: 'r2', checkpointId: 8 } })).toEqual([
      { kind: 'complete', checkpointId: 8 },
    ]);
  });

  it('a lost restart: another run assigned, or this instance took the lease over', () => {
    expect(reconcileRunControl(initialRunControl, { ...facts, assignmentRun: 'r3' }).actions).toEqual([
      { kind: 'restart', reason: expect.stringMatching(/published run r3/) },
    ]);
    expect(reconcileRunControl(initialRunControl, { ...facts, leaseHeld: true }).actions).toEqual([
      { kind: 'restart', reason: expect.stringMatching(/took the coordinator lease over from a/) },
    ]);
    // The coordinator itself holds the lease: nothing.
    expect(reconcileRunControl(initialRunControl, { ...facts, self: 'a', leaseHeld: true }).actions).toEqual(
      [],
    );
    // No assignment key (deleted by a clean-up): nothing to conclude.
    expect(reconcileRunControl(initialRunControl, { ...facts, assignmentRun: null }).actions).toEqual([]);
  });

  it('a lost fail: the committed outcome of this job fails the run; another job’s outcome is ignored', () => {
    expect(reconcileRunControl(initialRunControl, { ...facts, outcome }).actions).toEqual([
      { kind: 'fail', outcome },
    ]);
    expect(
      reconcileRunControl(initialRunControl, { ...facts, outcome: { ...outcome, lineage: 'old' } }).actions,
    ).toEqual([]);
    // The final complete comes first: the sinks commit what completed before the job failed.
    expect(
      reconcileRunControl(initialRunControl, {
        ...facts,
        outcome,
        checkpoint: { run: 'r2', checkpointId: 3 },
      }).actions,
    ).toEqual([
      { kind: 'complete', checkpointId: 3 },
      { kind: 'fail', outcome },
    ]);
  });

  it('a lost stop: the committed stop of this job stops the run, after the complete of its savepoint, and no restart is asked with it', () => {
    const stop: ClusterJobStop = {
      kind: 'stopped',
      lineage: 'r1',
      run: 'r2',
      requestId: 'b-1',
      checkpointId: 7,
      path: '/sp',
    };
    expect(
      reconcileRunControl(initialRunControl, {
        ...facts,
        outcome: stop,
        checkpoint: { run: 'r2', checkpointId: 7 },
        // The coordinator left after the stop and this instance took the lease over: still no restart.
        leaseHeld: true,
      }).actions,
    ).toEqual([
      { kind: 'complete', checkpointId: 7 },
      { kind: 'stop', stop },
    ]);
    // Another run assigned meanwhile (cannot happen once the stop is committed; the stop wins).
    expect(
      reconcileRunControl(initialRunControl, { ...facts, outcome: stop, assignmentRun: 'r3' }).actions,
    ).toEqual([{ kind: 'stop', stop }]);
    expect(
      reconcileRunControl(initialRunControl, { ...facts, outcome: { ...stop, lineage: 'old' } }).actions,
    ).toEqual([]);
  });
});
