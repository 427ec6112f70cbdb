/**
 * An instance joining a running cluster job (issue 17, "rescale on join"), against the machine's
 * NATS server (127.0.0.1:4222): test/fixtures/jobs/split-sum.mjs (sequence → map | keyBy → running
 * sum → exactly-once collect sink) at parallelism 3, each instance a child process running
 * test/fixtures/cluster/cluster-instance.mjs with the same options (`instances: 2`).
 *
 * Two instances start and deploy (one of them runs two subtasks of each vertex); every source
 * holds after `hold` records (flag files `held-<subtask>`); once a checkpoint was committed while
 * all three held, a third instance starts with the same options. It must not be refused: the
 * coordinator sees it live outside the assignment, restarts the run over the three (attempt 1,
 * restoring the committed checkpoint), and every instance deploys its third. Only then are the
 * sources released. Sink side: every transaction committed by any instance, counted once by its
 * id (the restored checkpoint's are committed again on restore), is exactly the running sums; each
 * instance's result says `restarts: 1`, and the joiner delivered its share.
 *
 * Synchronised on IPC events and flag files only. Without joining (the instance refused with a
 * `ClusterError`, or never given a share) the test fails: the joiner reports an error, or the
 * wait for three attempt-1 deployments never ends (the sources hold until then).
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from './cli-process.js';
import {
  cleanupsAfterEach,
  clusterName,
  committedOnce,
  forkInstance,
  NATS_SERVERS as SERVERS,
  tempDir,
  untilHeld,
} from './cluster-instances.js';
import { InstanceLog as Log } from './cluster-log.js';
import { expectExactRunningSums } from './helpers.js';

const HOST = path.join(ROOT, 'test/fixtures/cluster/cluster-instance.mjs');
const JOB = pathToFileURL(path.join(ROOT, 'test/fixtures/jobs/split-sum.mjs')).href;
const N = 6000;
const HOLD = 500;
const KEYS = 10;
const PARALLELISM = 3;
/** Long enough that a member slowed by a loaded machine is not timed out (that would be another restart). */
const TIMEOUT_MS = 4000;

const cleanups = cleanupsAfterEach();

describe('an instance joining a running cluster job', () => {
  it('is given a share: the job restarts over three instances from the committed checkpoint; the committed output is exact', async () => {
    const dir = tempDir(cleanups, 'weir-cluster-join-');
    const name = clusterName(cleanups, 'join');
    const log = new Log();
    const children: ChildProcess[] = [];
    const start = () =>
      children.push(
        forkInstance(cleanups, log, children.length, HOST, {
          job: JOB,
          options: {
            parallelism: PARALLELISM,
            args: { n: String(N), hold: String(HOLD), keys: String(KEYS), dir },
            checkpointing: { interval: 100, dir: path.join(dir, 'checkpoints') },
            cluster: { servers: SERVERS, name, instances: 2, timeoutMs: TIMEOUT_MS, rebalanceDelayMs: 200 },
          },
        }),
      );
    start();
    start();
    await untilHeld(log, children, dir, { instances: 2, parallelism: PARALLELISM });
    const committedBeforeJoin = Math.max(...log.of('checkpoint').map((m) => m.checkpointId!));

    start();
    const redeployed = (i: number) => log.of('deployed', i).some((m) => m.attempt === 1);
    await log.until('all three deployed at attempt 1', () => [0, 1, 2].every(redeployed));
    writeFileSync(path.join(dir, 'release'), '');
    await log.until('every result', () => log.of('result').length === 3);

    // Every instance restored the same committed checkpoint, no older than the one before the join.
    const restored = [0, 1, 2].map((i) => log.of('deployed', i).find((m) => m.attempt === 1)!.restoredFrom);
    expect(new Set(restored).size).toBe(1);
    expect(restored[0]).toBeGreaterThanOrEqual(committedBeforeJoin);
    // The joiner deployed once, at the job's attempt; the first two twice.
    expect(log.of('deployed', 2)).toHaveLength(1);
    for (const i of [0, 1]) expect(log.of('deployed', i)).toHaveLength(2);
    for (const r of log.of('result')) {
      expect(r.status).toBe('finished');
      expect(r.restarts).toBe(1);
    }
    // The joiner ran a third of the job: its sink subtask delivered.
    expect(log.of('result', 2)[0].sinks!.sums.length).toBeGreaterThan(0);
    // Sink side: every committed transaction, counted once by its id.
    expectExactRunningSums(committedOnce(log), N, KEYS);
    for (const c of children) c.send({ cmd: 'exit' });
  });
});
