/**
 * SIGKILL of a cluster instance at a seeded random moment while records flow (issue 17: "kills at
 * seeded random times"), against the machine's NATS server: three child processes run
 * test/fixtures/jobs/split-sum.mjs (sequence → map | keyBy → running sum → exactly-once collect
 * sink) at parallelism 3 through test/fixtures/cluster/cluster-instance.mjs, the sources
 * rate-limited so the input lasts a few seconds. cluster-job.test.ts kills while every source
 * holds; here the victim dies with records in flight on its remote edges, in the middle of a
 * checkpoint or between two.
 *
 * Per seed: the victim (the coordinator or another member) and the moment — after the seed's
 * number of committed checkpoints, plus a seeded delay shorter than the checkpoint interval — are
 * drawn from the seed. The delay only places the kill; nothing is asserted about time. So that a
 * fast machine cannot end the input before the kill, each source holds after HOLD_AT of its
 * records until the test writes `release` (after the kill). Checked: both survivors finish after
 * at least one restart, and every transaction any instance committed (the victim's reported
 * before it died), counted once by id, is exactly the running sums of the input.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { prng } from '../fixtures/channels/stress-sequence.js';
import { ROOT } from './cli-process.js';
import {
  cleanupsAfterEach,
  clusterName,
  committedOnce,
  forkInstance,
  NATS_SERVERS as SERVERS,
  tempDir,
} from './cluster-instances.js';
import { InstanceLog as Log } from './cluster-log.js';
import { expectExactRunningSums } from './helpers.js';

const HOST = path.join(ROOT, 'test/fixtures/cluster/cluster-instance.mjs');
const JOB = pathToFileURL(path.join(ROOT, 'test/fixtures/jobs/split-sum.mjs')).href;
const INSTANCES = 3;
const N = 24_000;
/** Records per second over the three sources: ~4 s of input. */
const RATE = 6000;
/** Each source holds after this many of its N / 3 records until `release`. */
const HOLD_AT = 7200;
const KEYS = 10;
const INTERVAL_MS = 100;
/** As cluster-job.test.ts's kill cases: a quick takeover, no survivor timed out under load. */
const TIMEOUT_MS = 4000;
/** vitest's bound on one case (a hang bound): start-up, takeover and the rest of the input under load. */
const CASE_MS = 300_000;

const cleanups = cleanupsAfterEach();

function startInstances() {
  const dir = tempDir(cleanups, 'weir-cluster-chaos-');
  const name = clusterName(cleanups, 'chaos');
  const log = new Log();
  const children = Array.from({ length: INSTANCES }, (_, i) =>
    forkInstance(cleanups, log, i, HOST, {
      job: JOB,
      options: {
        parallelism: INSTANCES,
        args: { n: String(N), hold: String(HOLD_AT), rate: String(RATE), keys: String(KEYS), dir },
        checkpointing: { interval: INTERVAL_MS, dir: path.join(dir, 'checkpoints') },
        cluster: { servers: SERVERS, name, instances: INSTANCES, timeoutMs: TIMEOUT_MS },
      },
    }),
  );
  return { dir, log, children };
}

describe('SIGKILL of a cluster instance at a seeded random moment while records flow', () => {
  for (const seed of [11, 12]) {
    it(
      `seed ${seed}: the survivors restart from the last committed checkpoint; the committed output is exact`,
      async () => {
        const random = prng(seed);
        const killCoordinator = random() < 0.5;
        const afterCheckpoints = 1 + Math.floor(random() * 5);
        const delayMs = Math.floor(random() * INTERVAL_MS);
        const { dir, log, children } = startInstances();
        await log.until('every instance deployed', () => log.of('deployed').length === INSTANCES);
        // Committed checkpoints that cover records: counted from the first sink delivery on.
        await log.until('the first delivery', () => log.of('collected').length > 0);
        const before = log.of('checkpoint').length;
        await log.until(
          `${afterCheckpoints} more committed checkpoint(s)`,
          () => log.of('checkpoint').length >= before + afterCheckpoints,
        );
        await new Promise((r) => setTimeout(r, delayMs));
        const coordinator = log.of('checkpoint')[0].instance;
        const victim = killCoordinator ? coordinator : (coordinator + 1) % INSTANCES;
        const survivors = [0, 1, 2].filter((i) => i !== victim);
        const victimExited = new Promise<void>((resolve) => children[victim].once('exit', () => resolve()));
        children[victim].kill('SIGKILL');
        await victimExited;
        log.failure = null; // the victim's exit, expected
        writeFileSync(path.join(dir, 'release'), '');
        await log.until("the survivors' results", () => log.of('result').length === survivors.length);
        // At least the victim's restart. More only when a survivor, starved on a loaded machine,
        // missed heartbeats for TIMEOUT_MS and the run restarted around it (seen once, on Node 22
        // in a full e2e run: restarts 3, cause not captured); the output must be exact either way.
        // Why each instance restarted, shown when a count is off.
        const causes = log.of('restarting').map((m) => `instance ${m.instance}: ${m.message}`);
        for (const r of log.of('result')) {
          expect(r.status).toBe('finished');
          expect(r.restarts, causes.join('\n')).toBeGreaterThanOrEqual(1);
          expect(survivors).toContain(r.instance);
        }
        expectExactRunningSums(committedOnce(log), N, KEYS);
        for (const i of survivors) children[i].send({ cmd: 'exit' });
      },
      CASE_MS,
    );
  }
});
