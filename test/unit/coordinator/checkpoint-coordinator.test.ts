/** The coordinator on scripted timelines with a fake clock: no real timers, no sleeps. */

import { describe, expect, it } from 'vitest';
import {
  type AbortedCheckpoint,
  CheckpointCoordinator,
  NO_CHECKPOINT_ID,
} from '../../../src/coordinator/checkpoint-coordinator.js';
import type { CheckpointCoordinatorOptions } from '../../../src/coordinator/checkpoint-coordinator-options.js';
import type { CheckpointKind } from '../../../src/coordinator/checkpoint-kind.js';
import type {
  CompletedCheckpoint,
  TaskAcknowledgement,
} from '../../../src/coordinator/completed-checkpoint.js';
import {
  CheckpointDeclinedError,
  type CheckpointFailureReason,
  CheckpointFailureThresholdError,
  InvalidOptionError,
} from '../../../src/errors.js';
import { FakeClock, flushPromises } from './fake-clock.js';

const SOURCES = ['1/0', '1/1'];
const ALL = ['1/0', '1/1', '2/0'];

function ack(
  over: Partial<TaskAcknowledgement['metrics']> = {},
  stateHandles: unknown = 'h',
): TaskAcknowledgement {
  return {
    stateHandles,
    metrics: { alignmentDurationMs: 0, syncDurationMs: 1, asyncDurationMs: 2, stateSizeBytes: 10, ...over },
  };
}

interface Deferred {
  resolve(): void;
  reject(e: unknown): void;
}

function setup(options: Partial<CheckpointCoordinatorOptions> = {}, commitMode: 'auto' | 'manual' = 'auto') {
  const clock = new FakeClock(0);
  const triggered: { id: number; timestamp: number; tasks: readonly string[]; kind: CheckpointKind }[] = [];
  const completedNotified: number[] = [];
  const abortedNotified: [number, CheckpointFailureReason][] = [];
  const committed: number[] = [];
  const pendingCommits: Deferred[] = [];
  const discarded: number[] = [];
  const completed: CompletedCheckpoint[] = [];
  const aborted: AbortedCheckpoint[] = [];
  const failJob: CheckpointFailureThresholdError[] = [];
  const errors: unknown[] = [];
  let triggerError: unknown;
  const coordinator = new CheckpointCoordinator(
    { interval: 100, ...options },
    {
      clock,
      gateway: {
        triggerSources: (id, timestamp, tasks, kind) => {
          if (triggerError !== undefined) throw triggerError;
          triggered.push({ id, timestamp, tasks, kind });
        },
        notifyComplete: (id) => {
          completedNotified.push(id);
        },
        notifyAborted: (id, reason) => {
          abortedNotified.push([id, reason]);
        },
      },
      commit: (c) => {
        committed.push(c.checkpointId);
        if (commitMode === 'auto') return Promise.resolve();
        return new Promise<void>((resolve, reject) => pendingCommits.push({ resolve, reject }));
      },
      discard: async (c) => {
        discarded.push(c.checkpointId);
      },
      listener: {
        onCompleted: (c) => completed.push(c),
        onAborted: (a) => aborted.push(a),
        onFailJob: (e) => failJob.push(e),
        onError: (e) => errors.push(e),
      },
    },
  );
  coordinator.setTasks(SOURCES, ALL);
  const ackAll = (id: number) => {
    for (const t of ALL) expect(coordinator.receiveAcknowledge(t, id, ack())).toBe('success');
  };
  return {
    clock,
    coordinator,
    triggered,
    completedNotified,
    abortedNotified,
    committed,
    pendingCommits,
    discarded,
    completed,
    aborted,
    failJob,
    errors,
    ackAll,
    failTriggers(e: unknown) {
      triggerError = e;
    },
  };
}

describe('CheckpointCoordinator: periodic triggering', () => {
  it('triggers the sources every interval and completes once every task acknowledged and the commit is durable', async () => {
    const t = setup();
    t.coordinator.start();
    t.clock.advance(99);
    expect(t.triggered).toEqual([]);
    t.clock.advance(1);
    expect(t.triggered).toEqual([{ id: 1, timestamp: 100, tasks: SOURCES, kind: 'periodic' }]);
    t.clock.advance(30);
    expect(t.coordinator.receiveAcknowledge('1/0', 1, ack({ alignmentDurationMs: 3 }, 'a'))).toBe('success');
    expect(t.coordinator.receiveAcknowledge('1/1', 1, ack({ syncDurationMs: 4 }, 'b'))).toBe('success');
    expect(t.committed).toEqual([]);
    expect(t.coordinator.receiveAcknowledge('2/0', 1, ack({ asyncDurationMs: 7 }, 'c'))).toBe('success');
    expect(t.committed).toEqual([1]);
    expect(t.completed).toEqual([]); // not before the commit is durable
    await flushPromises();
    expect(t.completed).toHaveLength(1);
    expect(t.completed[0]).toMatchObject({
      checkpointId: 1,
      kind: 'periodic',
      timestamp: 100,
      completionTimestamp: 130,
      taskStates: { '1/0': 'a', '1/1': 'b', '2/0': 'c' },
      stats: {
        endToEndDurationMs: 30,
        maxAlignmentDurationMs: 3,
        syncDurationMs: { max: 4, sum: 6 },
        asyncDurationMs: { max: 7, sum: 11 },
        stateSizeBytes: 30,
        acknowledgedTasks: 3,
      },
    });
    expect(t.coordinator.store.latest()?.checkpointId).toBe(1);
    expect(t.completedNotified).toEqual([1]);
    t.clock.advance(70); // next trigger 100 ms after the previous one
    expect(t.triggered.map((x) => [x.id, x.timestamp])).toEqual([
      [1, 100],
      [2, 200],
    ]);
  });

  it('held until the tasks run: no periodic trigger meanwhile (forced ones still go), a due one fires at release', async () => {
    const t = setup();
    t.coordinator.holdPeriodicUntilRunning();
    t.coordinator.start();
    t.clock.advance(250);
    expect(t.triggered).toEqual([]);
    const savepoint = t.coordinator.triggerCheckpoint('savepoint');
    expect(t.triggered.map((x) => [x.id, x.kind])).toEqual([[1, 'savepoint']]);
    t.ackAll(1);
    await savepoint;
    t.clock.advance(200);
    expect(t.triggered).toHaveLength(1);
    t.coordinator.releasePeriodic();
    t.clock.advance(0);
    expect(t.triggered.map((x) => [x.id, x.timestamp, x.kind])).toEqual([
      [1, 250, 'savepoint'],
      [2, 450, 'periodic'],
    ]);
    t.ackAll(2);
    await flushPromises();
    t.clock.advance(99);
    expect(t.triggered).toHaveLength(2);
    t.clock.advance(1);
    expect(t.triggered.map((x) => [x.id, x.timestamp])).toContainEqual([3, 550]);
  });

  it('maxConcurrent: holds the next periodic trigger while one is pending, fires it as soon as that one ends', async () => {
    const t = setup({ maxConcurrent: 1 });
    t.coordinator.start();
    t.clock.advance(100);
    t.clock.advance(250);
    expect(t.triggered.map((x) => x.id)).toEqual([1]);
    t.ackAll(1);
    await flushPromises();
    t.clock.advance(0);
    expect(t.triggered.map((x) => [x.id, x.timestamp])).toEqual([
      [1, 100],
      [2, 350],
    ]);
  });

  it('maxConcurrent 2: two in flight; the newer completing first subsumes the older (not counted as a failure)', async () => {
    const t = setup({ maxConcurrent: 2 });
    t.coordinator.start();
    t.clock.advance(200);
    expect(t.triggered.map((x) => x.id)).toEqual([1, 2]);
    t.clock.advance(500);
    expect(t.triggered).toHaveLength(2);
    t.ackAll(2);
    await flushPromises();
    expect(t.aborted.map((a) => [a.checkpointId, a.reason])).toEqual([[1, 'subsumed']]);
    expect(t.failJob).toEqual([]);
    expect(t.coordinator.receiveAcknowledge('1/0', 1, ack())).toBe('discarded');
  });

  it('minPause: the next trigger waits minPause after the last completion', async () => {
    const t = setup({ minPause: 80 });
    t.coordinator.start();
    t.clock.advance(100);
    t.clock.advance(50);
    t.ackAll(1); // completes at 150
    await flushPromises();
    t.clock.advance(79); // 229
    expect(t.triggered).toHaveLength(1);
    t.clock.advance(1); // 230 = 150 + 80, later than 100 + 100
    expect(t.triggered.map((x) => x.timestamp)).toEqual([100, 230]);
  });

  it('stops periodic triggers once the sources finished, but still runs the final checkpoint on every task', async () => {
    const t = setup();
    t.coordinator.start();
    t.coordinator.setSourcesFinished(true);
    t.clock.advance(1000);
    expect(t.triggered).toEqual([]);
    expect(t.clock.pendingTimers).toBe(0);
    await expect(t.coordinator.triggerCheckpoint('manual')).rejects.toMatchObject({ reason: 'end-of-input' });
    const final = t.coordinator.triggerCheckpoint('final');
    expect(t.triggered).toEqual([{ id: 1, timestamp: 1000, tasks: ALL, kind: 'final' }]);
    t.ackAll(1);
    await expect(final).resolves.toMatchObject({ checkpointId: 1, kind: 'final' });
    expect(t.completedNotified).toEqual([1]);
  });
});

describe('CheckpointCoordinator: tasks that finished', () => {
  it('aborts a checkpoint still waiting for a task whose thread ended, at once instead of at its timeout', async () => {
    const t = setup({ timeout: 60_000 });
    t.coordinator.start();
    t.clock.advance(100);
    expect(t.coordinator.receiveAcknowledge('2/0', 1, ack())).toBe('success');
    t.coordinator.taskFinished('2/0'); // acknowledged already: no reason to abort
    expect(t.aborted).toEqual([]);
    t.coordinator.taskFinished('1/1');
    expect(t.aborted).toMatchObject([{ checkpointId: 1, reason: 'end-of-input' }]);
    expect(t.coordinator.pendingCheckpointIds()).toEqual([]);
  });

  it('aborts a later checkpoint that includes a finished task as soon as it is triggered', async () => {
    const t = setup({ timeout: 60_000 });
    t.coordinator.start();
    t.coordinator.taskFinished('2/0');
    t.coordinator.setSourcesFinished(true);
    const final = t.coordinator.triggerCheckpoint('final');
    await expect(final).rejects.toMatchObject({ reason: 'end-of-input' });
    await expect(final).rejects.toThrow(/2\/0 finished before acknowledging/);
    expect(t.coordinator.pendingCheckpointIds()).toEqual([]);
    // a new deployment starts with every task alive
    t.coordinator.setTasks(SOURCES, ALL);
    const again = t.coordinator.triggerCheckpoint('final');
    t.ackAll(2);
    await expect(again).resolves.toMatchObject({ checkpointId: 2 });
  });
});

describe('CheckpointCoordinator: checkpoints after tasks finish (FLIP-147)', () => {
  it('periodic checkpoints go on after a source ended: it is triggered directly and its final state acknowledged', async () => {
    const t = setup();
    t.coordinator.start();
    t.coordinator.taskInputEnded('1/1');
    t.clock.advance(100);
    expect(t.triggered).toEqual([{ id: 1, timestamp: 100, tasks: SOURCES, kind: 'periodic' }]);
    t.ackAll(1);
    await flushPromises();
    expect(t.completed.map((c) => c.checkpointId)).toEqual([1]);
    expect(t.completed[0].taskStates).toEqual({ '1/0': 'h', '1/1': 'h', '2/0': 'h' });
    t.clock.advance(100);
    expect(t.triggered.map((x) => x.id)).toEqual([1, 2]);
  });

  it('a non-source task whose input ended is triggered directly by later checkpoints', () => {
    const t = setup();
    t.coordinator.start();
    t.coordinator.taskInputEnded('2/0');
    t.clock.advance(100);
    expect(t.triggered).toEqual([{ id: 1, timestamp: 100, tasks: ALL, kind: 'periodic' }]);
  });

  it('a task that ends its input while it still owes a checkpoint is triggered for it then, once', async () => {
    const t = setup();
    t.coordinator.start();
    t.clock.advance(100); // checkpoint 1: sources only
    t.clock.advance(30);
    t.coordinator.taskInputEnded('2/0');
    expect(t.triggered).toEqual([
      { id: 1, timestamp: 100, tasks: SOURCES, kind: 'periodic' },
      { id: 1, timestamp: 100, tasks: ['2/0'], kind: 'periodic' },
    ]);
    t.coordinator.taskInputEnded('2/0'); // idempotent
    expect(t.triggered).toHaveLength(2);
    t.ackAll(1);
    await flushPromises();
    expect(t.completed.map((c) => c.checkpointId)).toEqual([1]);
  });

  it('a task that acknowledged before its input ended is not triggered again', () => {
    const t = setup();
    t.coordinator.start();
    t.clock.advance(100);
    expect(t.coordinator.receiveAcknowledge('2/0', 1, ack())).toBe('success');
    t.coordinator.taskInputEnded('2/0');
    expect(t.triggered).toHaveLength(1);
  });

  it('periodic checkpoints stop once every source ended; the final checkpoint still runs on every task', async () => {
    const t = setup();
    t.coordinator.start();
    t.coordinator.taskInputEnded('1/0');
    t.clock.advance(100);
    expect(t.triggered.map((x) => x.id)).toEqual([1]);
    t.ackAll(1);
    await flushPromises();
    t.coordinator.taskInputEnded('1/1');
    t.clock.advance(1000);
    expect(t.triggered.map((x) => x.id)).toEqual([1]);
    await expect(t.coordinator.triggerCheckpoint('manual')).rejects.toMatchObject({ reason: 'end-of-input' });
    t.coordinator.taskInputEnded('2/0');
    const final = t.coordinator.triggerCheckpoint('final');
    expect(t.triggered.at(-1)).toMatchObject({ id: 2, tasks: ALL, kind: 'final' });
    t.ackAll(2);
    await expect(final).resolves.toMatchObject({ checkpointId: 2, kind: 'final' });
  });

  it('a failing late trigger aborts the checkpoint as a task failure', () => {
    const t = setup({ timeout: 60_000 });
    t.coordinator.start();
    t.clock.advance(100);
    t.failTriggers(new Error('port closed'));
    t.coordinator.taskInputEnded('2/0');
    expect(t.aborted).toMatchObject([{ checkpointId: 1, reason: 'task-failure' }]);
  });

  it('a new deployment forgets which tasks had ended', () => {
    const t = setup();
    t.coordinator.start();
    t.coordinator.taskInputEnded('1/0');
    t.coordinator.taskInputEnded('1/1');
    t.coordinator.setTasks(SOURCES, ALL);
    t.clock.advance(100);
    expect(t.triggered).toEqual([{ id: 1, timestamp: 100, tasks: SOURCES, kind: 'periodic' }]);
  });
});

describe('CheckpointCoordinator: aborts and failures', () => {
  it('times a checkpoint out as expired; with tolerableFailures 0 that fails the job', () => {
    const t = setup({ timeout: 50 });
    t.coordinator.start();
    t.clock.advance(100);
    t.coordinator.receiveAcknowledge('1/0', 1, ack());
    t.clock.advance(49);
    expect(t.aborted).toEqual([]);
    t.clock.advance(1);
    expect(t.aborted.map((a) => [a.checkpointId, a.reason, a.abortedAtMs])).toEqual([[1, 'expired', 150]]);
    expect(t.abortedNotified).toEqual([[1, 'expired']]);
    expect(t.failJob).toHaveLength(1);
    expect(t.failJob[0]).toBeInstanceOf(CheckpointFailureThresholdError);
    expect(t.failJob[0].cause).toBeInstanceOf(CheckpointDeclinedError);
    expect(t.coordinator.receiveAcknowledge('1/1', 1, ack())).toBe('discarded');
  });

  it('tolerableFailures: fails the job on the (n+1)-th consecutive counted failure; a success resets the count', async () => {
    const t = setup({ tolerableFailures: 1 });
    t.coordinator.start();
    t.clock.advance(100);
    t.coordinator.receiveDecline('2/0', 1, 'declined', new Error('disk full'));
    expect(t.failJob).toEqual([]);
    // the task's reason is in the message, not only in the cause
    expect(t.aborted[0].error.message).toBe('checkpoint 1 declined: declined by task 2/0: disk full');
    t.clock.advance(100);
    t.ackAll(2);
    await flushPromises();
    t.clock.advance(100);
    expect(t.coordinator.receiveDecline('2/0', 3, 'async-snapshot-failed')).toBe('aborted');
    expect(t.failJob).toEqual([]);
    t.clock.advance(100);
    t.coordinator.receiveDecline('1/0', 4, 'declined');
    expect(t.failJob).toHaveLength(1);
    expect(t.failJob[0].consecutiveFailures).toBe(2);
  });

  it('declines for reasons that do not count never fail the job', () => {
    const t = setup();
    t.coordinator.start();
    const reasons: CheckpointFailureReason[] = ['end-of-input', 'subsumed', 'task-failure', 'job-stopping'];
    reasons.forEach((reason, i) => {
      t.clock.advance(100);
      expect(t.coordinator.receiveDecline('2/0', i + 1, reason)).toBe('aborted');
    });
    expect(t.aborted.map((a) => a.reason)).toEqual(reasons);
    expect(t.failJob).toEqual([]);
  });

  it('answers duplicate, unknown-task, late and never-triggered acknowledgements with values', () => {
    const t = setup();
    t.coordinator.start();
    t.clock.advance(100);
    expect(t.coordinator.receiveAcknowledge('1/0', 1, ack())).toBe('success');
    expect(t.coordinator.receiveAcknowledge('1/0', 1, ack())).toBe('duplicate');
    expect(t.coordinator.receiveAcknowledge('9/9', 1, ack())).toBe('unknown');
    expect(t.coordinator.receiveAcknowledge('1/0', 99, ack())).toBe('unknown');
    t.coordinator.receiveDecline('1/1', 1, 'declined');
    expect(t.coordinator.receiveAcknowledge('2/0', 1, ack())).toBe('discarded');
    expect(t.coordinator.receiveDecline('2/0', 1, 'declined')).toBe('ignored');
    expect(t.aborted).toHaveLength(1);
  });

  it('a failed commit aborts the checkpoint as storage-failed and rejects its waiter', async () => {
    const t = setup({ tolerableFailures: 5 }, 'manual');
    t.coordinator.start();
    const p = t.coordinator.triggerCheckpoint();
    t.ackAll(1);
    t.pendingCommits[0].reject(new Error('fsync failed'));
    await expect(p).rejects.toMatchObject({ checkpointId: 1, reason: 'storage-failed' });
    expect(t.coordinator.store.latest()).toBeUndefined();
    expect(t.coordinator.failureManager.consecutiveFailures).toBe(1);
    expect(t.completedNotified).toEqual([]);
  });

  it('a gateway that cannot trigger aborts the checkpoint as task-failure', async () => {
    const t = setup();
    t.coordinator.start();
    t.failTriggers(new Error('port closed'));
    const p = t.coordinator.triggerCheckpoint();
    await expect(p).rejects.toBeInstanceOf(CheckpointDeclinedError);
    await expect(p).rejects.toMatchObject({ reason: 'task-failure', cause: { message: 'port closed' } });
    expect(t.failJob).toEqual([]);
  });
});

describe('CheckpointCoordinator: manual checkpoints, ids, lifecycle', () => {
  it('triggerCheckpoint ignores maxConcurrent and resolves with the completed checkpoint', async () => {
    const t = setup();
    t.coordinator.start();
    t.clock.advance(100); // periodic 1 pending
    const sp = t.coordinator.triggerCheckpoint('savepoint');
    expect(t.triggered.map((x) => [x.id, x.kind])).toEqual([
      [1, 'periodic'],
      [2, 'savepoint'],
    ]);
    t.ackAll(2);
    await expect(sp).resolves.toMatchObject({ checkpointId: 2, kind: 'savepoint' });
  });

  it('rejects at once, without an id, when not started', async () => {
    const t = setup();
    const err = await t.coordinator.triggerCheckpoint().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointDeclinedError);
    expect(err).toMatchObject({ checkpointId: NO_CHECKPOINT_ID, reason: 'job-stopping' });
    expect(t.triggered).toEqual([]);
    expect(t.coordinator.nextCheckpointId).toBe(1);
  });

  it('a declined manual checkpoint rejects with CheckpointDeclinedError carrying the task error', async () => {
    const t = setup({ tolerableFailures: Infinity });
    t.coordinator.start();
    const p = t.coordinator.triggerCheckpoint();
    const cause = new Error('snapshot failed');
    t.coordinator.receiveDecline('2/0', 1, 'async-snapshot-failed', cause);
    await expect(p).rejects.toMatchObject({ checkpointId: 1, reason: 'async-snapshot-failed', cause });
  });

  it('checkpoint ids only grow: restoreIdCounter moves them forward, never back, also across stop/start', async () => {
    const t = setup();
    t.coordinator.restoreIdCounter(42);
    t.coordinator.restoreIdCounter(7);
    t.coordinator.start();
    t.clock.advance(100);
    await t.coordinator.stop();
    t.coordinator.start();
    t.clock.advance(100);
    expect(t.triggered.map((x) => x.id)).toEqual([42, 43]);
    expect(() => t.coordinator.restoreIdCounter(0)).toThrow(RangeError);
    expect(() => t.coordinator.restoreIdCounter(1.5)).toThrow(RangeError);
  });

  it('addRecoveredCheckpoints seeds the store and moves the id counter past them', () => {
    const t = setup();
    const old = (id: number): CompletedCheckpoint => ({
      checkpointId: id,
      kind: 'periodic',
      timestamp: 0,
      completionTimestamp: 0,
      taskStates: {},
      stats: {
        endToEndDurationMs: 0,
        maxAlignmentDurationMs: 0,
        switchedToUnaligned: false,
        maxCheckpointStartDelayMs: 0,
        syncDurationMs: { max: 0, sum: 0 },
        asyncDurationMs: { max: 0, sum: 0 },
        stateSizeBytes: 0,
        acknowledgedTasks: 0,
        tasks: [],
      },
    });
    t.coordinator.addRecoveredCheckpoints([old(5), old(9)]);
    expect(t.coordinator.store.latest()?.checkpointId).toBe(9);
    expect(t.coordinator.nextCheckpointId).toBe(10);
  });

  it('stop() with nothing pending disarms the periodic timer', async () => {
    const t = setup();
    t.coordinator.start();
    expect(t.clock.pendingTimers).toBe(1);
    await t.coordinator.stop();
    expect(t.clock.pendingTimers).toBe(0);
    expect(t.coordinator.isRunning).toBe(false);
  });

  it('stop() aborts acknowledging checkpoints without notifying tasks and leaves no timer behind', async () => {
    const t = setup({ maxConcurrent: 3 });
    t.coordinator.start();
    t.clock.advance(100);
    const manual = t.coordinator.triggerCheckpoint();
    expect(t.clock.pendingTimers).toBeGreaterThan(0);
    await t.coordinator.stop();
    expect(t.clock.pendingTimers).toBe(0);
    await expect(manual).rejects.toMatchObject({ reason: 'job-stopping' });
    expect(t.aborted.map((a) => [a.checkpointId, a.reason])).toEqual([
      [1, 'job-stopping'],
      [2, 'job-stopping'],
    ]);
    expect(t.abortedNotified).toEqual([]);
    t.clock.advance(10_000);
    expect(t.triggered).toHaveLength(2);
  });

  it('stop() lets a commit in flight finish: the checkpoint is durable, so it completes and lands in the store', async () => {
    const t = setup({}, 'manual');
    t.coordinator.start();
    t.clock.advance(100);
    t.ackAll(1);
    let stopped = false;
    const stopping = t.coordinator.stop('task-failure').then(() => {
      stopped = true;
    });
    await flushPromises();
    expect(stopped).toBe(false);
    expect(t.clock.pendingTimers).toBe(0);
    t.pendingCommits[0].resolve();
    await stopping;
    expect(t.coordinator.store.latest()?.checkpointId).toBe(1);
    expect(t.completedNotified).toEqual([]); // stopped: the tasks are going away
    expect(t.clock.pendingTimers).toBe(0);
  });

  it('retains the newest `retain` checkpoints and discards the subsumed ones', async () => {
    const t = setup({ retain: 2 });
    t.coordinator.start();
    for (let id = 1; id <= 4; id++) {
      t.clock.advance(100);
      t.ackAll(id);
      await flushPromises();
    }
    await t.coordinator.store.whenDiscarded();
    expect(t.coordinator.store.all().map((c) => c.checkpointId)).toEqual([3, 4]);
    expect(t.discarded).toEqual([1, 2]);
  });

  it('validates its options up front', () => {
    const make = (o: Partial<CheckpointCoordinatorOptions>) => () => setup(o);
    expect(make({ interval: 0 })).toThrow(InvalidOptionError);
    expect(make({ interval: Number.NaN })).toThrow(/checkpointing.interval: must be a number/);
    expect(make({ timeout: -1 })).toThrow(/checkpointing.timeout/);
    expect(make({ minPause: -1 })).toThrow(/checkpointing.minPause/);
    expect(make({ maxConcurrent: 0 })).toThrow(/checkpointing.maxConcurrent: must be an integer >= 1/);
    expect(make({ tolerableFailures: 1.5 })).toThrow(/checkpointing.tolerableFailures/);
    expect(make({ retain: 0 })).toThrow(/checkpointing.retain/);
    expect(setup().coordinator.options).toEqual({
      interval: 100,
      timeout: 600_000,
      minPause: 0,
      maxConcurrent: 1,
      tolerableFailures: 0,
      retain: 3,
    });
  });
});
