/**
 * From what one demo run observed (events, telemetry, the crash report, the output) to the
 * figures the table and the report show. Pure: no clocks, no I/O.
 */

import type { CompletedCheckpointStats } from '../coordinator/job-client.js';
import type { CheckpointMode } from '../coordinator/job-options.js';
import { LatencyDistribution, type LatencySummary } from './demo-latency.js';
import type { CrashReport } from './demo-probe-sink.js';
import type { DemoOutputRecord } from './demo-records.js';
import { type DemoExpectation, type DemoVerdict, verifyDemoOutput } from './demo-verify.js';

/** Raw facts of one run; times are wall-clock ms (`performance.timeOrigin + performance.now()`). */
export interface ModeObservation {
  readonly mode: CheckpointMode;
  readonly startedAt: number;
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
  readonly output: readonly DemoOutputRecord[];
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
  /** Distinct clicks per second from the first emit to the last record at the sink. */
  readonly throughput: number;
  /** Emit → sink stage. */
  readonly latency: LatencySummary;
  /** Emit → handed to the job client (under exactly-once: committed); null when not stamped. */
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
  }[];
  readonly crashTime: number | null;
  readonly redeployTime: number | null;
}

export const TIMELINE_BIN_MS = 250;

export function measureMode(o: ModeObservation, expected: DemoExpectation): ModeMeasurements {
  const latency = new LatencyDistribution();
  const visible = new LatencyDistribution();
  let firstEmit = Number.POSITIVE_INFINITY;
  let lastReceive = Number.NEGATIVE_INFINITY;
  let firstAfterRestore = Number.POSITIVE_INFINITY;
  for (const r of o.output) {
    latency.record(r.receivedAt - r.emittedAt);
    if (r.visibleAt !== undefined) visible.record(r.visibleAt - r.emittedAt);
    if (r.emittedAt < firstEmit) firstEmit = r.emittedAt;
    if (r.receivedAt > lastReceive) lastReceive = r.receivedAt;
    if (r.attempt > 0 && r.receivedAt < firstAfterRestore) firstAfterRestore = r.receivedAt;
  }
  const verdict = verifyDemoOutput(o.mode, o.output, expected);
  const span = lastReceive - firstEmit;
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
    })),
    crashTime: o.crash ? sec(o.crash.at) : null,
    redeployTime: redeploy ? sec(redeploy.at) : null,
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
