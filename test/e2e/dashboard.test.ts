/**
 * The dashboard's HTTP API, its Prometheus text and `weir/prometheus`, against real running jobs.
 * Everything waits on job events or on what the server reports, never on time.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  type CompletedCheckpointStats,
  type FailedCheckpointStats,
  type JobClient,
  type JobSnapshot,
  startJob,
} from '../../dist/index.js';
import { registerJobMetrics } from '../../dist/prometheus.js';
import { fixture } from './helpers.js';
import { key, parseExposition } from './prometheus-exposition.js';

async function getJson(url: string): Promise<JobSnapshot> {
  const r = await fetch(url);
  expect(r.status).toBe(200);
  return (await r.json()) as JobSnapshot;
}

/** Resolves after the job completed `n` more checkpoints. */
function checkpoints(client: JobClient, n: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const on = (_c: CompletedCheckpointStats) => {
      if (++seen >= n) {
        client.off('checkpoint', on);
        resolve();
      }
    };
    client.on('checkpoint', on);
  });
}

const longJob = (extra: Record<string, string> = {}) => ({
  parallelism: 2,
  metricsInterval: 100,
  checkpointing: { interval: 50 },
  restartStrategy: { type: 'fixed-delay' as const, attempts: 3, delay: 0 },
  // a long, rate-limited job: each test cancels it once it saw what it needs
  args: { n: '100000000', rate: '5000', ...extra },
});

describe('dashboard HTTP API', () => {
  it('serves the plan, live counters and the checkpoint history at /api/job', async () => {
    const client = await startJob(fixture('checkpointed-sum.mjs'), { ...longJob(), dashboard: { port: 0 } });
    // binding the port happens before the job starts: a listener attached now sees the first event
    const deployed = once(client, 'deployed');
    try {
      expect((await deployed)[0]).toMatchObject({ attempt: 0 });
      expect(client.dashboardUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      await checkpoints(client, 2);
      await once(client, 'metrics');
      const s = await getJson(`${client.dashboardUrl}api/job`);
      expect(s.job).toBe('checkpointed-sum');
      expect(s.status).toBe('running');
      expect(s.tasks.map((t) => t.name)).toEqual(['numbers -> maybe fail', 'running sum -> sink: sums']);
      expect(s.tasks.map((t) => t.parallelism)).toEqual([2, 2]);
      expect(s.plan.edges).toHaveLength(1);
      expect(s.plan.edges[0].partitioning).toBe('hash');
      expect(s.plan.channels).toBe(4);
      const source = s.tasks[0].operators[0];
      expect(source.subtasks).toHaveLength(2);
      expect(source.recordsOut).toBeGreaterThan(0);
      expect(s.checkpoints.enabled).toBe(true);
      expect(s.checkpoints.completed).toBeGreaterThanOrEqual(2);
      const cp = s.checkpoints.history[0];
      for (const k of [
        'checkpointId',
        'triggerTimestamp',
        'durationMs',
        'maxAlignmentDurationMs',
        'maxSyncDurationMs',
        'maxAsyncDurationMs',
        'bytes',
      ])
        expect(typeof (cp as unknown as Record<string, unknown>)[k]).toBe('number');
      // the event stream sends the same snapshot on connect
      const ac = new AbortController();
      const events = await fetch(`${client.dashboardUrl}api/events`, { signal: ac.signal });
      expect(events.headers.get('content-type')).toBe('text/event-stream');
      const reader = events.body!.getReader();
      let text = '';
      while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
      ac.abort();
      const pushed = JSON.parse(text.split('data: ')[1].split('\n\n')[0]) as JobSnapshot;
      expect(pushed.tasks).toHaveLength(2);
      expect((await fetch(`${client.dashboardUrl}nope`)).status).toBe(404);
    } finally {
      await client.cancel();
    }
    // the server closes with the job
    await expect(fetch(`${client.dashboardUrl}api/job`)).rejects.toThrow();
  });

  it('shows a restart with the failing stack, and keeps counters monotonic across it', async () => {
    const client = await startJob(fixture('checkpointed-sum.mjs'), {
      ...longJob({ failure: 'throw', at: '0.00001', snapshots: '1' }),
      dashboard: true,
    });
    const redeployed = new Promise<void>((resolve) =>
      client.on('deployed', (e: { attempt: number }) => {
        if (e.attempt === 1) resolve();
      }),
    );
    try {
      const [restarting] = (await once(client, 'restarting')) as [{ attempt: number }];
      expect(restarting.attempt).toBe(1);
      const s = await getJson(`${client.dashboardUrl}api/job`);
      expect(s.restarts.count).toBe(1);
      expect(s.restarts.history[0].message).toContain('injected failure');
      // the worker's stack, naming the job module's file
      expect(s.restarts.history[0].stack).toContain('checkpointed-sum.mjs');
      const before = s.tasks[0].operators[0].recordsOut;
      await redeployed;
      await once(client, 'metrics');
      await once(client, 'metrics');
      const after = await getJson(`${client.dashboardUrl}api/job`);
      expect(after.attempt).toBe(1);
      expect(after.tasks[0].operators[0].recordsOut).toBeGreaterThanOrEqual(before);
    } finally {
      await client.cancel();
    }
  });

  it('counts and lists a failed checkpoint with its reason', async () => {
    const client = await startJob(fixture('checkpointed-sum.mjs'), {
      ...longJob({ failure: 'snapshot', at: '0.00001' }),
      dashboard: true,
    });
    try {
      const [failed] = (await once(client, 'checkpoint-failed')) as [FailedCheckpointStats];
      // the snapshot's throw declines the checkpoint, or fails the task first: either is a failure
      expect(['async-snapshot-failed', 'task-failure']).toContain(failed.reason);
      expect(failed.message).toContain(`checkpoint ${failed.checkpointId}`);
      const s = await getJson(`${client.dashboardUrl}api/job`);
      expect(s.checkpoints.failed).toBeGreaterThanOrEqual(1);
      expect(s.checkpoints.failures.map((f) => f.checkpointId)).toContain(failed.checkpointId);
      const text = parseExposition(await (await fetch(`${client.dashboardUrl}metrics`)).text());
      const failedTotal = text.samples.find(
        (x) => x.name === 'weir_checkpoints_total' && x.labels.status === 'failed',
      )!;
      expect(failedTotal.value).toBeGreaterThanOrEqual(1);
    } finally {
      await client.cancel();
    }
  });

  it("shows each subtask's input watermark", async () => {
    const client = await startJob(fixture('event-time-running.mjs'), {
      parallelism: 2,
      metricsInterval: 100,
      dashboard: true,
    });
    try {
      // wait until a sample carries a watermark on every keyed subtask
      let s: JobSnapshot;
      do {
        await once(client, 'metrics');
        s = await getJson(`${client.dashboardUrl}api/job`);
      } while (s.tasks[1].watermark === null);
      const keyed = s.tasks[1];
      expect(keyed.name).toBe('count -> sink: discard');
      expect(keyed.watermarks).toHaveLength(2);
      // event time is value × 10 ms: a watermark is a multiple of 10 minus the bound's 1 ms
      for (const w of keyed.watermarks) expect(((w as number) + 1) % 10).toBe(0);
      expect(s.tasks[0].watermark).toBeNull(); // sources have no network input
      const text = parseExposition(await (await fetch(`${client.dashboardUrl}metrics`)).text());
      const wms = text.samples.filter((x) => x.name === 'weir_task_input_watermark_milliseconds');
      expect(wms.map((x) => x.labels.subtask).sort()).toEqual(['0', '1']);
      expect(wms.every((x) => x.labels.task_id === '1' && x.value >= (keyed.watermark as number))).toBe(true);
    } finally {
      await client.cancel();
    }
  });

  it('actions need the configured token', async () => {
    const readOnly = await startJob(fixture('checkpointed-sum.mjs'), { ...longJob(), dashboard: {} });
    try {
      const r = await fetch(`${readOnly.dashboardUrl}api/cancel`, { method: 'POST' });
      expect(r.status).toBe(403);
      expect(((await r.json()) as { error: string }).error).toContain('disabled');
    } finally {
      await readOnly.cancel();
    }
    const token = 'a-long-secret-token';
    const client = await startJob(fixture('checkpointed-sum.mjs'), { ...longJob(), dashboard: { token } });
    const wrong = await fetch(`${client.dashboardUrl}api/cancel`, {
      method: 'POST',
      headers: { authorization: 'Bearer not-the-token-at-all' },
    });
    expect(wrong.status).toBe(401);
    const right = await fetch(`${client.dashboardUrl}api/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(right.status).toBe(202);
    await expect(client.done).rejects.toMatchObject({ code: 'ERR_WEIR_JOB_CANCELLED' });
  });

  it('stop-with-savepoint over HTTP answers with the savepoint and stops the job', async () => {
    const token = 'a-long-secret-token';
    const dir = mkdtempSync(join(tmpdir(), 'weir-dashboard-savepoint-'));
    const target = join(dir, 'sp');
    try {
      const client = await startJob(fixture('checkpointed-sum.mjs'), { ...longJob(), dashboard: { token } });
      await checkpoints(client, 1);
      const missing = await fetch(`${client.dashboardUrl}api/stop-with-savepoint`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(missing.status).toBe(400);
      const r = await fetch(
        `${client.dashboardUrl}api/stop-with-savepoint?dir=${encodeURIComponent(target)}`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
        },
      );
      expect(r.status).toBe(200);
      const body = (await r.json()) as { savepoint: { checkpointId: number; path: string } };
      expect(body.savepoint.path).toBe(target);
      const result = await client.done;
      expect(result.status).toBe('stopped');
      expect(result.savepoint?.checkpointId).toBe(body.savepoint.checkpointId);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects a bad dashboard option before anything runs, and a port in use with a typed error', async () => {
    await expect(
      startJob(fixture('checkpointed-sum.mjs'), { dashboard: { port: 70000 } }),
    ).rejects.toMatchObject({
      code: 'ERR_WEIR_INVALID_OPTION',
      option: 'dashboard.port',
    });
    const first = await startJob(fixture('checkpointed-sum.mjs'), { ...longJob(), dashboard: true });
    try {
      const port = Number(new URL(first.dashboardUrl!).port);
      await expect(
        startJob(fixture('checkpointed-sum.mjs'), { ...longJob(), dashboard: { port } }),
      ).rejects.toMatchObject({ code: 'ERR_WEIR_INVALID_OPTION', option: 'dashboard' });
    } finally {
      await first.cancel();
    }
  });
});

describe('Prometheus metrics', () => {
  it('/metrics: conventional names and labels, counters monotonic across two scrapes', async () => {
    const client = await startJob(fixture('checkpointed-sum.mjs'), { ...longJob(), dashboard: true });
    try {
      await checkpoints(client, 1);
      await once(client, 'metrics');
      const first = await (await fetch(`${client.dashboardUrl}metrics`)).text();
      await checkpoints(client, 2);
      await once(client, 'metrics');
      const response = await fetch(`${client.dashboardUrl}metrics`);
      expect(response.headers.get('content-type')).toContain('text/plain; version=0.0.4');
      const a = parseExposition(first);
      const b = parseExposition(await response.text());
      for (const [name, type] of [
        ['weir_records_in_total', 'counter'],
        ['weir_records_out_total', 'counter'],
        ['weir_checkpoints_total', 'counter'],
        ['weir_checkpoint_duration_seconds', 'histogram'],
        ['weir_restarts_total', 'counter'],
        ['weir_task_parallelism', 'gauge'],
      ])
        expect(b.types.get(name)).toBe(type);
      const sourceOut = b.samples.filter(
        (s) => s.name === 'weir_records_out_total' && s.labels.operator === 'numbers',
      );
      expect(sourceOut.map((s) => s.labels.subtask).sort()).toEqual(['0', '1']);
      for (const s of sourceOut) expect(s.labels.job).toBe('checkpointed-sum');
      // every counter sample of the first scrape is there in the second, and did not go down
      const second = new Map(b.samples.map((s) => [key(s), s.value]));
      let counters = 0;
      for (const s of a.samples) {
        if (!(s.name.endsWith('_total') || s.name.endsWith('_count') || s.name.includes('_bucket'))) continue;
        counters++;
        expect(second.get(key(s)), key(s)).toBeGreaterThanOrEqual(s.value);
      }
      expect(counters).toBeGreaterThan(10);
      const completed = (x: typeof a) =>
        x.samples.find((s) => s.name === 'weir_checkpoints_total' && s.labels.status === 'completed')!.value;
      expect(completed(b)).toBeGreaterThanOrEqual(completed(a) + 2);
      const count = b.samples.find((s) => s.name === 'weir_checkpoint_duration_seconds_count')!.value;
      const inf = b.samples.find(
        (s) => s.name === 'weir_checkpoint_duration_seconds_bucket' && s.labels.le === '+Inf',
      )!.value;
      expect(inf).toBe(count);
      expect(count).toBe(completed(b));
    } finally {
      await client.cancel();
    }
  });

  it('weir/prometheus registers the same metrics on a prom-client registry', async () => {
    const client = await startJob(fixture('checkpointed-sum.mjs'), longJob());
    const registry = new Registry();
    const registration = registerJobMetrics(client, registry, { job: 'orders' });
    try {
      await checkpoints(client, 2);
      await once(client, 'metrics');
      const a = parseExposition(await registry.metrics());
      await checkpoints(client, 1);
      await once(client, 'metrics');
      const b = parseExposition(await registry.metrics());
      expect(b.types.get('weir_records_in_total')).toBe('counter');
      expect(b.types.get('weir_checkpoint_duration_seconds')).toBe('histogram');
      const out = (x: typeof a) =>
        x.samples
          .filter((s) => s.name === 'weir_records_out_total' && s.labels.operator === 'numbers')
          .reduce((n, s) => n + s.value, 0);
      expect(out(a)).toBeGreaterThan(0);
      expect(out(b)).toBeGreaterThanOrEqual(out(a));
      const sample = b.samples.find((s) => s.name === 'weir_records_in_total')!;
      expect(Object.keys(sample.labels).sort()).toEqual(['job', 'operator', 'operator_id', 'subtask']);
      expect(sample.labels.job).toBe('orders');
      const count = b.samples.find((s) => s.name === 'weir_checkpoint_duration_seconds_count')!;
      expect(count.value).toBeGreaterThanOrEqual(3);
      registration.unregister();
      expect(await registry.metrics()).not.toContain('weir_');
    } finally {
      await client.cancel();
    }
  });
});
