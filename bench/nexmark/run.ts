/**
 * Nexmark suite: each query (bench/nexmark/queries.mjs) as a weir job over `sources.nexmark`,
 * one after another in this process, with exactly-once checkpoints on by default. Per query:
 * wall seconds from `startJob` to `done`, CPU seconds of the whole process over the same span
 * (`process.cpuUsage()` counts every thread: the main thread and all worker subtasks), cores =
 * CPU / wall, and throughput per core = events / CPU seconds — the figure nexmark publishes for
 * Flink (bench/nexmark/flink-per-core.ts), printed beside it with the ratio.
 *
 *   node --import tsx bench/nexmark/run.ts [--queries q0,q5] [--events N] [--parallelism P] [--checkpoint-interval MS] [--quick] [--json PATH]
 *
 * Conservative by construction: the figures include job start-up (worker threads, module
 * loading, JIT warm-up) and the source's event generation, as Flink's include its generator. The
 * start-up of an empty job is measured once and reported beside the table, so short runs can be
 * read. The load average before and after every query is recorded: on a shared machine the
 * per-core figure still counts only this process's CPU, but contention inflates it.
 */

import os from 'node:os';
import path from 'node:path';
import type { JobOptions } from 'weir';
import {
  formatMachineInfo,
  formatRate,
  formatRatio,
  machineInfo,
  printTable,
  resultsPath,
  writeJson,
} from '../harness/index.js';
import { commandLine, type SuiteReport } from '../harness/suite-report.js';
import { runWeirJob } from '../harness/weir-job-run.js';
import { FLINK_PER_CORE } from './flink-per-core.js';
import { NEXMARK_USAGE, parseNexmarkArgs } from './nexmark-args.js';

const JOB = new URL('./nexmark-job.mjs', import.meta.url);
/** The query names, from the plain-JS module the job loads (a variable specifier: it has no types). */
const QUERIES_MODULE: string = new URL('./queries.mjs', import.meta.url).href;
const { QUERY_NAMES } = (await import(QUERIES_MODULE)) as { QUERY_NAMES: string[] };

export interface NexmarkQueryResult {
  readonly query: string;
  readonly events: number;
  readonly wallSeconds: number;
  readonly cpuSeconds: number;
  readonly cores: number;
  /** events / cpuSeconds. */
  readonly throughputPerCore: number;
  /** Flink 1.13's published events/s/core, or null where nexmark publishes none. */
  readonly flinkPerCore: number | null;
  /** throughputPerCore / flinkPerCore. */
  readonly ratio: number | null;
  readonly checkpoints: number;
  /** `os.loadavg()[0]` before and after the run. */
  readonly load1: readonly [number, number];
}

interface Measured {
  readonly wallSeconds: number;
  readonly cpuSeconds: number;
  readonly checkpoints: number;
}

async function measure(query: string, events: number, options: JobOptions): Promise<Measured> {
  globalThis.gc?.();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const run = await runWeirJob(
    JOB,
    { ...options, args: { query, events: String(events) } },
    { reportSink: 'discard' },
  );
  const wallSeconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  if (run.result.status !== 'finished') throw new Error(`${query} ended ${run.result.status}`);
  return {
    wallSeconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    checkpoints: run.result.checkpoints.length,
  };
}

let args: ReturnType<typeof parseNexmarkArgs>;
try {
  args = parseNexmarkArgs(process.argv.slice(2), QUERY_NAMES);
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n${NEXMARK_USAGE}\n`);
  process.exit(2);
}
if (args.help) {
  process.stdout.write(`${NEXMARK_USAGE}\n`);
  process.exit(0);
}

const machine = machineInfo();
const checkpointing: JobOptions['checkpointing'] =
  args.checkpointInterval > 0 ? { interval: args.checkpointInterval, mode: 'exactly-once' } : undefined;
const options: JobOptions = { parallelism: args.parallelism, ...(checkpointing ? { checkpointing } : {}) };
const checkpointText = checkpointing ? `exactly-once every ${args.checkpointInterval} ms` : 'off';
process.stdout.write(
  `Nexmark on weir: ${args.events.toLocaleString('en')} events per query, parallelism ${args.parallelism}, checkpoints ${checkpointText}, heap state\n` +
    `machine: ${formatMachineInfo(machine)}\nload average (1/5/15 min) at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n\n`,
);

// An empty job: what start-up and shutdown alone cost (included in every figure below).
const startup = await measure('q0', 0, options);

const results: NexmarkQueryResult[] = [];
for (const query of args.queries) {
  const before = os.loadavg()[0];
  const m = await measure(query, args.events, options);
  const after = os.loadavg()[0];
  const throughputPerCore = args.events / m.cpuSeconds;
  const flinkPerCore = FLINK_PER_CORE[query] ?? null;
  const r: NexmarkQueryResult = {
    query,
    events: args.events,
    wallSeconds: m.wallSeconds,
    cpuSeconds: m.cpuSeconds,
    cores: m.cpuSeconds / m.wallSeconds,
    throughputPerCore,
    flinkPerCore,
    ratio: flinkPerCore === null ? null : throughputPerCore / flinkPerCore,
    checkpoints: m.checkpoints,
    load1: [before, after],
  };
  results.push(r);
  process.stdout.write(
    `${query}: ${formatRate(throughputPerCore)} events/s/core (${m.cpuSeconds.toFixed(2)} CPU s in ${m.wallSeconds.toFixed(2)} s, ${m.checkpoints} checkpoints)\n`,
  );
}

const rows = results.map((r) => ({
  query: r.query,
  events: r.events.toLocaleString('en'),
  'wall s': r.wallSeconds.toFixed(2),
  'CPU s': r.cpuSeconds.toFixed(2),
  cores: r.cores.toFixed(2),
  'events/s': formatRate(r.events / r.wallSeconds),
  'events/s/core': formatRate(r.throughputPerCore),
  'Flink 1.13 /core': r.flinkPerCore === null ? '-' : formatRate(r.flinkPerCore),
  'vs Flink': r.ratio === null ? '-' : formatRatio(r.ratio),
  'load 1m': `${r.load1[0].toFixed(1)}→${r.load1[1].toFixed(1)}`,
}));
process.stdout.write('\n');
printTable(rows);
const notes = [
  `${args.events.toLocaleString('en')} events per query from sources.nexmark (Beam's generator: 2 % people, 6 % auctions, 92 % bids), parallelism ${args.parallelism}, checkpoints ${checkpointText}, heap state backend, discarding sink.`,
  `CPU = process.cpuUsage() over the run (all threads); cores = CPU / wall; per core = events / CPU s. Start-up of an empty job, included in every row: ${startup.cpuSeconds.toFixed(2)} CPU s, ${startup.wallSeconds.toFixed(2)} s wall.`,
  "Flink 1.13: nexmark's published table (8 workers, RocksDB, exactly-once every 3 min, 100 M events).",
];
process.stdout.write(`\n${notes.join('\n')}\n`);

const jsonPath = args.json ?? resultsPath(args.quick ? 'nexmark-quick.json' : 'nexmark.json');
const report: SuiteReport = {
  suite: 'nexmark',
  title: 'Nexmark: throughput per core beside Flink 1.13',
  command: commandLine('bench/nexmark/run.ts'),
  machine: formatMachineInfo(machine),
  notes,
  tables: [{ title: 'per query', rows }],
  charts: [
    {
      title: 'weir events/s/core ÷ Flink 1.13 events/s/core',
      unit: '×',
      bars: results
        .filter((r) => r.ratio !== null)
        .map((r) => ({ label: r.query, value: r.ratio as number })),
      reference: { value: 1, label: 'Flink 1.13' },
    },
  ],
};
writeJson(jsonPath, {
  benchmark: 'nexmark',
  machine,
  parallelism: args.parallelism,
  checkpointing: checkpointing ?? null,
  startup,
  queries: results,
  report,
});
process.stdout.write(`\nwrote ${path.resolve(jsonPath)}\n`);
