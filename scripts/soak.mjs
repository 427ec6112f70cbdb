#!/usr/bin/env node
// Soak test for checkpointing and recovery: many runs of scripts/soak-job.mjs, each with a seeded
// random schedule of failures (1–3 failures on consecutive attempts, random kind, subtask and
// point in the input), random parallelism and checkpoint interval. Exactly-once runs must give
// exactly the output of a failure-free run; at-least-once runs must lose nothing.
//
//   npm run build && node scripts/soak.mjs [--iterations 30] [--seed 1] [--n 6000]
//
// Prints one line per run and exits non-zero on the first wrong result (with the seed and the
// schedule, so it can be replayed).
import { parseArgs } from 'node:util';
import { startJob } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '30' },
    seed: { type: 'string', default: String(Date.now() % 100000) },
    n: { type: 'string', default: '6000' },
  },
});
const iterations = Number(values.iterations);
const n = Number(values.n);
const keys = 10;
let seed = Number(values.seed) >>> 0 || 1;
const rand = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return (seed >>> 1) / 0x7fffffff;
};
const pickOne = (xs) => xs[Math.floor(rand() * xs.length)];

const expected = new Map();
for (let x = 0; x < n; x++) {
  const e = expected.get(x % keys) ?? { sum: 0, count: 0 };
  e.sum += x;
  e.count++;
  expected.set(x % keys, e);
}

console.log(`soak: ${iterations} runs, seed ${values.seed}, n ${n}`);
const t0 = performance.now();
let totalRestarts = 0;
for (let i = 0; i < iterations; i++) {
  const parallelism = pickOne([1, 2, 3]);
  const mode = rand() < 0.75 ? 'exactly-once' : 'at-least-once';
  const interval = pickOne([50, 100, 200]);
  const failures = [];
  const count = 1 + Math.floor(rand() * 3);
  for (let a = 0; a < count; a++) {
    failures.push({
      attempt: a,
      subtask: Math.floor(rand() * 3),
      kind: pickOne(['throw', 'exit', 'snapshot']),
      at: Math.round((0.2 + rand() * 0.7) * 100) / 100,
    });
  }
  const label = `#${i} p=${parallelism} ${mode} every ${interval} ms, failures ${JSON.stringify(failures)}`;
  const started = performance.now();
  let result;
  try {
    const client = await startJob(new URL('./soak-job.mjs', import.meta.url), {
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
  const ms = Math.round(performance.now() - started);
  if (problems.length > 0) {
    console.error(`WRONG ${label}:\n  ${problems.slice(0, 5).join('\n  ')}`);
    process.exit(1);
  }
  totalRestarts += result.restarts;
  console.log(`ok ${label}: ${result.restarts} restarts, ${result.checkpoints.length} checkpoints, ${sums.length - n} duplicates, ${ms} ms`);
}
console.log(`soak passed: ${iterations} runs, ${totalRestarts} recoveries, in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
