import { describe, expect, it } from 'vitest';
import { FixedDelayRestartStrategy, NoRestartStrategy } from '../../../src/coordinator/restart-strategy.js';
import { decideFailover, planRestore, planStoredRestore } from '../../../src/coordinator/restore-planning.js';
import { CheckpointDeclinedError, InvalidOptionError, TaskFailureError } from '../../../src/errors.js';
import type { CheckpointMetadata } from '../../../src/state/storage/checkpoint-metadata.js';

describe('planRestore', () => {
  const exactlyOnce = { mode: 'exactly-once', allowFallbackPastDamaged: false } as const;

  it('restores the newest usable checkpoint, whatever the input order', () => {
    const plan = planRestore({
      candidates: [{ checkpointId: 3 }, { checkpointId: 7 }, { checkpointId: 5 }],
      request: 'latest',
      ...exactlyOnce,
    });
    expect(plan).toEqual({ kind: 'restore', checkpoint: { checkpointId: 7 }, warnings: [] });
  });

  const damagedNewest = [
    { checkpointId: 5 },
    { checkpointId: 7, problem: 'bad checksum' },
    { checkpointId: 6, problem: 'missing chunk' },
  ];
  const skipped = [
    { kind: 'skipped-unusable-checkpoint', checkpointId: 7, problem: 'bad checksum' },
    { kind: 'skipped-unusable-checkpoint', checkpointId: 6, problem: 'missing chunk' },
  ];

  it.each(['latest', 'explicit'] as const)(
    'exactly-once (%s): refuses to fall back past committed, damaged checkpoints, naming them and the fallback',
    (request) => {
      const plan = planRestore({ candidates: damagedNewest, request, ...exactlyOnce });
      expect(plan).toEqual({
        kind: 'fail',
        reason: 'fallback-past-committed',
        message: expect.stringMatching(/checkpoint\(s\) 7, 6 failed verification.*checkpoint 5/),
        fallback: { checkpointId: 5 },
        warnings: skipped,
      });
    },
  );

  it('falls back past damaged checkpoints, with one warning each, when the user allowed it or under at-least-once', () => {
    const allowed = planRestore({
      candidates: damagedNewest,
      request: 'latest',
      mode: 'exactly-once',
      allowFallbackPastDamaged: true,
    });
    expect(allowed).toEqual({ kind: 'restore', checkpoint: { checkpointId: 5 }, warnings: skipped });
    const atLeastOnce = planRestore({
      candidates: damagedNewest,
      request: 'latest',
      mode: 'at-least-once',
      allowFallbackPastDamaged: false,
    });
    expect(atLeastOnce).toEqual(allowed);
  });

  it('a damaged checkpoint older than the restored one is no fallback', () => {
    const plan = planRestore({
      candidates: [{ checkpointId: 4, problem: 'corrupt' }, { checkpointId: 5 }],
      request: 'latest',
      ...exactlyOnce,
    });
    expect(plan).toEqual({ kind: 'restore', checkpoint: { checkpointId: 5 }, warnings: [] });
  });

  it('no checkpoint: a fresh start for latest, a failure for an explicit location', () => {
    expect(planRestore({ candidates: [], request: 'latest', ...exactlyOnce })).toEqual({
      kind: 'fresh-start',
      reason: 'no-checkpoints',
      warnings: [],
    });
    expect(planRestore({ candidates: [], request: 'explicit', ...exactlyOnce })).toMatchObject({
      kind: 'fail',
      reason: 'location-empty',
    });
  });

  it('checkpoints exist but none is usable: fail, never start fresh, even when fallbacks are allowed', () => {
    const plan = planRestore({
      candidates: [{ checkpointId: 2, problem: 'corrupt' }],
      request: 'latest',
      mode: 'at-least-once',
      allowFallbackPastDamaged: true,
    });
    expect(plan).toMatchObject({
      kind: 'fail',
      reason: 'none-usable',
      message: expect.stringMatching(/none of the 1 checkpoint/),
    });
    expect(plan.warnings).toHaveLength(1);
  });
});

describe('decideFailover', () => {
  const taskFailure = new TaskFailureError('map (1/2)', 'map', 'boom', undefined);

  it('task failures restart as the strategy says, until it gives up', () => {
    const strategy = new FixedDelayRestartStrategy({ attempts: 2, delay: 250 });
    expect(decideFailover({ error: taskFailure, nowMs: 0, strategy })).toEqual({
      kind: 'restart',
      delayMs: 250,
      attempt: 1,
    });
    expect(decideFailover({ error: new Error('plain'), nowMs: 1, strategy })).toEqual({
      kind: 'restart',
      delayMs: 250,
      attempt: 2,
    });
    expect(decideFailover({ error: taskFailure, nowMs: 2, strategy })).toEqual({
      kind: 'fail-job',
      reason: 'restarts-exhausted',
      error: taskFailure,
    });
  });

  it('fatal errors fail the job without using up a restart attempt', () => {
    const strategy = new FixedDelayRestartStrategy({ attempts: 1 });
    const fatal = new InvalidOptionError('parallelism', 'must be >= 1');
    expect(decideFailover({ error: fatal, nowMs: 0, strategy })).toEqual({
      kind: 'fail-job',
      reason: 'fatal-error',
      error: fatal,
    });
    expect(strategy.restarts).toBe(0);
    expect(decideFailover({ error: taskFailure, nowMs: 0, strategy }).kind).toBe('restart');
  });

  it('a task failure whose original error was fatal (reported by a worker) is fatal', () => {
    const strategy = new FixedDelayRestartStrategy({ attempts: 3 });
    const fromWorker = new TaskFailureError('map (1/1)', 'map', 'AsyncUserFunctionError: ...', undefined, {
      failureKind: 'fatal',
      originalName: 'AsyncUserFunctionError',
      originalCode: 'ERR_WEIR_ASYNC_USER_FUNCTION',
    });
    expect(decideFailover({ error: fromWorker, nowMs: 0, strategy })).toMatchObject({
      kind: 'fail-job',
      reason: 'fatal-error',
    });
    expect(strategy.restarts).toBe(0);
  });

  it('a decline that failed its execution restarts like a task failure; no strategy gives up at once', () => {
    const decline = new CheckpointDeclinedError(3, 'expired', 'too slow');
    expect(
      decideFailover({ error: decline, nowMs: 0, strategy: new FixedDelayRestartStrategy({ attempts: 1 }) }),
    ).toMatchObject({ kind: 'restart', attempt: 1 });
    expect(decideFailover({ error: taskFailure, nowMs: 0, strategy: new NoRestartStrategy() })).toMatchObject(
      {
        kind: 'fail-job',
        reason: 'restarts-exhausted',
      },
    );
  });
});

describe('planStoredRestore (what a checkpoint directory holds)', () => {
  const metadata = { checkpointId: 4 } as CheckpointMetadata;
  const skipped = [
    {
      checkpointId: 5,
      state: 'metadata-corrupt' as const,
      problems: ['chunk a: corrupt', 'chunk b: missing'],
    },
  ];
  it('the usable checkpoint carries its metadata; the skipped ones their problems, joined', () => {
    const usable = planStoredRestore(
      { state: 'found', metadata, skipped: [] },
      'latest',
      'exactly-once',
      false,
    );
    expect(usable).toMatchObject({ kind: 'restore', checkpoint: { checkpointId: 4, metadata } });
    const refused = planStoredRestore({ state: 'found', metadata, skipped }, 'latest', 'exactly-once', false);
    expect(refused).toMatchObject({
      kind: 'fail',
      reason: 'fallback-past-committed',
      fallback: { checkpointId: 4, metadata },
      warnings: [{ checkpointId: 5, problem: 'chunk a: corrupt; chunk b: missing' }],
    });
    expect(planStoredRestore({ state: 'none', skipped: [] }, 'latest', 'exactly-once', false)).toMatchObject({
      kind: 'fresh-start',
    });
  });
});
