// Unaligned checkpoint duration under full backpressure, per ring size, for one or more builds
// of weir (issue 14: a barrier that overtakes the ring should not wait behind it).
//
// The keyed-sum job (bench/jobs/keyed-sum-job.mjs, 100 k keys, parallelism 2: the keyed task is
// the bottleneck, so the source's rings stay full) with unaligned exactly-once checkpoints every
// 100 ms, and rings of 1 MiB and 256 KiB. Cases run interleaved, round by round; per case it
// prints the end-to-end duration of the mid-run checkpoints (the final one excluded) p50 / p99 /
// max over all rounds, and the records per second.
//
//   node bench/checkpoint/overtake.mjs [--rounds 3] [--n 3000000] [--aligned] ROOT...
//
// --aligned: aligned exactly-once checkpoints instead (same job, rings and interval): the barrier
// waits behind the ring in band, so the duration follows the ring's fill (issue 14's aligned goal).
//
// Each ROOT is a built weir checkout (its dist/ and bench/jobs/ are used), e.g. this one and a
// build of the parent commit, so before and after are measured in one run.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const argv = process.argv.slice(2);
let rounds = 3;
let n = 3_000_000;
let unaligned = true;
const roots = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--rounds') rounds = Number(argv[++i]);
  else if (argv[i] === '--aligned') unaligned = false;
  else if (argv[i] === '--n') n = Number(argv[++i]);
  else roots.push(path.resolve(argv[i]));
}
if (roots.length === 0) roots.push(path.resolve(import.meta.dirname, '../..'));

const RINGS = [1024 * 1024, 256 * 1024];
const cases = roots.flatMap((root) => RINGS.map((ringBytes) => ({ root, ringBytes })));
const weirs = new Map();
for (const root of roots) weirs.set(root, await import(pathToFileURL(path.join(root, 'dist/index.js')).href));

const quantile = (values, q) => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
};

async function runCase({ root, ringBytes }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'weir-overtake-'));
  try {
    const t0 = performance.now();
    const client = await weirs
      .get(root)
      .startJob(pathToFileURL(path.join(root, 'bench/jobs/keyed-sum-job.mjs')), {
        parallelism: 2,
        args: { n: String(n), keys: '100000' },
        checkpointing: { interval: 100, mode: 'exactly-once', unaligned, dir },
        channels: { ringBytes },
      });
    const result = await client.done;
    const ms = performance.now() - t0;
    const midRun = result.checkpoints.slice(0, -1).map((c) => c.durationMs);
    return { midRun, recordsPerSec: (n / ms) * 1000 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const samples = new Map(cases.map((c) => [c, { durations: [], rates: [] }]));
process.stdout.write(
  `${unaligned ? 'unaligned' : 'aligned'}, n = ${n}, ${rounds} rounds (+1 warm-up), ${new Date().toISOString()}, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}\n`,
);
for (let round = 0; round <= rounds; round++) {
  for (const c of cases) {
    const s = await runCase(c);
    process.stdout.write(
      `round ${round}${round === 0 ? ' (warm-up)' : ''} ${path.basename(c.root)} ${c.ringBytes / 1024} KiB: ${s.midRun.map((d) => Math.round(d)).join(' ')} ms\n`,
    );
    if (round === 0) continue; // warm-up
    samples.get(c).durations.push(...s.midRun);
    samples.get(c).rates.push(s.recordsPerSec);
  }
}
process.stdout.write(
  `done ${new Date().toISOString()}, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}\n`,
);
process.stdout.write(
  'build | ring | mid-run checkpoints | p50 ms | p99 ms | max ms | records/s (median of rounds)\n',
);
for (const c of cases) {
  const { durations, rates } = samples.get(c);
  process.stdout.write(
    `${path.basename(c.root)} | ${c.ringBytes / 1024} KiB | ${durations.length} | ${quantile(durations, 0.5).toFixed(1)} | ${quantile(durations, 0.99).toFixed(1)} | ${Math.max(...durations).toFixed(1)} | ${Math.round(quantile(rates, 0.5))}\n`,
  );
}
