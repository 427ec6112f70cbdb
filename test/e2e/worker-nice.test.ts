/**
 * JobOptions.workerNice: every worker thread of the job runs that many nice levels below the
 * thread that started it, also after a restart on reused threads (lowered once, not twice), and
 * the starting thread keeps its own priority (Linux keeps a nice value per thread). A cluster
 * instance (its own TaskPool, src/cluster/cluster-job.ts) takes the option the same way: one
 * instance of a cluster on the machine's NATS server, a child process.
 */
import { getPriority } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runJob } from '../../dist/index.js';
import { ROOT } from './cli-process.js';
import { cleanupsAfterEach, clusterName, forkInstance, NATS_SERVERS, tempDir } from './cluster-instances.js';
import { InstanceLog } from './cluster-log.js';
import { fixture } from './helpers.js';

const cleanups = cleanupsAfterEach();

interface Probe {
  readonly x: number;
  readonly attempt: number;
  readonly firstAttempt: number;
  readonly nice: number;
}

describe.runIf(process.platform === 'linux')('the workerNice job option', () => {
  it('lowers every worker thread by that many levels, across a restart, and not the main thread', async () => {
    const main = getPriority(0);
    const result = await runJob(fixture('thread-nice.mjs'), {
      parallelism: 2,
      workerNice: 5,
      restartStrategy: { type: 'fixed-delay', attempts: 1, delay: 0 },
      args: { fail: 'yes' },
    });
    expect(result.restarts).toBe(1);
    const out = result.sinks.out as Probe[];
    const restarted = out.filter((r) => r.attempt === 1);
    expect(restarted.length).toBeGreaterThan(0);
    // Some records of attempt 1 ran in a thread that had run attempt 0: the reuse this checks.
    expect(restarted.some((r) => r.firstAttempt === 0)).toBe(true);
    expect(new Set(out.map((r) => r.nice))).toEqual(new Set([Math.min(19, main + 5)]));
    expect(getPriority(0)).toBe(main);
  });

  it('leaves worker threads at the main thread’s priority by default', async () => {
    const main = getPriority(0);
    const result = await runJob(fixture('thread-nice.mjs'), { parallelism: 2 });
    expect(new Set((result.sinks.out as Probe[]).map((r) => r.nice))).toEqual(new Set([main]));
  });

  it('lowers the worker threads of a cluster instance too', async () => {
    const log = new InstanceLog();
    // The child starts at this process's nice value (a forked process inherits it).
    const main = getPriority(0);
    const child = forkInstance(
      cleanups,
      log,
      0,
      path.join(ROOT, 'test/fixtures/cluster/cluster-instance.mjs'),
      {
        job: pathToFileURL(fixture('thread-nice.mjs')).href,
        options: {
          parallelism: 2,
          workerNice: 5,
          checkpointing: { interval: 100, dir: path.join(tempDir(cleanups, 'weir-nice-'), 'checkpoints') },
          cluster: { servers: NATS_SERVERS, name: clusterName(cleanups, 'nice'), instances: 1 },
        },
      },
    );
    await log.until('the result', () => log.of('result').length === 1);
    const [r] = log.of('result');
    expect(r.status).toBe('finished');
    const out = (r.sinks as unknown as { out: Probe[] }).out;
    expect(out).toHaveLength(100);
    expect(new Set(out.map((p) => p.nice))).toEqual(new Set([Math.min(19, main + 5)]));
    child.send({ cmd: 'exit' });
  });
});
