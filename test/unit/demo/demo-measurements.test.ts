/** From a scripted observation to the figures: latency, recovery, checkpoint means, timeline. */

import { describe, expect, it } from 'vitest';
import type { CompletedCheckpointStats } from '../../../src/coordinator/job-client.js';
import { clickAt, demoWindowStart } from '../../../src/demo/demo-clicks.js';
import {
  commitTimes,
  type ModeObservation,
  measureMode,
  throughputTimeline,
} from '../../../src/demo/demo-measurements.js';
import type { DemoOutputRecord, WindowCount } from '../../../src/demo/demo-records.js';
import { computeExpectation } from '../../../src/demo/demo-verify.js';

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
    const appendedAt = T0 + 100 + seq * 10 + (seq >= 50 ? 1000 : 0);
    out.push({
      seq,
      user: c.user,
      page: c.page,
      pageViews,
      userClicks,
      appendedAt,
      receivedAt: appendedAt + seq / 10,
      attempt: seq >= 50 ? 1 : 0,
      // sealed by checkpoint 1 (completes at T0+300), 2 (T0+500), or after the last one (end)
      sealedAfter: seq < 10 ? 0 : seq < 30 ? 1 : 2,
    });
  }
  return out;
}

/** The exact window results of the N clicks. */
function windows(): WindowCount[] {
  const counts = new Map<string, WindowCount>();
  for (let seq = 0; seq < N; seq++) {
    const c = clickAt(seq, 10);
    const start = demoWindowStart(c.ts);
    const key = `${c.user}@${start}`;
    const w = counts.get(key);
    counts.set(key, { user: c.user, start, clicks: (w?.clicks ?? 0) + 1 });
  }
  return [...counts.values()];
}

const stats = (checkpointId: number, durationMs: number, align: number): CompletedCheckpointStats => ({
  checkpointId,
  triggerTimestamp: 0,
  durationMs,
  maxAlignmentDurationMs: align,
  switchedToUnaligned: false,
  maxSyncDurationMs: 0,
  maxAsyncDurationMs: 0,
  bytes: 1,
  subtasks: [],
});

const observation: ModeObservation = {
  mode: 'exactly-once',
  startedAt: T0,
  appendStartedAt: T0 + 90,
  appendLatency: null,
  feedLoopDelay: null,
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
  crash: { at: T0 + 600, subtask: 0, recordsReceived: 50, checkpointsCompleted: 2, atBarrierOf: 3 },
  sinkTelemetry: [
    { t: T0 + 100, records: 10 },
    { t: T0 + 300, records: 20 },
    { t: T0 + 2999, records: 5 },
  ],
  restarts: 1,
  output: output(),
  windows: windows(),
};

describe('measureMode', () => {
  const m = measureMode(observation, computeExpectation(N, 10));

  it('measures recovery from the crash report to the first record of the new attempt', () => {
    // first attempt-1 record: seq 50, appended at T0 + 100 + 500 + 1000, received 5 ms later
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
    expect(m.checkpointTimes.map((c) => [c.id, c.durationMs, c.alignmentMs])).toEqual([
      [1, 10, 1],
      [2, 30, 3],
    ]);
    expect(m.latency.count).toBe(N);
    expect(m.latency.p50).toBeCloseTo(4.9, 1);
    expect(m.latency.max).toBeCloseTo(9.9, 1);
    // seq 0 (appended T0+100) visible at checkpoint 1 (T0+300), seq 10 (T0+200) at checkpoint 2
    // (T0+500), seq 30 (T0+400) only at the end (T0+3000): the longest
    expect(m.visibleLatency?.count).toBe(N);
    expect(m.visibleLatency?.max).toBeCloseTo(2600, 0);
    expect(m.visibleLatency?.p50).toBeGreaterThan(900);
    expect(m.verdict.ok).toBe(true);
    expect(m.verdict.windowRecords).toBe(observation.windows.length);
    expect(m.appendStartTime).toBeCloseTo(0.09);
    expect(m.appendLatency).toBeNull();
    const summary = { count: 3, p50: 1, p99: 2, p999: 2, max: 2, mean: 1.3 };
    expect(
      measureMode({ ...observation, appendLatency: summary }, computeExpectation(N, 10)).appendLatency,
    ).toBe(summary);
    // 100 distinct clicks from the first append (T0+100) to the last receive (T0+100+990+1000+9.9)
    expect(m.throughput).toBeCloseTo(100 / 1.9999, 1);
  });

  it('reports no recovery when no crash happened', () => {
    const none = measureMode({ ...observation, crash: null }, computeExpectation(N, 10));
    expect(none.recovery).toBeNull();
    expect(none.crashTime).toBeNull();
  });
});

describe('commitTimes', () => {
  it('maps the checkpoint a record was sealed after to the completion of the next completed one', () => {
    const at = commitTimes(
      [
        { at: 500, stats: { checkpointId: 4 } },
        { at: 100, stats: { checkpointId: 1 } },
        { at: 300, stats: { checkpointId: 3 } }, // 2 was aborted
      ],
      900,
    );
    expect([0, 1, 2, 3, 4, 7].map(at)).toEqual([100, 300, 300, 500, 900, 900]);
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
