/**
 * Async I/O benchmark: records/s of `mapAsync` against a synchronous `map` (same job, same run),
 * and against a slow service (a 1 ms timer per record) at several capacities, where the
 * expected ceiling is capacity / latency. Parallelism 1, no checkpointing, n records per case;
 * each figure is the median of `rounds` interleaved runs, wall time from `runJob` to its end (start-up
 * included, the same for every case). Prints a table, writes bench/results/async-io.json.
 *
 *   npm run build && node --import tsx bench/async-io/run.ts [--n N] [--rounds R]
 */

import { fileURLToPath } from 'node:url';
import { runJob } from '../../dist/index.js';
import {
  formatMachineInfo,
  formatRate,
  machineInfo,
  median,
  printTable,
  resultsPath,
  writeJson,
} from '../harness/index.js';

const argv = process.argv.slice(2);
const flag = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const n = flag('--n', 200_000);
const rounds = flag('--rounds', 3);
const JOB = fileURLToPath(new URL('../jobs/async-io-job.mjs', import.meta.url));

const cases: { name: string; n: number; args: Record<string, string> }[] = [
  { name: 'map (baseline)', n, args: { op: 'map' } },
  { name: 'mapAsync, resolved at once, ordered, capacity 100', n, args: { op: 'async', ordered: 'true' } },
  { name: 'mapAsync, resolved at once, unordered, capacity 100', n, args: { op: 'async', ordered: 'false' } },
  ...[10, 100, 1000].map((capacity) => ({
    name: `mapAsync, 1 ms timer, capacity ${capacity}`,
    n: Math.min(n, capacity * 1000), // ~1 s at the ceiling of capacity / 1 ms
    args: { op: 'async-sleep', latency: '1', capacity: String(capacity) },
  })),
];

// Rounds outer, cases inner (interleaved): a machine whose speed drifts affects every case alike.
const rates: number[][] = cases.map(() => []);
for (let r = 0; r < rounds; r++) {
  for (const [i, c] of cases.entries()) {
    const t0 = performance.now();
    await runJob(JOB, { parallelism: 1, args: { n: String(c.n), ...c.args } });
    rates[i].push(c.n / ((performance.now() - t0) / 1000));
  }
}
const results = cases.map((c, i) => ({ name: c.name, n: c.n, recordsPerSec: median(rates[i]) }));
const machine = machineInfo();
process.stdout.write(`${formatMachineInfo(machine)}\n`);
printTable(
  results.map((r) => ({
    case: r.name,
    records: r.n,
    'records/s (median, start-up included)': formatRate(r.recordsPerSec),
  })),
);
writeJson(resultsPath('async-io.json'), { machine, rounds, results });
