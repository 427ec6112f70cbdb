/** From a scripted observation to the figures: latency, recovery, checkpoint means, timeline. */

import { describe, expect, it } from 'vitest';
import { clickAt } from '../../../src/cli/demo-clicks.js';
import { type ModeObservation, measureMode, throughputTimeline } from '../../../src/cli/demo-measurements.js';
import type { DemoOutputRecord } from '../../../src/cli/demo-records.js';
import { computeExpectation } from '../../../src/cli/demo-verify.js';
import type { CompletedCheckpointStats } from '../../../src/coordinator/job-client.js';

const T0 = 1_000_000;
const N = 100;

function output(): DemoOutputRecord[] {
  const pages = new Map<string, number>();
  const users = new Map<string, number>();
  const out: DemoOutputRecord[] = [];
  for (let seq = 0; seq < N; seq++) {
    const c = clickAt(seq, 10);
    const pageViews = (pages.get(c.page) ?? 0) + 1;
    const userClicks = (users.get(c.user) ?? 0) + 1;
    pages.set(c.page, pageViews);
    users.set(c.user, userClicks);
    // clicks 0..49 before the crash (attempt 0), 50..99 after it; latency seq/10 ms
    const emittedAt = T0 + 100 + seq * 10 + (seq >= 50 ? 1000 : 0);
    out.push({
      seq,
      user: c.user,
      page: c.page,
      pageViews,
      userClicks,
      emittedAt,
      receivedAt: emittedAt + seq / 10,
      attempt: seq >= 50 ? 1 : 0,
      visibleAt: emittedAt + 200,
    });
  }
  return out;
}

const stats = (checkpointId: number, durationMs: number, align: number): CompletedCheckpointStats => ({
  checkpointId,
  triggerTimestamp: 0,
  durationMs,
  maxAlignmentDurationMs: align,
  maxSyncDurationMs: 0,
  maxAsyncDurationMs: 0,
  bytes: 1,
});

const observation: ModeObservation = {
  mode: 'exactly-once',
  startedAt: T0,
  endedAt: T0 + 3000,
  deployments: [
    { attempt: 0, at: T0 + 50 },
    { attempt: 1, at: T0 + 700, restoredFrom: 2 },
  ],
  failures: [{ at: T0 + 620, cause: 'worker exited' }],
  checkpoints: [
    { at: T0 + 300, stats: stats(1, 10, 1) },
    { at: T0 + 500, stats: stats(2, 30, 3) },
  ],
  crash: { at: T0 + 600, subtask: 0, recordsReceived: 50, checkpointsCompleted: 2 },
  sinkTelemetry: [
    { t: T0 + 100, records: 10 },
    { t: T0 + 300, records: 20 },
    { t: T0 + 2999, records: 5 },
  ],
  restarts: 1,
  output: output(),
};

describe('measureMode', () => {
  const m = measureMode(observation, computeExpectation(N, 10));

  it('measures recovery from the crash report to the first record of the new attempt', () => {
    // first attempt-1 record: seq 50, emitted at T0 + 100 + 500 + 1000, received 5 ms later
    expect(m.recovery).toEqual({
      crashAt: T0 + 600,
      restoredFrom: 2,
      detectMs: 20,
      redeployMs: 100,
      recoveryMs: 1605 - 600,
    });
    expect(m.crashTime).toBeCloseTo(0.6);
    expect(m.redeployTime).toBeCloseTo(0.7);
  });

  it('summarizes checkpoints and latencies', () => {
    expect(m.checkpointsCompleted).toBe(2);
    expect(m.meanCheckpointMs).toBe(20);
    expect(m.meanAlignmentMs).toBe(2);
    expect(m.maxAlignmentMs).toBe(3);
    expect(m.latency.count).toBe(N);
    expect(m.latency.p50).toBeCloseTo(4.9, 1);
    expect(m.latency.max).toBeCloseTo(9.9, 1);
    expect(m.visibleLatency?.p99).toBeCloseTo(200, 0);
    expect(m.verdict.ok).toBe(true);
    // 100 distinct clicks from the first emit (T0+100) to the last receive (T0+100+990+1000+9.9)
    expect(m.throughput).toBeCloseTo(100 / 1.9999, 1);
  });

  it('reports no recovery when no crash happened', () => {
    const none = measureMode({ ...observation, crash: null }, computeExpectation(N, 10));
    expect(none.recovery).toBeNull();
    expect(none.crashTime).toBeNull();
  });
});

describe('throughputTimeline', () => {
  it('bins telemetry counts by timestamp into records per second', () => {
    const bins = throughputTimeline(observation.sinkTelemetry, T0, T0 + 1000, 250);
    expect(bins).toEqual([
      [0.125, 40],
      [0.375, 80],
      [0.625, 0],
      [0.875, 20], // a late sample lands in the last bin
    ]);
  });
});
