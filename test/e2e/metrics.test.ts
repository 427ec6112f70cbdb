/** Live job metrics: sampled from running tasks, growing while the job runs, exact at the end. */
import { describe, expect, it } from 'vitest';
import { type JobMetrics, startJob } from '../../dist/index.js';
import { fixture } from './helpers.js';

describe('JobClient.metrics()', () => {
  it('samples live counters every metricsInterval and ends with the exact totals', async () => {
    const client = await startJob(fixture('checkpointed-sum.mjs'), {
      parallelism: 2,
      metricsInterval: 100,
      args: { n: '3000', rate: '3000' },
    });
    const samples: JobMetrics[] = [];
    client.on('metrics', (m: JobMetrics) => samples.push(m));
    const result = await client.done;
    const sourceOut = (m: JobMetrics) => m.operators.find((o) => o.name === 'numbers')!.recordsOut;
    // about one second of input at 3000/s: several samples, non-decreasing, below the total
    expect(samples.length).toBeGreaterThanOrEqual(3);
    const seen = samples.map(sourceOut);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1]);
    expect(seen.some((v) => v > 0 && v < 3000)).toBe(true);
    expect(sourceOut(result.metrics)).toBe(3000);
    expect(result.metrics.operators.find((o) => o.name === 'running sum')!.recordsIn).toBe(3000);
  });

  it('metricsInterval 0 turns sampling off', async () => {
    const client = await startJob(fixture('checkpointed-sum.mjs'), {
      metricsInterval: 0,
      args: { n: '600', rate: '3000' },
    });
    let events = 0;
    client.on('metrics', () => events++);
    await client.done;
    expect(events).toBe(0);
  });
});
