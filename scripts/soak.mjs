#!/usr/bin/env node
// Soak test for checkpointing and recovery, for a count of rounds or a duration. Each round:
//
// 1. `verifyJob` on scripts/soak-job.mjs under a seeded random configuration: parallelism 1-3,
//    exactly-once (3 in 4) or at-least-once, checkpoint interval 50/100/200 ms, 1-3 failures of
//    a random subset of verify's kinds (throw, exit, savepoint, rescale, sigkill), verify seed
//    from the soak's own seed. Exactly-once verifies the keyed running sums; at-least-once the
//    records themselves (stateless: state may count a replayed record twice under at-least-once).
//    verify compares the collect sink and the file sink with two failure-free runs (per-key
//    sequences too, under exactly-once); any verdict but `pass` stops the soak.
// 2. What verify does not inject, checked here: failures while a snapshot is taken (a throw in
//    the sink's pre-commit, 1-3 on consecutive attempts), run with `startJob`; exactly-once must
//    give exactly the failure-free output (every (key, count) once, final sums exact),
//    at-least-once must lose nothing.
//
//   npm run build && node scripts/soak.mjs [--rounds 30 | --duration 600] [--seed 1] [--n 6000]
//
// Prints one line per check and exits non-zero on the first wrong result, with the seed and the
// configuration (replay: the same --seed, and the round's verify seed in the line).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startJob, verifyJob } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string' },
    duration: { type: 'string' },
    seed: { type: 'string', default: String(Date.now() % 100000) },
    n: { type: 'string', default: '6000' },
  },
});
const positive = (name, v) => {
  const x = Number(v);
  if (!Number.isFinite(x) || x <= 0) {
    console.error(`soak: --${name} must be a positive number, got ${v}`);
    process.exit(2);
  }
  return x;
};
if (values.rounds !== undefined && values.duration !== undefined) {
  console.error('soak: give --rounds or --duration, not both');
  process.exit(2);
}
const rounds = values.duration === undefined ? positive('rounds', values.rounds ?? '30') : Infinity;
const deadline =
  values.duration === undefined ? Infinity : performance.now() + positive('duration', values.duration) * 1000;
const n = positive('n', values.n);
const keys = 10;
let seed = Number(values.seed) >>> 0 || 1;
const rand = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return (seed >>> 1) / 0x7fffffff;
};
const pickOne = (xs) => xs[Math.floor(rand() * xs.length)];
const job = new URL('./soak-job.mjs', import.meta.url);
const KINDS = ['throw', 'exit', 'savepoint', 'rescale', 'sigkill'];

const expected = new Map();
for (let x = 0; x < n; x++) {
  const e = expected.get(x % keys) ?? { sum: 0, count: 0 };
  e.sum += x;
  e.count++;
  expected.set(x % keys, e);
}

console.log(
  `soak: ${values.duration === undefined ? `${rounds} rounds` : `${values.duration} s`}, seed ${values.seed}, n ${n}`,
);
const t0 = performance.now();
let totalRestarts = 0;
let totalFired = 0;
let round = 0;
for (; round < rounds && performance.now() < deadline; round++) {
  await verifyRound(round);
  await snapshotFailureRound(round);
}
console.log(
  `soak passed: ${round} rounds, ${totalFired} verify failures fired, ${totalRestarts} recoveries, in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);

async function verifyRound(i) {
  const parallelism = pickOne([1, 2, 3]);
  const mode = rand() < 0.75 ? 'exactly-once' : 'at-least-once';
  const checkpointInterval = pickOne([50, 100, 200]);
  const kinds = KINDS.filter(() => rand() < 0.6);
  if (kinds.length === 0) kinds.push(pickOne(KINDS));
  const failures = 1 + Math.floor(rand() * 3);
  const verifySeed = Math.floor(rand() * 1e6);
  const label = `#${i} verify p=${parallelism} ${mode}${mode === 'at-least-once' ? ' (stateless)' : ''} every ${checkpointInterval} ms, ${failures} of ${kinds.join(',')}, verify seed ${verifySeed}`;
  const dir = mkdtempSync(join(tmpdir(), 'weir-soak-'));
  const started = performance.now();
  let report;
  try {
    report = await verifyJob(job, {
      parallelism,
      mode,
      checkpointInterval,
      kinds,
      failures,
      seed: verifySeed,
      key: 'key',
      args: {
        n: String(n),
        keys: String(keys),
        rate: '6000',
        out: join(dir, 'out'),
        // At-least-once may count a replayed record twice in state: only a stateless job passes.
        stateless: mode === 'at-least-once' ? '1' : '0',
      },
    });
  } catch (e) {
    console.error(`FAILED ${label}: ${e?.stack ?? e}`);
    process.exit(1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (report.verdict !== 'pass') {
    console.error(`WRONG ${label}: verdict ${report.verdict}\n${JSON.stringify(report.sinks, null, 2).slice(0, 4000)}`);
    process.exit(1);
  }
  const fired = report.failures.filter((f) => f.fired).length;
  totalFired += fired;
  totalRestarts += report.restarts;
  const duplicates = report.sinks.map((s) => s.difference?.duplicateCount ?? 0).reduce((a, b) => a + b, 0);
  console.log(
    `ok ${label}: ${fired} fired, ${report.restarts} restarts, ${report.checkpoints} checkpoints, ${duplicates} duplicates, ${Math.round(performance.now() - started)} ms`,
  );
}

async function snapshotFailureRound(i) {
  const parallelism = pickOne([1, 2, 3]);
  const mode = rand() < 0.75 ? 'exactly-once' : 'at-least-once';
  const interval = pickOne([50, 100, 200]);
  const failures = [];
  const count = 1 + Math.floor(rand() * 3);
  for (let a = 0; a < count; a++) {
    failures.push({
      attempt: a,
      subtask: Math.floor(rand() * 3),
      at: Math.round((0.2 + rand() * 0.7) * 100) / 100,
    });
  }
  const label = `#${i} snapshot failures p=${parallelism} ${mode} every ${interval} ms, ${JSON.stringify(failures)}`;
  const started = performance.now();
  let result;
  try {
    const client = await startJob(job, {
      parallelism,
      checkpointing: { interval, mode },
      restartStrategy: { type: 'fixed-delay', attempts: 5, delay: 0 },
      args: { n: String(n), keys: String(keys), failures: JSON.stringify(failures), rate: '6000' },
    });
    result = await client.done;
  } catch (e) {
    console.error(`FAILED ${label}: ${e?.stack ?? e}`);
    process.exit(1);
  }
  const sums = result.sinks.sums;
  const distinct = new Set(sums.map((s) => `${s.key}/${s.count}`));
  const finals = new Map();
  for (const s of sums) if (!finals.has(s.key) || s.count > finals.get(s.key).count) finals.set(s.key, s);
  const problems = [];
  if (mode === 'exactly-once') {
    // state and output exact: each (key, count) once, final sums exact
    if (distinct.size !== n) problems.push(`${distinct.size} distinct (key, count) of ${n}`);
    if (sums.length !== n) problems.push(`${sums.length} records, expected exactly ${n}`);
    for (const [key, e] of expected) {
      const f = finals.get(key);
      if (!f || f.sum !== e.sum || f.count !== e.count)
        problems.push(`key ${key}: got ${JSON.stringify(f)}, expected ${JSON.stringify(e)}`);
    }
  } else {
    // at-least-once: state may count a replayed record twice (no alignment), but nothing is
    // lost: every count 1..expected appears and the final count and sum are at least exact
    for (const [key, e] of expected) {
      for (let c = 1; c <= e.count; c++)
        if (!distinct.has(`${key}/${c}`)) problems.push(`key ${key}: count ${c} never emitted`);
      const f = finals.get(key);
      if (!f || f.sum < e.sum || f.count < e.count)
        problems.push(`key ${key}: got ${JSON.stringify(f)}, expected at least ${JSON.stringify(e)}`);
    }
  }
  if (problems.length > 0) {
    console.error(`WRONG ${label}:\n  ${problems.slice(0, 5).join('\n  ')}`);
    process.exit(1);
  }
  totalRestarts += result.restarts;
  console.log(
    `ok ${label}: ${result.restarts} restarts, ${result.checkpoints.length} checkpoints, ${sums.length - n} duplicates, ${Math.round(performance.now() - started)} ms`,
  );
}
