/**
 * A {@link JobSnapshot} in the Prometheus text exposition format (version 0.0.4), for `/metrics`
 * of the dashboard and of `weir run --metrics-port`. No dependency: `weir/prometheus` registers
 * the same names on a prom-client registry for services that already run one.
 */

import { CHECKPOINT_DURATION_BUCKETS, type JobSnapshot } from './job-monitor.js';

/** Metric names, types and help, shared with `weir/prometheus` so both expose the same thing. */
export const METRICS = {
  recordsIn: {
    name: 'weir_records_in_total',
    type: 'counter',
    help: 'Records an operator subtask received.',
  },
  recordsOut: {
    name: 'weir_records_out_total',
    type: 'counter',
    help: 'Records an operator subtask emitted.',
  },
  operatorCounter: {
    name: 'weir_operator_counter_total',
    type: 'counter',
    help: "Operator-specific counters (e.g. a file source's skippedLines), by counter name.",
  },
  checkpoints: {
    name: 'weir_checkpoints_total',
    type: 'counter',
    help: 'Checkpoints by status: completed, failed, or aborted (subsumed or the job stopping).',
  },
  checkpointDuration: {
    name: 'weir_checkpoint_duration_seconds',
    type: 'histogram',
    help: 'Trigger to completion of completed checkpoints.',
  },
  checkpointSize: {
    name: 'weir_last_checkpoint_size_bytes',
    type: 'gauge',
    help: 'State bytes persisted by the latest completed checkpoint (all tasks).',
  },
  checkpointAlignment: {
    name: 'weir_last_checkpoint_alignment_seconds',
    type: 'gauge',
    help: 'Longest barrier alignment of the latest completed checkpoint.',
  },
  checkpointSync: {
    name: 'weir_last_checkpoint_sync_seconds',
    type: 'gauge',
    help: 'Longest synchronous snapshot part (processing stopped) of the latest completed checkpoint.',
  },
  checkpointAsync: {
    name: 'weir_last_checkpoint_async_seconds',
    type: 'gauge',
    help: 'Longest asynchronous snapshot part (persisting) of the latest completed checkpoint.',
  },
  restarts: { name: 'weir_restarts_total', type: 'counter', help: 'Restarts of the job after a failure.' },
  warnings: { name: 'weir_warnings_total', type: 'counter', help: 'Warnings the job reported.' },
  up: { name: 'weir_job_running', type: 'gauge', help: '1 while the job runs or restarts, 0 once it ended.' },
  uptime: { name: 'weir_job_uptime_seconds', type: 'gauge', help: 'Seconds since the job started.' },
  parallelism: { name: 'weir_task_parallelism', type: 'gauge', help: 'Subtasks of a task (operator chain).' },
  watermark: {
    name: 'weir_task_input_watermark_milliseconds',
    type: 'gauge',
    help: "A subtask's input watermark (event time, ms since the epoch of the job's timestamps).",
  },
  eventTimeLag: {
    name: 'weir_task_event_time_lag_seconds',
    type: 'gauge',
    help: "Wall clock at the sample minus a subtask's input watermark (meaningful for epoch-ms timestamps).",
  },
  idle: {
    name: 'weir_task_idle_seconds_total',
    type: 'counter',
    help: "Time a subtask's thread was parked with nothing to do (no input, waiting for async requests).",
  },
  backpressured: {
    name: 'weir_task_backpressured_seconds_total',
    type: 'counter',
    help: "Time a subtask's thread was parked because an output ring was full (its consumer is slower).",
  },
  outputFill: {
    name: 'weir_task_output_ring_fill_ratio',
    type: 'gauge',
    help: "Share in use of a subtask's fullest output ring (1 while records wait for room).",
  },
  inputFill: {
    name: 'weir_task_input_ring_fill_ratio',
    type: 'gauge',
    help: "Share in use of a subtask's fullest input ring.",
  },
  sourceLagRecords: {
    name: 'weir_source_lag_records',
    type: 'gauge',
    help: 'Records a source subtask has not read yet (log offsets, JetStream messages behind the end).',
  },
  sourceLagBytes: {
    name: 'weir_source_lag_bytes',
    type: 'gauge',
    help: 'Bytes a file source subtask has not read yet (file sizes minus positions).',
  },
  remoteEdgeLag: {
    name: 'weir_remote_edge_lag_bytes',
    type: 'gauge',
    help: "A cluster job's remote edge flow: bytes sent and not yet read by the consumer (out: not yet credited back; in: queued unread).",
  },
  remoteEdgeRecords: {
    name: 'weir_remote_edge_records_total',
    type: 'counter',
    help: 'Records a subtask sent (out) or read (in) through a remote edge flow of a cluster job, this attempt.',
  },
  remoteEdgeCreditStalls: {
    name: 'weir_remote_edge_credit_stalls_total',
    type: 'counter',
    help: "Times a remote edge flow's credit window stopped its sender (backpressure across processes), this attempt.",
  },
} as const;

/** One sample: labels and value. */
export interface Sample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Every non-histogram metric of `s` as samples (the histogram is rendered separately). */
export function samplesOf(s: JobSnapshot, now = Date.now()): Map<keyof typeof METRICS, Sample[]> {
  const job = s.job;
  const out = new Map<keyof typeof METRICS, Sample[]>();
  const add = (k: keyof typeof METRICS, labels: Record<string, string>, value: number) => {
    let list = out.get(k);
    if (!list) out.set(k, (list = []));
    list.push({ labels, value });
  };
  for (const t of s.tasks) {
    add('parallelism', { job, task: t.name, task_id: String(t.id) }, t.parallelism);
    const taskLabels = (subtask: number) => ({
      job,
      task: t.name,
      task_id: String(t.id),
      subtask: String(subtask),
    });
    t.watermarks.forEach((w, subtask) => {
      if (w === null) return;
      add('watermark', taskLabels(subtask), w);
      if (t.eventTimeLagMs !== null && t.watermark !== null)
        add('eventTimeLag', taskLabels(subtask), (t.eventTimeLagMs + t.watermark - w) / 1000);
    });
    for (const l of t.load.subtasks) {
      add('idle', taskLabels(l.subtask), l.idleSeconds);
      add('backpressured', taskLabels(l.subtask), l.backpressuredSeconds);
      if (l.outputFill !== null) add('outputFill', taskLabels(l.subtask), l.outputFill);
      if (l.inputFill !== null) add('inputFill', taskLabels(l.subtask), l.inputFill);
      for (const e of l.remoteEdges) {
        const labels = { ...taskLabels(l.subtask), flow: e.flow, direction: e.direction };
        add('remoteEdgeLag', labels, (e.direction === 'out' ? e.outstandingBytes : e.queuedBytes) ?? 0);
        add('remoteEdgeRecords', labels, e.records);
        if (e.direction === 'out') add('remoteEdgeCreditStalls', labels, e.creditStalls ?? 0);
      }
    }
    for (const op of t.operators) {
      for (const st of op.subtasks) {
        const labels = { job, operator: op.name, operator_id: String(op.id), subtask: String(st.subtask) };
        add('recordsIn', labels, st.recordsIn);
        add('recordsOut', labels, st.recordsOut);
        for (const [counter, v] of Object.entries(st.counters))
          add('operatorCounter', { ...labels, counter }, v);
        if (st.sourceLag)
          add(
            st.sourceLag.unit === 'bytes' ? 'sourceLagBytes' : 'sourceLagRecords',
            labels,
            st.sourceLag.value,
          );
      }
    }
  }
  add('checkpoints', { job, status: 'completed' }, s.checkpoints.completed);
  add('checkpoints', { job, status: 'failed' }, s.checkpoints.failed);
  add('checkpoints', { job, status: 'aborted' }, s.checkpoints.aborted);
  const last = s.checkpoints.history[s.checkpoints.history.length - 1];
  if (last) {
    add('checkpointSize', { job }, last.bytes);
    add('checkpointAlignment', { job }, last.maxAlignmentDurationMs / 1000);
    add('checkpointSync', { job }, last.maxSyncDurationMs / 1000);
    add('checkpointAsync', { job }, last.maxAsyncDurationMs / 1000);
  }
  add('restarts', { job }, s.restarts.count);
  add('warnings', { job }, s.warnings.count);
  add('up', { job }, s.status === 'running' || s.status === 'restarting' ? 1 : 0);
  add('uptime', { job }, Math.max(0, (now - s.startedAt) / 1000));
  return out;
}

/** The whole exposition text of one job. */
export function prometheusText(s: JobSnapshot, now = Date.now()): string {
  const lines: string[] = [];
  const samples = samplesOf(s, now);
  for (const [key, def] of Object.entries(METRICS) as [
    keyof typeof METRICS,
    (typeof METRICS)[keyof typeof METRICS],
  ][]) {
    if (def.type === 'histogram') {
      lines.push(`# HELP ${def.name} ${def.help}`, `# TYPE ${def.name} histogram`);
      const h = s.checkpoints.durationHistogram;
      CHECKPOINT_DURATION_BUCKETS.forEach((le, i) => {
        lines.push(`${def.name}_bucket${labelText({ job: s.job, le: String(le) })} ${h.buckets[i]}`);
      });
      lines.push(`${def.name}_bucket${labelText({ job: s.job, le: '+Inf' })} ${h.count}`);
      lines.push(`${def.name}_sum${labelText({ job: s.job })} ${h.sumSeconds}`);
      lines.push(`${def.name}_count${labelText({ job: s.job })} ${h.count}`);
      continue;
    }
    const list = samples.get(key);
    if (!list) continue;
    lines.push(`# HELP ${def.name} ${def.help}`, `# TYPE ${def.name} ${def.type}`);
    for (const sample of list) lines.push(`${def.name}${labelText(sample.labels)} ${sample.value}`);
  }
  return `${lines.join('\n')}\n`;
}

function labelText(labels: Readonly<Record<string, string>>): string {
  const parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`,
  );
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}
