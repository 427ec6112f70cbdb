/**
 * What the dashboard measures inside the tasks, against real running jobs: the busy / idle /
 * backpressured split and ring fill per subtask, a file source's lag, the event-time lag and the
 * per-subtask checkpoint detail; in `/api/job` and in `/metrics`. Waits on samples (the `metrics`
 * event) until the job shows the state under test, never on time.
 */
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type CompletedCheckpointStats,
  type JobClient,
  type JobSnapshot,
  startJob,
} from '../../dist/index.js';
import { fixture, holdFlag } from './helpers.js';
import { key, parseExposition } from './prometheus-exposition.js';

async function snapshot(client: JobClient): Promise<JobSnapshot> {
  const r = await fetch(`${client.dashboardUrl}api/job`);
  expect(r.status).toBe(200);
  return (await r.json()) as JobSnapshot;
}

/** The first snapshot, after a sample, for which `holds` is true. */
async function until(client: JobClient, holds: (s: JobSnapshot) => boolean): Promise<JobSnapshot> {
  for (;;) {
    await once(client, 'metrics');
    const s = await snapshot(client);
    if (holds(s)) return s;
  }
}

async function scrape(client: JobClient) {
  return parseExposition(await (await fetch(`${client.dashboardUrl}metrics`)).text());
}

const root = mkdtempSync(join(tmpdir(), 'weir-dashboard-load-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('task load on the dashboard', () => {
  it('a fast source feeding a slow consumer shows as backpressured with full rings; the consumer as busy', async () => {
    const client = await startJob(fixture('slow-consumer.mjs'), {
      parallelism: 2,
      metricsInterval: 100,
      dashboard: true,
    });
    try {
      const s = await until(client, (x) => {
        const [source, slow] = x.tasks;
        return (
          (source.load.shares?.backpressured ?? 0) > 0.5 &&
          (source.load.outputFill ?? 0) > 0.5 &&
          (slow.load.inputFill ?? 0) > 0.5 &&
          slow.load.shares !== null &&
          slow.load.shares.idle < 0.5
        );
      });
      const [source, slow] = s.tasks;
      expect(source.name).toBe('fast');
      expect(source.load.inputFill).toBeNull(); // a source has no input ring
      expect(slow.name).toBe('slow -> sink: discard');
      expect(slow.load.outputFill).toBeNull(); // the chain ends in a sink: no output ring
      for (const t of s.tasks) {
        expect(t.load.subtasks.map((l) => l.subtask)).toEqual([0, 1]);
        for (const l of t.load.subtasks) {
          if (l.shares === null) continue;
          expect(l.shares.busy + l.shares.idle + l.shares.backpressured).toBeCloseTo(1);
        }
      }
      const first = await scrape(client);
      expect(first.types.get('weir_task_backpressured_seconds_total')).toBe('counter');
      expect(first.types.get('weir_task_idle_seconds_total')).toBe('counter');
      expect(first.types.get('weir_task_output_ring_fill_ratio')).toBe('gauge');
      expect(first.types.get('weir_task_input_ring_fill_ratio')).toBe('gauge');
      const backpressured = first.samples.filter(
        (x) => x.name === 'weir_task_backpressured_seconds_total' && x.labels.task === 'fast',
      );
      expect(backpressured.map((x) => x.labels.subtask).sort()).toEqual(['0', '1']);
      expect(backpressured.reduce((n, x) => n + x.value, 0)).toBeGreaterThan(0);
      for (const x of first.samples.filter((y) => y.name.endsWith('_ratio'))) {
        expect(x.value).toBeGreaterThanOrEqual(0);
        expect(x.value).toBeLessThanOrEqual(1);
      }
      await once(client, 'metrics');
      await once(client, 'metrics');
      const second = new Map((await scrape(client)).samples.map((x) => [key(x), x.value]));
      for (const x of first.samples.filter((y) => y.name.endsWith('_seconds_total')))
        expect(second.get(key(x)), key(x)).toBeGreaterThanOrEqual(x.value);
    } finally {
      await client.cancel();
    }
  });

  it('a rate-limited job is mostly idle, and each completed checkpoint lists every subtask', async () => {
    const client = await startJob(fixture('checkpointed-sum.mjs'), {
      parallelism: 2,
      metricsInterval: 100,
      checkpointing: { interval: 50 },
      args: { n: '100000000', rate: '2000' },
      dashboard: true,
    });
    try {
      const s = await until(
        client,
        (x) =>
          x.checkpoints.history.length > 0 &&
          x.tasks.every((t) => t.load.subtasks.every((l) => l.idleSeconds > 0)) &&
          (x.tasks[1].load.shares?.idle ?? 0) > 0,
      );
      expect(s.tasks[1].load.inputFill).not.toBeNull();
      const cp = s.checkpoints.history[0] as CompletedCheckpointStats;
      expect(cp.subtasks.map((t) => t.task).sort()).toEqual(['0/0', '0/1', '1/0', '1/1']);
      expect(cp.subtasks.reduce((n, t) => n + t.bytes, 0)).toBe(cp.bytes);
      expect(Math.max(...cp.subtasks.map((t) => t.syncDurationMs))).toBe(cp.maxSyncDurationMs);
      expect(Math.max(...cp.subtasks.map((t) => t.asyncDurationMs))).toBe(cp.maxAsyncDurationMs);
      expect(Math.max(...cp.subtasks.map((t) => t.alignmentDurationMs))).toBe(cp.maxAlignmentDurationMs);
      const text = await scrape(client);
      expect(text.types.get('weir_last_checkpoint_sync_seconds')).toBe('gauge');
      expect(text.types.get('weir_last_checkpoint_async_seconds')).toBe('gauge');
    } finally {
      await client.cancel();
    }
  });

  it("a file source's lag is the bytes it has not read yet, and shrinks as it reads", async () => {
    const input = join(root, 'in');
    mkdirSync(input, { recursive: true });
    const lines: string[] = [];
    for (let i = 0; i < 20000; i++) lines.push(JSON.stringify({ id: i, key: `k${i % 10}`, value: i }));
    writeFileSync(join(input, 'part-0.jsonl'), `${lines.join('\n')}\n`);
    const size = statSync(join(input, 'part-0.jsonl')).size;
    // The reader holds halfway until the first lag is seen: a loaded machine whose first sample
    // comes late cannot see the input read to its end (lag 0) first.
    const hold = holdFlag();
    const client = await startJob(fixture('file-sum.mjs'), {
      parallelism: 1,
      metricsInterval: 100,
      args: {
        input: join(input, '*.jsonl'),
        out: join(root, 'out'),
        rate: '4000',
        total: '20000',
        hold: hold.path,
        holdAt: '10000',
      },
      dashboard: true,
    });
    try {
      const lagOf = (x: JobSnapshot) => x.tasks[0].operators[0].sourceLag;
      const a = await until(client, (x) => (lagOf(x)?.value ?? 0) > 0);
      const first = lagOf(a)!;
      expect(first.unit).toBe('bytes');
      expect(first.value).toBeLessThanOrEqual(size);
      expect(a.tasks[0].operators[0].subtasks[0].sourceLag).toEqual(first);
      // operators that are not sources have no lag
      expect(a.tasks[1].operators.every((o) => o.sourceLag === null)).toBe(true);
      const text = await scrape(client);
      const bytes = text.samples.filter((x) => x.name === 'weir_source_lag_bytes');
      expect(bytes.map((x) => [x.labels.operator, x.labels.subtask])).toEqual([['files', '0']]);
      hold.release();
      await until(client, (x) => (lagOf(x)?.value ?? Infinity) < first.value);
    } finally {
      await client.cancel();
      hold.dispose();
    }
  });

  it('the event-time lag is the wall clock at the sample minus the watermark', async () => {
    const startedBefore = Date.now();
    const client = await startJob(fixture('event-time-running.mjs'), {
      parallelism: 2,
      metricsInterval: 100,
      dashboard: true,
    });
    try {
      const s = await until(client, (x) => x.tasks[1].watermark !== null);
      const t = s.tasks[1];
      const sampledAt = (t.eventTimeLagMs as number) + (t.watermark as number);
      expect(sampledAt).toBeGreaterThanOrEqual(startedBefore);
      expect(sampledAt).toBeLessThanOrEqual(Date.now());
      expect(s.tasks[0].eventTimeLagMs).toBeNull(); // no input watermark in a source task
      const lags = (await scrape(client)).samples.filter(
        (x) => x.name === 'weir_task_event_time_lag_seconds',
      );
      expect(lags.map((x) => x.labels.subtask).sort()).toEqual(['0', '1']);
      for (const x of lags) expect(x.value).toBeGreaterThan(0);
    } finally {
      await client.cancel();
    }
  });
});
