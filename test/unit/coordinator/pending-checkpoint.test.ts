import { describe, expect, it } from 'vitest';
import type { TaskAcknowledgement } from '../../../src/coordinator/completed-checkpoint.js';
import { PendingCheckpoint } from '../../../src/coordinator/pending-checkpoint.js';

const ack = (
  sync: number,
  async: number,
  align: number,
  bytes: number,
  delay?: number,
): TaskAcknowledgement => ({
  stateHandles: { sync },
  metrics: {
    alignmentDurationMs: align,
    syncDurationMs: sync,
    asyncDurationMs: async,
    stateSizeBytes: bytes,
    ...(delay === undefined ? {} : { checkpointStartDelayMs: delay }),
  },
});

function pending() {
  return new PendingCheckpoint({
    checkpointId: 3,
    timestamp: 1000,
    kind: 'periodic',
    tasksToAcknowledge: ['a', 'b'],
  });
}

describe('PendingCheckpoint', () => {
  it('acknowledgements answer success, duplicate, unknown; fully acknowledged once every task did', () => {
    const p = pending();
    expect(p.isFullyAcknowledged).toBe(false);
    expect(p.acknowledgeTask('a', ack(1, 1, 1, 1))).toBe('success');
    expect(p.acknowledgeTask('a', ack(1, 1, 1, 1))).toBe('duplicate');
    expect(p.acknowledgeTask('zz', ack(1, 1, 1, 1))).toBe('unknown');
    expect([...p.notYetAcknowledged]).toEqual(['b']);
    expect(p.acknowledgeTask('b', ack(1, 1, 1, 1))).toBe('success');
    expect(p.isFullyAcknowledged).toBe(true);
  });

  it('after abort every acknowledgement is discarded and it cannot be finalized', () => {
    const p = pending();
    expect(p.abort('expired')).toBe(true);
    expect(p.abort('declined')).toBe(false);
    expect(p.status).toEqual({ state: 'aborted', reason: 'expired' });
    expect(p.acknowledgeTask('a', ack(1, 1, 1, 1))).toBe('discarded');
    expect(() => p.finalize(2000)).toThrow(/cannot be finalized: aborted/);
  });

  it('finalizes into a CompletedCheckpoint with per-task handles and aggregated stats', () => {
    const p = pending();
    p.acknowledgeTask('b', ack(4, 10, 7, 100, 3));
    expect(() => p.finalize(1500)).toThrow(/1 task\(s\) not acknowledged/);
    p.acknowledgeTask('a', ack(2, 30, 5, 50));
    const c = p.finalize(1250);
    expect(c).toEqual({
      checkpointId: 3,
      kind: 'periodic',
      timestamp: 1000,
      completionTimestamp: 1250,
      taskStates: { b: { sync: 4 }, a: { sync: 2 } },
      stats: {
        endToEndDurationMs: 250,
        maxAlignmentDurationMs: 7,
        switchedToUnaligned: false,
        maxCheckpointStartDelayMs: 3,
        syncDurationMs: { max: 4, sum: 6 },
        asyncDurationMs: { max: 30, sum: 40 },
        stateSizeBytes: 150,
        acknowledgedTasks: 2,
        tasks: [
          {
            taskKey: 'b',
            syncDurationMs: 4,
            asyncDurationMs: 10,
            alignmentDurationMs: 7,
            stateSizeBytes: 100,
            checkpointStartDelayMs: 3,
          },
          {
            taskKey: 'a',
            syncDurationMs: 2,
            asyncDurationMs: 30,
            alignmentDurationMs: 5,
            stateSizeBytes: 50,
          },
        ],
      },
    });
    expect(p.status.state).toBe('finalized');
    expect(p.acknowledgeTask('a', ack(1, 1, 1, 1))).toBe('discarded');
    expect(p.abort('expired')).toBe(false);
  });

  it('flags the checkpoint as switched to unaligned when any task says so', () => {
    const p = pending();
    p.acknowledgeTask('a', ack(2, 30, 5, 50));
    const b = ack(4, 10, 7, 100);
    p.acknowledgeTask('b', { ...b, metrics: { ...b.metrics, switchedToUnaligned: true } });
    const { stats } = p.finalize(1250);
    expect(stats.switchedToUnaligned).toBe(true);
    expect(stats.tasks.map((t) => t.switchedToUnaligned)).toEqual([undefined, true]);
  });
});
