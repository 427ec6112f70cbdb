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
// --alignment-timeout MS: with --aligned, `checkpointing.alignmentTimeout` (a checkpoint whose
// alignment lasts MS switches to unaligned; its late barriers are then pulled out of the rings).
// --debloat: `channels.debloat: true` (buffer debloating).
// --number: every case twice, the running sum undeclared and declared `{ type: 'number' }` (the
// heap backend's number slots), labelled `+number`.
//
// After the table it prints where the time went: per phase (trigger → first barrier, alignment,
// sync, waiting for channel state, serialization, chunk writes, acknowledgement) on each
// checkpoint's slowest subtask, the median and the slowest checkpoints (builds whose
// CompletedCheckpointStats carry the phases).
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
/** Aligned checkpoints with `checkpointing.alignmentTimeout` (ms); undefined: none. */
let alignmentTimeout;
let debloat = false;
let numberToo = false;
const roots = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--rounds') rounds = Number(argv[++i]);
  else if (argv[i] === '--aligned') unaligned = false;
  else if (argv[i] === '--n') n = Number(argv[++i]);
  else if (argv[i] === '--alignment-timeout') alignmentTimeout = Number(argv[++i]);
  else if (argv[i] === '--debloat') debloat = true;
  else if (argv[i] === '--number') numberToo = true;
  else roots.push(path.resolve(argv[i]));
}
if (roots.length === 0) roots.push(path.resolve(import.meta.dirname, '../..'));

const RINGS = [1024 * 1024, 256 * 1024];
const cases = roots.flatMap((root) =>
  (numberToo ? [false, true] : [false]).flatMap((number) =>
    RINGS.map((ringBytes) => ({ root, ringBytes, number })),
  ),
);
const label = (c) => `${path.basename(c.root)}${c.number ? '+number' : ''}`;
const weirs = new Map();
for (const root of roots) weirs.set(root, await import(pathToFileURL(path.join(root, 'dist/index.js')).href));

const quantile = (values, q) => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
};

const PHASES = [
  'startDelayMs',
  'alignmentDurationMs',
  'syncDurationMs',
  'channelStateWaitMs',
  'serializeMs',
  'writeMs',
  'ackDelayMs',
];
const PHASE_NAMES = ['start', 'align', 'sync', 'chState', 'serialize', 'write', 'ack'];

/**
 * The phases of a checkpoint's slowest subtask (the one whose phases add up to the most: the last
 * to acknowledge), plus `other` = the async part not in a named phase; null on a build whose
 * stats carry no phases.
 */
function criticalPath(cp) {
  let worst = null;
  let worstTotal = -1;
  for (const t of cp.subtasks) {
    if (t.startDelayMs === undefined) return null;
    const total =
      t.startDelayMs + t.alignmentDurationMs + t.syncDurationMs + t.asyncDurationMs + (t.ackDelayMs ?? 0);
    if (total > worstTotal) {
      worstTotal = total;
      worst = t;
    }
  }
  if (worst === null) return null;
  const p = Object.fromEntries(PHASES.map((k) => [k, worst[k] ?? 0]));
  p.other = worst.asyncDurationMs - p.channelStateWaitMs - p.serializeMs - p.writeMs;
  p.task = worst.task;
  p.durationMs = cp.durationMs;
  return p;
}

const fmtPhases = (p) =>
  p === null
    ? '(no phases in this build)'
    : `${PHASE_NAMES.map((name, i) => `${name} ${p[PHASES[i]].toFixed(1)}`).join(' · ')} · other ${p.other.toFixed(1)} (${p.task})`;

async function runCase({ root, ringBytes, number }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'weir-overtake-'));
  try {
    const t0 = performance.now();
    const client = await weirs
      .get(root)
      .startJob(pathToFileURL(path.join(root, 'bench/jobs/keyed-sum-job.mjs')), {
        parallelism: 2,
        args: { n: String(n), keys: '100000', ...(number ? { stateType: 'number' } : {}) },
        checkpointing: {
          interval: 100,
          mode: 'exactly-once',
          unaligned,
          dir,
          ...(alignmentTimeout !== undefined ? { alignmentTimeout } : {}),
        },
        channels: { ringBytes, ...(debloat ? { debloat: true } : {}) },
      });
    const result = await client.done;
    const ms = performance.now() - t0;
    const mid = result.checkpoints.slice(0, -1);
    return {
      midRun: mid.map((c) => c.durationMs),
      phases: mid.map(criticalPath),
      recordsPerSec: (n / ms) * 1000,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const samples = new Map(cases.map((c) => [c, { durations: [], rates: [], phases: [] }]));
process.stdout.write(
  `${unaligned ? 'unaligned' : 'aligned'}${alignmentTimeout !== undefined ? `, alignmentTimeout ${alignmentTimeout} ms` : ''}${debloat ? ', debloat' : ''}, n = ${n}, ${rounds} rounds (+1 warm-up), ${new Date().toISOString()}, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}\n`,
);
for (let round = 0; round <= rounds; round++) {
  for (const c of cases) {
    const s = await runCase(c);
    process.stdout.write(
      `round ${round}${round === 0 ? ' (warm-up)' : ''} ${label(c)} ${c.ringBytes / 1024} KiB: ${s.midRun.map((d) => Math.round(d)).join(' ')} ms\n`,
    );
    if (round === 0) continue; // warm-up
    samples.get(c).durations.push(...s.midRun);
    samples.get(c).rates.push(s.recordsPerSec);
    samples.get(c).phases.push(...s.phases);
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
    `${label(c)} | ${c.ringBytes / 1024} KiB | ${durations.length} | ${quantile(durations, 0.5).toFixed(1)} | ${quantile(durations, 0.99).toFixed(1)} | ${Math.max(...durations).toFixed(1)} | ${Math.round(quantile(rates, 0.5))}\n`,
  );
}
process.stdout.write(
  '\nwhere the time went, ms, on the critical subtask (the slowest to acknowledge): median per phase, then the slowest checkpoints\n',
);
for (const c of cases) {
  const phases = samples.get(c).phases.filter((p) => p !== null);
  const caseLabel = `${label(c)} ${c.ringBytes / 1024} KiB`;
  if (phases.length === 0) {
    process.stdout.write(`${caseLabel}: (no phases in this build)\n`);
    continue;
  }
  const median = Object.fromEntries(
    [...PHASES, 'other'].map((k) => [
      k,
      quantile(
        phases.map((p) => p[k]),
        0.5,
      ),
    ]),
  );
  median.task = 'median';
  process.stdout.write(`${caseLabel} median: ${fmtPhases(median)}\n`);
  for (const p of [...phases].sort((a, b) => b.durationMs - a.durationMs).slice(0, 3))
    process.stdout.write(`${caseLabel} ${p.durationMs.toFixed(0)} ms: ${fmtPhases(p)}\n`);
}
