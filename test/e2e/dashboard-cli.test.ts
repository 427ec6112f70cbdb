// `weir run --dashboard --metrics-port 0`: the command prints both URLs, serves the page, the JSON
// and Prometheus text while the job runs, and SIGTERM still stops it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseRunArgs } from '../../dist/cli/main.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = path.join(ROOT, 'bin/weir.js');
const JOB = path.join(ROOT, 'test/fixtures/jobs/checkpointed-sum.mjs');

describe('weir run --dashboard', () => {
  it('parses --dashboard with and without a port', () => {
    expect(parseRunArgs(['job.mjs', '--dashboard']).options.dashboard).toMatchObject({ port: 0 });
    expect(parseRunArgs(['job.mjs', '--dashboard', '8081', '--plan']).options.dashboard).toMatchObject({
      port: 8081,
    });
    const p = parseRunArgs([
      'job.mjs',
      '--dashboard',
      '--metrics-port',
      '9464',
      '--dashboard-host',
      '0.0.0.0',
    ]);
    expect(p.options.dashboard).toMatchObject({ port: 0, host: '0.0.0.0' });
    expect(p.metricsPort).toBe(9464);
    expect(p.job).toBe('job.mjs');
    expect(parseRunArgs(['job.mjs']).options.dashboard).toBeUndefined();
    expect(() => parseRunArgs(['job.mjs', '--dashboard-host', 'x'])).toThrow(/needs --dashboard/);
  });

  it('prints the dashboard and metrics URLs and serves them while the job runs', async () => {
    const child = spawn(
      process.execPath,
      [
        CLI,
        'run',
        JOB,
        '--dashboard',
        '--metrics-port',
        '0',
        '--checkpoint-interval',
        '100',
        '--arg',
        'n=100000000',
        '--arg',
        'rate=2000',
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let stderr = '';
    const urls = new Promise<{ dashboard: string; metrics: string }>((resolve) => {
      child.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        const d = /dashboard at (http:\S+)/.exec(stderr);
        const m = /Prometheus metrics at (http:\S+)/.exec(stderr);
        if (d && m) resolve({ dashboard: d[1], metrics: m[1] });
      });
    });
    try {
      const { dashboard, metrics } = await urls;
      const page = await fetch(dashboard);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(await page.text()).toContain('<title>weir · checkpointed-sum</title>');
      const job = (await (await fetch(`${dashboard}api/job`)).json()) as { tasks: unknown[] };
      expect(job.tasks).toHaveLength(2);
      expect(metrics).toMatch(/\/metrics$/);
      const text = await (await fetch(metrics)).text();
      expect(text).toContain('# TYPE weir_records_in_total counter');
      expect(text).toContain('weir_restarts_total{job="checkpointed-sum"} 0');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exit).toBe(143);
  });
});
