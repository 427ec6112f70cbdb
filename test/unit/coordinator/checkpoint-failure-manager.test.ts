import { describe, expect, it } from 'vitest';
import {
  CheckpointFailureManager,
  countsAsCheckpointFailure,
} from '../../../src/coordinator/checkpoint-failure-manager.js';
import {
  type CheckpointFailureReason,
  CheckpointFailureThresholdError,
  InvalidOptionError,
} from '../../../src/errors.js';

describe('CheckpointFailureManager', () => {
  it("classifies reasons like Flink: only checkpointing's own failures count", () => {
    const all: CheckpointFailureReason[] = [
      'expired',
      'declined',
      'subsumed',
      'task-failure',
      'end-of-input',
      'async-snapshot-failed',
      'too-many-concurrent',
      'job-stopping',
      'storage-failed',
    ];
    expect(all.filter(countsAsCheckpointFailure)).toEqual([
      'expired',
      'declined',
      'async-snapshot-failed',
      'storage-failed',
    ]);
  });

  it('default 0: the first counted failure fails the job', () => {
    const m = new CheckpointFailureManager();
    expect(m.onFailure(1, 'subsumed', 'periodic')).toEqual({ kind: 'continue' });
    const d = m.onFailure(2, 'expired', 'periodic', new Error('x'));
    expect(d).toMatchObject({ kind: 'fail-job', reason: 'expired' });
    if (d.kind !== 'fail-job') throw new Error('unreachable');
    expect(d.error).toBeInstanceOf(CheckpointFailureThresholdError);
    expect(d.error.failureKind).toBe('task');
    expect(m.consecutiveFailures).toBe(0); // restarts counting after failing the job
  });

  it('counts consecutive failures, each checkpoint once, and resets on a newer success', () => {
    const m = new CheckpointFailureManager(2);
    expect(m.onFailure(1, 'declined', 'periodic').kind).toBe('continue');
    expect(m.onFailure(1, 'expired', 'periodic').kind).toBe('continue'); // same checkpoint: counted once
    expect(m.onFailure(2, 'declined', 'periodic').kind).toBe('continue');
    expect(m.consecutiveFailures).toBe(2);
    m.onSuccess(3);
    expect(m.consecutiveFailures).toBe(0);
    expect(m.onFailure(4, 'declined', 'manual').kind).toBe('continue');
    m.onSuccess(2); // older than the last success: no reset
    expect(m.consecutiveFailures).toBe(1);
    expect(m.onFailure(5, 'declined', 'periodic').kind).toBe('continue');
    expect(m.onFailure(6, 'storage-failed', 'periodic').kind).toBe('fail-job');
  });

  it('ignores savepoint failures and failures of checkpoints older than the last success', () => {
    const m = new CheckpointFailureManager(0);
    expect(m.onFailure(1, 'expired', 'savepoint').kind).toBe('continue');
    m.onSuccess(5);
    expect(m.onFailure(4, 'expired', 'periodic').kind).toBe('continue');
    expect(m.onFailure(6, 'expired', 'periodic').kind).toBe('fail-job');
  });

  it('Infinity tolerates everything; bad values are rejected', () => {
    const m = new CheckpointFailureManager(Infinity);
    for (let id = 1; id < 100; id++) expect(m.onFailure(id, 'expired', 'periodic').kind).toBe('continue');
    expect(() => new CheckpointFailureManager(-1)).toThrow(InvalidOptionError);
    expect(() => new CheckpointFailureManager(0.5)).toThrow(/tolerableFailures/);
  });
});
