/**
 * From what one demo run observed (events, telemetry, the crash report, the output) to the
 * figures the table and the report show. Pure: no clocks, no I/O.
 */

import type { CheckpointMode } from '../api/source.js';
import type { CompletedCheckpointStats } from '../coordinator/job-client.js';
import { LatencyDistribution, type LatencySummary } from './demo-latency.js';
import type { CrashReport } from './demo-probe-sink.js';
import type { DemoOutputRecord, WindowCount } from './demo-records.js';
import { type DemoExpectation, type DemoVerdict, verifyDemoOutput } from './demo-verify.js';

/** Raw facts of one run; times are wall-clock ms (`performance.timeOrigin + performance.now()`). */
export interface ModeObservation {
  readonly mode: CheckpointMode;
  readonly startedAt: number;
  /** When the main thread started appending clicks (NaN: never). */
  readonly appendStartedAt: number;
  /** Append call → durable per click (the feed's own measurement); null when nothing was appended. */
  readonly appendLatency: LatencySummary | null;
  /** The main thread's event-loop delay while the feed appended; null when it never ran. */
  readonly feedLoopDelay: LatencySummary | null;
  readonly endedAt: number;
  readonly deployments: readonly {
    readonly attempt: number;
    readonly at: number;
    readonly restoredFrom?: number;
  }[];
  /** When the client learned of a failure (its 'restarting' event). */
  readonly failures: readonly { readonly at: number; readonly cause: string }[];
  readonly checkpoints: readonly { readonly at: number; readonly stats: CompletedCheckpointStats }[];
  readonly crash: CrashReport | null;
  /** Records the sink stage received, per telemetry message. */
  readonly sinkTelemetry: readonly { readonly t: number; readonly records: number }[];
  readonly restarts: number;
  /** The running-count records of the committed part files. */
  readonly output: readonly DemoOutputRecord[];
  /** The window results of the committed part files. */
  readonly windows: readonly WindowCount[];
}

export interface RecoveryMeasurement {
  readonly crashAt: number;
  /** Checkpoint the job restored from. */
  readonly restoredFrom: number | undefined;
  /** Crash → the client saw the failure. */
  readonly detectMs: number;
  /** Crash → the new attempt was deployed. */
  readonly redeployMs: number;
  /** Crash → the first record reached the sink stage again: the recovery time. */
  readonly recoveryMs: number;
}

export interface ModeMeasurements {
  readonly mode: CheckpointMode;
  readonly durationMs: number;
  /** Distinct clicks per second from the first append to the last record at the sink. */
  readonly throughput: number;
  /** The main thread's append call → durable in the log, per click. */
  readonly appendLatency: LatencySummary | null;
  /** The main thread's event-loop delay while it appended (the append path runs on it). */
  readonly feedLoopDelay: LatencySummary | null;
  /** Append (main thread) → sink stage. */
  readonly latency: LatencySummary;
  /**
   * Append → in a committed part file, taken as the completion of the first checkpoint after the
   * one the record was sealed after (or the job's end); null without output.
   */
  readonly visibleLatency: LatencySummary | null;
  readonly latencyDistribution: LatencyDistribution;
  readonly checkpointsCompleted: number;
  readonly meanCheckpointMs: number;
  /** Mean over checkpoints of the longest alignment among tasks. */
  readonly meanAlignmentMs: number;
  readonly maxAlignmentMs: number;
  readonly restarts: number;
  /** Null when no crash happened (then the run did not demonstrate recovery). */
  readonly recovery: RecoveryMeasurement | null;
  readonly verdict: DemoVerdict;
  /** Sink-stage records/s per bin, x in seconds since start. */
  readonly throughputTimeline: readonly (readonly [number, number])[];
  /** Seconds since start. */
  readonly checkpointTimes: readonly {
    readonly x: number;
    readonly id: number;
    readonly durationMs: number;
    /** The longest alignment among the checkpoint's tasks. */
    readonly alignmentMs: number;
  }[];
  readonly crashTime: number | null;
  readonly redeployTime: number | null;
  /** Seconds since start when appending began; null when it never did. */
  readonly appendStartTime: number | null;
}

export const TIMELINE_BIN_MS = 250;

export function measureMode(o: ModeObservation, expected: DemoExpectation): ModeMeasurements {
  const latency = new LatencyDistribution();
  const visible = new LatencyDistribution();
  const visibleAt = commitTimes(o.checkpoints, o.endedAt);
  let firstAppend = Number.POSITIVE_INFINITY;
  let lastReceive = Number.NEGATIVE_INFINITY;
  let firstAfterRestore = Number.POSITIVE_INFINITY;
  for (const r of o.output) {
    latency.record(r.receivedAt - r.appendedAt);
    visible.record(visibleAt(r.sealedAfter) - r.appendedAt);
    if (r.appendedAt < firstAppend) firstAppend = r.appendedAt;
    if (r.receivedAt > lastReceive) lastReceive = r.receivedAt;
    if (r.attempt > 0 && r.receivedAt < firstAfterRestore) firstAfterRestore = r.receivedAt;
  }
  const verdict = verifyDemoOutput(o.mode, o.output, o.windows, expected);
  const span = lastReceive - firstAppend;
  const cps = o.checkpoints.map((c) => c.stats);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);

  let recovery: RecoveryMeasurement | null = null;
  const redeploy = o.deployments.find((d) => d.attempt > 0);
  if (o.crash && redeploy && Number.isFinite(firstAfterRestore)) {
    const crashAt = o.crash.at;
    const detected = o.failures.find((f) => f.at >= crashAt - 1)?.at ?? Number.NaN;
    recovery = {
      crashAt,
      restoredFrom: redeploy.restoredFrom,
      detectMs: detected - crashAt,
      redeployMs: redeploy.at - crashAt,
      recoveryMs: firstAfterRestore - crashAt,
    };
  }

  const sec = (t: number) => (t - o.startedAt) / 1000;
  return {
    mode: o.mode,
    durationMs: o.endedAt - o.startedAt,
    throughput: span > 0 ? verdict.distinct / (span / 1000) : Number.NaN,
    appendLatency: o.appendLatency,
    feedLoopDelay: o.feedLoopDelay,
    latency: latency.summary(),
    visibleLatency: visible.count > 0 ? visible.summary() : null,
    latencyDistribution: latency,
    checkpointsCompleted: cps.length,
    meanCheckpointMs: mean(cps.map((c) => c.durationMs)),
    meanAlignmentMs: mean(cps.map((c) => c.maxAlignmentDurationMs)),
    maxAlignmentMs: cps.length ? Math.max(...cps.map((c) => c.maxAlignmentDurationMs)) : Number.NaN,
    restarts: o.restarts,
    recovery,
    verdict,
    throughputTimeline: throughputTimeline(o.sinkTelemetry, o.startedAt, o.endedAt, TIMELINE_BIN_MS),
    checkpointTimes: o.checkpoints.map((c) => ({
      x: sec(c.at),
      id: c.stats.checkpointId,
      durationMs: c.stats.durationMs,
      alignmentMs: c.stats.maxAlignmentDurationMs,
    })),
    crashTime: o.crash ? sec(o.crash.at) : null,
    redeployTime: redeploy ? sec(redeploy.at) : null,
    appendStartTime: Number.isFinite(o.appendStartedAt) ? sec(o.appendStartedAt) : null,
  };
}

/**
 * When a record sealed after checkpoint `sealedAfter` became visible: the completion of the first
 * completed checkpoint with a higher id (its barrier sealed the record's part file, or a later
 * one's did when that one was aborted), else `end` (the part was committed at the end of input).
 */
export function commitTimes(
  checkpoints: readonly { readonly at: number; readonly stats: { readonly checkpointId: number } }[],
  end: number,
): (sealedAfter: number) => number {
  const sorted = [...checkpoints].sort((a, b) => a.stats.checkpointId - b.stats.checkpointId);
  return (sealedAfter) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid].stats.checkpointId <= sealedAfter) lo = mid + 1;
      else hi = mid;
    }
    return lo < sorted.length ? sorted[lo].at : end;
  };
}

/**
 * Records per second in bins of `binMs` from `start` to `end`, as `[seconds since start at the
 * bin's middle, rate]`; each telemetry count falls in the bin of its timestamp.
 */
export function throughputTimeline(
  samples: readonly { readonly t: number; readonly records: number }[],
  start: number,
  end: number,
  binMs: number,
): [number, number][] {
  const bins = Math.max(1, Math.ceil((end - start) / binMs));
  const counts = new Array<number>(bins).fill(0);
  for (const s of samples) {
    const i = Math.floor((s.t - start) / binMs);
    if (i >= 0 && i < bins) counts[i] += s.records;
    else if (i >= bins) counts[bins - 1] += s.records;
  }
  return counts.map((c, i) => [((i + 0.5) * binMs) / 1000, (c * 1000) / binMs]);
}
