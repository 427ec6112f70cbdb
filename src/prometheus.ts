/**
 * `weir/prometheus`: registers a job's metrics on a prom-client registry (prom-client is an
 * optional peer dependency: install it to use this entry point).
 *
 * ```ts
 * import { Registry } from 'prom-client';
 * import { registerJobMetrics } from 'weir/prometheus';
 * const registry = new Registry();
 * const client = await startJob('./job.ts', { … });
 * registerJobMetrics(client, registry, { job: 'orders' });
 * // serve `await registry.metrics()` on your service's /metrics
 * ```
 *
 * Same names and labels as the dashboard's `/metrics` (see `METRICS`). Values are read at scrape
 * time from the job's latest sample (`metricsInterval`); counters are monotonic across restarts.
 */

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CompletedCheckpointStats, JobClient } from './coordinator/job-client.js';
import { jobNameOf } from './dashboard/attach-dashboard.js';
import { CHECKPOINT_DURATION_BUCKETS, JobMonitor } from './dashboard/job-monitor.js';
import { METRICS, type Sample, samplesOf } from './dashboard/prometheus-text.js';

export { METRICS as WEIR_METRICS } from './dashboard/prometheus-text.js';

export interface RegisterJobMetricsOptions {
  /** The `job` label. Default: the job module's file name. */
  readonly job?: string;
}

/** Removes the metrics from the registry and stops listening to the job. */
export interface JobMetricsRegistration {
  unregister(): void;
}

const LABELS: Record<Exclude<keyof typeof METRICS, 'checkpointDuration'>, readonly string[]> = {
  recordsIn: ['job', 'operator', 'operator_id', 'subtask'],
  recordsOut: ['job', 'operator', 'operator_id', 'subtask'],
  operatorCounter: ['job', 'operator', 'operator_id', 'subtask', 'counter'],
  checkpoints: ['job', 'status'],
  checkpointSize: ['job'],
  checkpointAlignment: ['job'],
  checkpointSync: ['job'],
  checkpointAsync: ['job'],
  restarts: ['job'],
  warnings: ['job'],
  up: ['job'],
  uptime: ['job'],
  parallelism: ['job', 'task', 'task_id'],
  watermark: ['job', 'task', 'task_id', 'subtask'],
  eventTimeLag: ['job', 'task', 'task_id', 'subtask'],
  idle: ['job', 'task', 'task_id', 'subtask'],
  backpressured: ['job', 'task', 'task_id', 'subtask'],
  outputFill: ['job', 'task', 'task_id', 'subtask'],
  inputFill: ['job', 'task', 'task_id', 'subtask'],
  sourceLagRecords: ['job', 'operator', 'operator_id', 'subtask'],
  sourceLagBytes: ['job', 'operator', 'operator_id', 'subtask'],
  remoteEdgeLag: ['job', 'task', 'task_id', 'subtask', 'flow', 'direction'],
  remoteEdgeRecords: ['job', 'task', 'task_id', 'subtask', 'flow', 'direction'],
  remoteEdgeCreditStalls: ['job', 'task', 'task_id', 'subtask', 'flow', 'direction'],
};

export function registerJobMetrics(
  client: JobClient,
  registry: Registry,
  options: RegisterJobMetricsOptions = {},
): JobMetricsRegistration {
  const monitor = new JobMonitor(client, options.job ?? jobNameOf(client.jobModule));
  const names: string[] = [];
  // One snapshot per scrape, shared by every metric's collect() of that scrape.
  let cached: { at: number; samples: Map<keyof typeof METRICS, Sample[]> } | null = null;
  const samples = (key: keyof typeof METRICS): Sample[] => {
    const now = Date.now();
    if (!cached || now - cached.at > 50) cached = { at: now, samples: samplesOf(monitor.snapshot(), now) };
    return cached.samples.get(key) ?? [];
  };
  for (const [key, labelNames] of Object.entries(LABELS) as [keyof typeof LABELS, readonly string[]][]) {
    const def = METRICS[key];
    names.push(def.name);
    if (def.type === 'counter') {
      new Counter({
        name: def.name,
        help: def.help,
        labelNames,
        registers: [registry],
        collect() {
          this.reset();
          for (const s of samples(key)) this.inc(s.labels, s.value);
        },
      });
    } else {
      new Gauge({
        name: def.name,
        help: def.help,
        labelNames,
        registers: [registry],
        collect() {
          this.reset();
          for (const s of samples(key)) this.set(s.labels, s.value);
        },
      });
    }
  }
  const histogram = new Histogram({
    name: METRICS.checkpointDuration.name,
    help: METRICS.checkpointDuration.help,
    labelNames: ['job'],
    buckets: [...CHECKPOINT_DURATION_BUCKETS],
    registers: [registry],
  });
  names.push(METRICS.checkpointDuration.name);
  const onCheckpoint = (c: CompletedCheckpointStats) =>
    histogram.observe({ job: monitor.job }, c.durationMs / 1000);
  client.on('checkpoint', onCheckpoint);
  return {
    unregister() {
      client.off('checkpoint', onCheckpoint);
      monitor.dispose();
      for (const n of names) registry.removeSingleMetric(n);
    },
  };
}
