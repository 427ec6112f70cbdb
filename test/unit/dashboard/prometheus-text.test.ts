import { describe, expect, it } from 'vitest';
import type { JobSnapshot } from '../../../src/dashboard/job-monitor.js';
import { CHECKPOINT_DURATION_BUCKETS } from '../../../src/dashboard/job-monitor.js';
import { prometheusText } from '../../../src/dashboard/prometheus-text.js';

const snapshot = (over: Partial<JobSnapshot> = {}): JobSnapshot => ({
  job: 'a "quoted"\\job',
  status: 'running',
  attempt: 0,
  startedAt: 1000,
  updatedAt: 2000,
  plan: { maxParallelism: 128, vertices: [], edges: [], channels: 0 },
  tasks: [
    {
      id: 0,
      name: 'src -> map',
      parallelism: 1,
      inPerSec: 0,
      outPerSec: 0,
      watermarks: [1234],
      watermark: 1234,
      eventTimeLagMs: 766,
      load: {
        shares: { busy: 0.5, idle: 0.25, backpressured: 0.25 },
        outputFill: 0.75,
        inputFill: null,
        subtasks: [
          {
            subtask: 0,
            shares: { busy: 0.5, idle: 0.25, backpressured: 0.25 },
            outputFill: 0.75,
            inputFill: null,
            idleSeconds: 1.5,
            backpressuredSeconds: 2.5,
            remoteEdges: [
              {
                flow: 'r1-0-0-1',
                direction: 'out',
                records: 300,
                bytes: 4000,
                outstandingBytes: 42,
                creditStalls: 3,
                resent: 0,
              },
              { flow: 'r1-0-1-0', direction: 'in', records: 100, bytes: 1600, queuedBytes: 7, gaps: 0 },
            ],
          },
        ],
      },
      operators: [
        {
          id: 0,
          name: 'src',
          kind: 'source',
          recordsIn: 0,
          recordsOut: 7,
          inPerSec: 0,
          outPerSec: 0,
          sourceLag: { value: 40, unit: 'bytes' },
          subtasks: [
            {
              subtask: 0,
              recordsIn: 0,
              recordsOut: 7,
              counters: { skippedLines: 2 },
              sourceLag: { value: 40, unit: 'bytes' },
            },
          ],
        },
      ],
    },
  ],
  checkpoints: {
    enabled: true,
    completed: 2,
    failed: 1,
    aborted: 3,
    failures: [],
    history: [
      {
        checkpointId: 2,
        triggerTimestamp: 0,
        durationMs: 30,
        maxAlignmentDurationMs: 4,
        switchedToUnaligned: false,
        maxSyncDurationMs: 1,
        maxAsyncDurationMs: 2,
        bytes: 512,
        subtasks: [],
      },
    ],
    latestRestore: null,
    durationHistogram: {
      buckets: CHECKPOINT_DURATION_BUCKETS.map((le) => (le >= 0.05 ? 2 : 0)),
      count: 2,
      sumSeconds: 0.07,
    },
  },
  restarts: { count: 1, history: [] },
  warnings: { count: 0, history: [] },
  failure: null,
  ...over,
});

describe('prometheusText', () => {
  const text = prometheusText(snapshot(), 11_000);
  it('escapes label values and labels counters by job, operator and subtask', () => {
    expect(text).toContain(
      'weir_records_out_total{job="a \\"quoted\\"\\\\job",operator="src",operator_id="0",subtask="0"} 7',
    );
    expect(text).toContain(
      'weir_operator_counter_total{job="a \\"quoted\\"\\\\job",operator="src",operator_id="0",subtask="0",counter="skippedLines"} 2',
    );
  });
  it('renders the checkpoint histogram with cumulative buckets, +Inf, sum and count', () => {
    expect(text).toContain('# TYPE weir_checkpoint_duration_seconds histogram');
    expect(text).toMatch(/weir_checkpoint_duration_seconds_bucket\{job="[^}]*",le="0.01"\} 0/);
    expect(text).toMatch(/weir_checkpoint_duration_seconds_bucket\{job="[^}]*",le="0.05"\} 2/);
    expect(text).toMatch(/weir_checkpoint_duration_seconds_bucket\{job="[^}]*",le="\+Inf"\} 2/);
    expect(text).toMatch(/weir_checkpoint_duration_seconds_count\{job="[^}]*"\} 2\n/);
    expect(text).toMatch(/weir_last_checkpoint_size_bytes\{job="[^}]*"\} 512\n/);
  });
  it('reports each subtask input watermark', () => {
    expect(text).toMatch(
      /weir_task_input_watermark_milliseconds\{job="[^}]*",task="src -> map",task_id="0",subtask="0"\} 1234\n/,
    );
  });
  it('reports time split, ring fill, event-time lag and source lag per subtask with units in the names', () => {
    const labels = 'job="[^}]*",task="src -> map",task_id="0",subtask="0"';
    expect(text).toMatch(
      new RegExp(
        `# TYPE weir_task_idle_seconds_total counter\\nweir_task_idle_seconds_total\\{${labels}\\} 1.5\\n`,
      ),
    );
    expect(text).toMatch(new RegExp(`weir_task_backpressured_seconds_total\\{${labels}\\} 2.5\\n`));
    expect(text).toMatch(new RegExp(`weir_task_output_ring_fill_ratio\\{${labels}\\} 0.75\\n`));
    expect(text).not.toContain('weir_task_input_ring_fill_ratio{'); // a source task has no input ring
    expect(text).toMatch(new RegExp(`weir_task_event_time_lag_seconds\\{${labels}\\} 0.766\\n`));
    expect(text).toMatch(
      /weir_source_lag_bytes\{job="[^}]*",operator="src",operator_id="0",subtask="0"\} 40\n/,
    );
    expect(text).not.toContain('weir_source_lag_records{');
    expect(text).toMatch(/weir_last_checkpoint_sync_seconds\{job="[^}]*"\} 0.001\n/);
    expect(text).toMatch(/weir_last_checkpoint_async_seconds\{job="[^}]*"\} 0.002\n/);
  });
  it("reports each remote edge flow's lag, records and credit stalls (cluster jobs)", () => {
    const labels = 'job="[^}]*",task="src -> map",task_id="0",subtask="0"';
    expect(text).toMatch(
      new RegExp(`weir_remote_edge_lag_bytes\\{${labels},flow="r1-0-0-1",direction="out"\\} 42\\n`),
    );
    expect(text).toMatch(
      new RegExp(`weir_remote_edge_lag_bytes\\{${labels},flow="r1-0-1-0",direction="in"\\} 7\\n`),
    );
    expect(text).toMatch(
      new RegExp(`weir_remote_edge_records_total\\{${labels},flow="r1-0-0-1",direction="out"\\} 300\\n`),
    );
    expect(text).toMatch(
      new RegExp(`weir_remote_edge_credit_stalls_total\\{${labels},flow="r1-0-0-1",direction="out"\\} 3\\n`),
    );
    expect(text).not.toMatch(/weir_remote_edge_credit_stalls_total\{[^}]*direction="in"/);
  });
  it('counts checkpoints by status', () => {
    expect(text).toMatch(/weir_checkpoints_total\{job="[^}]*",status="completed"\} 2\n/);
    expect(text).toMatch(/weir_checkpoints_total\{job="[^}]*",status="failed"\} 1\n/);
    expect(text).toMatch(/weir_checkpoints_total\{job="[^}]*",status="aborted"\} 3\n/);
  });
  it('reports restarts, running state and uptime', () => {
    expect(text).toMatch(/weir_restarts_total\{job="[^}]*"\} 1\n/);
    expect(text).toMatch(/weir_job_running\{job="[^}]*"\} 1\n/);
    expect(text).toMatch(/weir_job_uptime_seconds\{job="[^}]*"\} 10\n/);
    expect(prometheusText(snapshot({ status: 'failed' }))).toMatch(/weir_job_running\{job="[^}]*"\} 0\n/);
  });
  it('declares every metric once, before its samples', () => {
    const types = text.split('\n').filter((l) => l.startsWith('# TYPE '));
    expect(new Set(types).size).toBe(types.length);
    expect(text.endsWith('\n')).toBe(true);
  });
});
